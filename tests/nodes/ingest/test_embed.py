"""embed (nodes/ingest/embed.py): chunks carry the section heading and page and respect the size; a
scan's misread words are embedded as the words they stand for."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from clausewise.nodes.ingest.embed import make_chunks

DOC = "CEN_EN1991-9-9"


def test_chunks_carry_heading_page_and_respect_the_size(sample_store: SimpleNamespace) -> None:
    chunks = make_chunks(sample_store.sections, {}, 300)
    assert {c["key"] for c in chunks} == {k for k, s in sample_store.sections.items() if s["kind"] != "contents"}
    for c in chunks:
        section = sample_store.sections[c["key"]]
        assert c["text"].startswith(f"EN 1991-9-9 {section['section']}")
        assert c["page"] in section["pages"]
    five_one = [c for c in chunks if c["key"] == f"{DOC}_5.1"]
    assert [c["chunk"] for c in five_one] == list(range(len(five_one))) and len(five_one) > 1
    assert {c["page"] for c in five_one} == {5, 6}  # the chunk after the page break is on page 6


def test_a_scans_misread_words_are_searched_and_embedded_as_the_words_they_stand_for(
    tmp_path: Path, ingest_pdf: Callable[..., Any], embedder: Any
) -> None:
    """A text layer that reads "timber" as "tinlber" (as an OCR'd scan's does): ingest keeps the
    reading with the document's vocabulary, the keyword index and the vectors read the word as
    "timber", and the section still quotes what is printed."""
    from clausewise.sample.text import Cover, Heading, Paragraph
    from clausewise.sample.typeset import Writer
    from clausewise.stores import KeywordIndex, LocalVectorIndex
    from clausewise.tools.query_tasks import read_as

    w = Writer("EN 1991-9-5", 2025)
    w.cover(Cover("CLAUSEWISE TEST DOCUMENT", ["Test code", "EN 1991-9-5"], "A fictional test document.", "Ref."))
    w.new_page()
    w.render(
        [
            Heading("5 Self-weight", gap_before=0),
            Heading("5.1 Floors"),
            Paragraph("(1) The self-weight of tinlber floor joists should be taken from the supplier's data sheet."),
            Heading("5.2 Roofs"),
            Paragraph("(1) Snow on a flat roof should be taken as the ground snow load times 0,8."),
            Heading("5.3 Walls"),
            Paragraph("(1) Wind on a free-standing wall should be taken from the pressure coefficients."),
        ]
    )
    w.flush()
    pdf = tmp_path / "EN_1991-9-5_2025.pdf"
    w.doc.save(pdf)
    w.doc.close()
    stores, output = ingest_pdf(tmp_path / "store", pdf)
    assert output["status"] == "ingested", output
    doc_key = output["doc_key"]
    assert stores.doc_table(doc_key, "vocabulary")["readings"] == {"tinlber": "timber"}
    floors = f"{doc_key}_5.1"
    assert "tinlber floor joists" in stores.doc_table(doc_key, "sections")[floors]["text"]  # quoted as printed
    assert [key for key, _ in KeywordIndex(stores, tmp_path / "kw.sqlite").search(["timber"])] == [floors]
    hits = LocalVectorIndex(stores).search(embedder.embed_query("timber joists"), k=3)
    chunk = next(h for h in hits if h.key == floors)
    assert chunk.chunk["text"].count("tinlber") == 1  # the chunk as printed, its vector as read
    read = embedder.embed_documents([read_as(chunk.chunk["text"], {"tinlber": "timber"})])[0]
    assert float(np.dot(read, embedder.embed_query("timber joists"))) == pytest.approx(chunk.score, abs=1e-4)
