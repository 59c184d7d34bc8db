"""embed (nodes/ingest/embed.py): chunks carry the section heading and page and respect the size."""

from __future__ import annotations

from types import SimpleNamespace

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
