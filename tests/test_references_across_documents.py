"""References between documents (clausewise/references.py: the parse after and before a designation, and
resolve()/Resolver at read time), on two small code-like PDFs that cite each other, ingested in either
order into a local directory and into an S3 bucket (moto's server on loopback): a reference into a
document ingested later resolves without re-ingesting the citing one; replacing the cited document
without the object, or deleting it, leaves the reference unresolved with the reason; the master list's
``referenced_by`` follows every change; follow-refs, ``clausewise show`` and ``GET /sections/{key}``
all read the same resolution."""

from __future__ import annotations

import logging
import re
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import query_runtime

from clausewise.keys import DocId
from clausewise.references import (
    NOT_FOUND,
    NOT_INGESTED,
    Resolver,
    named_sections,
    resolve,
    resolved_references,
    spot_references,
)
from clausewise.sample.text import Block, Cover, Expression, Heading, PageBreak, Paragraph, Table
from clausewise.sample.typeset import Writer
from clausewise.stores import Stores
from clausewise.stores.local import LocalBlobs

A, B = "CEN_EN1991-9-8", "CEN_EN1990"  # the citing part, and the basis of design it cites


# ---------------------------------------------------------------- two small codes that cite each other
def _table(caption: str) -> Table:
    return Table(
        caption=caption,
        header=["Action", "\u03c80", "\u03c82"],
        rows=[["Imposed loads, category A", "0,7", "0,3"], ["Leaf loads on sheds", "0,5", "0,0"]],
        col_widths=[190, 80, 80],
        footnotes=[],
    )


def _citing_part() -> list[Block]:
    """EN 1991-9-8: its clauses cite EN 1990 in every form the parser reads."""
    return [
        Heading("Section 1 General", gap_before=0),
        Heading("1.1 Scope"),
        Paragraph("(1) This Part gives leaf loads on sheds. It is used together with EN 1990."),
        Heading("1.2 Normative references"),
        Paragraph("(1) The basis of design is EN 1990. The terms of EN 1990, 1.2 apply."),
        Heading("Section 4 Leaf loads"),
        Heading("4.1 Characteristic values"),
        Paragraph(
            "(1) The combination factors for leaf loads are given in EN 1990, Annex A1, Table A1.1. "
            "The leaf load is combined with Expression (6.10) of EN 1990."
        ),
        Paragraph("(2) For the fundamental combination see EN 1990, 6.4.3.2 and EN 1990 A1.2.2(1)."),
        _table("Table 4.1 \u2014 Leaf loads on sheds"),
        Heading("4.2 Other values"),
        Paragraph("(1) The values of Table 4.1 may be reduced, see Annex A1 of EN 1990."),
    ]


def _basis(with_table: bool = True) -> list[Block]:
    """EN 1990: clause 6.4.3.2, Expression (6.10), Annex A1 with A1.2.2 and (unless left out) Table A1.1;
    it cites EN 1991-9-8 back."""
    annex: list[Block] = [
        PageBreak(),
        Heading("Annex A1", centred=True, gap_before=0),
        Heading("(normative)", centred=True, bold=False, gap_before=0),
        Heading("Application for sheds", centred=True, gap_before=0),
        Heading("A1.1 Field of application"),
        Paragraph("(1) This Annex gives rules for combinations of actions on sheds."),
        Heading("A1.2 Combinations of actions"),
        Heading("A1.2.1 General"),
        Paragraph("(1) The effects of actions that cannot occur at once are not combined."),
        Heading("A1.2.2 Values of factors"),
        Paragraph("(1) The values of the combination factors should be taken from the table below."),
    ]
    if with_table:
        annex.append(_table("Table A1.1 \u2014 Recommended values of \u03c8 factors for sheds"))
    return [
        Heading("Section 1 General", gap_before=0),
        Heading("1.1 Scope"),
        Paragraph("(1) This document gives the basis of design of sheds. Leaf loads are given in EN 1991-9-8."),
        Heading("1.2 Terms and definitions"),
        Paragraph("(1) For leaf loads see 4.1 of EN 1991-9-8 and EN 1991-9-8, Table 4.1."),
        Heading("Section 6 Verification"),
        Heading("6.1 General"),
        Paragraph("(1) Verifications are made for all relevant design situations."),
        Heading("6.3 Design values"),
        Paragraph("(1) Design values are derived from characteristic values."),
        Heading("6.4 Ultimate limit states"),
        Heading("6.4.1 General"),
        Paragraph("(1) The ultimate limit states are verified as given below."),
        Heading("6.4.3 Combinations of actions"),
        Paragraph("(1) Actions are combined as follows."),
        Heading("6.4.3.2 Fundamental combinations"),
        Paragraph("(1) The fundamental combination of actions is"),
        Expression("Ed = E{\u03b3G Gk + \u03b3Q Qk}", "(6.10)"),
        *annex,
    ]


def write_code(path: Path, designation: str, body: list[Block]) -> Path:
    """A small code-like PDF (cover, foreword, body) typeset as the sample is."""
    w = Writer(designation, 2025)
    w.cover(Cover("CLAUSEWISE TEST DOCUMENT", ["Test code", designation], "A fictional test document.", "Ref."))
    w.new_page()
    w.render([Heading("Foreword", gap_before=0), Paragraph(f"This document ({designation}:2025) is a test code.")])
    w.new_page()
    w.render(body)
    w.flush()
    w.doc.save(path, garbage=3, deflate=True)
    w.doc.close()
    return path


@pytest.fixture(scope="module")
def codes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("codes")
    return {
        "A": write_code(d / "EN_1991-9-8.pdf", "EN 1991-9-8", _citing_part()),
        "B": write_code(d / "EN_1990.pdf", "EN 1990", _basis()),
        "B without table": write_code(d / "EN_1990_2.pdf", "EN 1990", _basis(with_table=False)),
    }


# ---------------------------------------------------------------- backends
class S3Server:
    """moto's S3 server on 127.0.0.1 (PutObject made atomic, as on S3 and R2)."""

    def __init__(self) -> None:
        import moto.server
        from moto.s3.responses import S3Response

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._real_put, lock = S3Response.put_object, threading.Lock()
        real_put = self._real_put

        def atomic_put(response: Any) -> Any:
            with lock:
                return real_put(response)

        S3Response.put_object = atomic_put  # type: ignore[method-assign]
        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self._server = moto.server.ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()

    def stop(self) -> None:
        from moto.s3.responses import S3Response

        self._server.stop()
        S3Response.put_object = self._real_put  # type: ignore[method-assign]

    def stores(self) -> Stores:
        import boto3

        from clausewise.stores.r2 import R2Blobs

        bucket = f"cw-{uuid.uuid4().hex[:16]}"
        boto3.session.Session().client(
            "s3", endpoint_url=self.url, aws_access_key_id="k", aws_secret_access_key="s", region_name="us-east-1"
        ).create_bucket(Bucket=bucket)
        return Stores(R2Blobs(self.url, "k", "s", bucket))


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    pytest.importorskip("boto3")
    pytest.importorskip("moto.server", reason="moto[server] is a dev dependency")
    server = S3Server()
    yield server
    server.stop()


@pytest.fixture(params=["local", "s3"])
def system(request: pytest.FixtureRequest, tmp_path: Path, embedder: Any) -> Any:
    from clausewise.system import System

    if request.param == "local":
        stores = Stores(LocalBlobs(tmp_path / "store"))
    else:
        stores = request.getfixturevalue("s3").stores()
    return System(stores=stores, embedder=embedder, cache_dir=tmp_path / "cache")


def _ingest(system: Any, path: Path) -> str:
    from clausewise.graph.ingest import run_ingest

    out = run_ingest(system, path, overwrite=True)
    assert out["status"] == "ingested", out
    return str(out["doc_key"])


def _refs_from(stores: Stores, doc_key: str, cited: str) -> dict[str, tuple[str, Any]]:
    """raw -> (source section, reference) for every reference of ``doc_key`` into ``cited``."""
    out = {}
    for source, refs in stores.doc_table(doc_key, "references").items():
        for ref in refs:
            if ref["document"] == cited:
                out[" ".join(ref["raw"].split())] = (source, ref)
    return out


def _citing(stores: Stores, doc_key: str, cited: str) -> set[str]:
    """The sections of ``doc_key`` that cite ``cited``."""
    return {
        s for s, refs in stores.doc_table(doc_key, "references").items() if any(r["document"] == cited for r in refs)
    }


A_TO_B = {  # raw -> the most specific object named in EN 1990
    "EN 1990, Annex A1, Table A1.1": f"{B}_table_A1.1",
    "Expression (6.10) of EN 1990": f"{B}_expression_6.10",
    "EN 1990, 6.4.3.2": f"{B}_6.4.3.2",
    "EN 1990 A1.2.2(1)": f"{B}_A1.2.2",
    "Annex A1 of EN 1990": f"{B}_annex_A1",
    "EN 1990, 1.2": f"{B}_1.2",
    "EN 1990": B,
}
B_TO_A = {"4.1 of EN 1991-9-8": f"{A}_4.1", "EN 1991-9-8, Table 4.1": f"{A}_table_4.1", "EN 1991-9-8": A}


def _check_resolved(stores: Stores, citing: str, cited: str, expected: dict[str, str]) -> None:
    refs = _refs_from(stores, citing, cited)
    assert set(expected) <= set(refs), sorted(refs)
    resolver = Resolver(stores)
    for raw, target in expected.items():
        source, ref = refs[raw]
        assert ref["target"] == target, (raw, ref)
        found = resolver.resolve(ref, source)
        assert (found.key, found.document, found.reason) == (target, cited, None), (raw, found)
        assert target == cited or stores.lookup("sections", target) is not None


@pytest.mark.parametrize("order", ["citing first", "cited first"])
def test_references_follow_the_documents_whatever_the_order(system: Any, codes: dict[str, Path], order: str) -> None:
    stores: Stores = system.stores
    first, second = ("A", "B") if order == "citing first" else ("B", "A")
    assert _ingest(system, codes[first]) == {"A": A, "B": B}[first]
    # only one of the two is there: references into the other are not ingested, naming it
    source, ref = _refs_from(stores, {"A": A, "B": B}[first], {"A": B, "B": A}[first])[
        {"A": "EN 1990, Annex A1, Table A1.1", "B": "4.1 of EN 1991-9-8"}[first]
    ]
    assert resolve(ref, stores, source).reason == NOT_INGESTED
    _ingest(system, codes[second])
    # each kind of store keeps the soft match's token vectors and gives them back (a bucket's fetched)
    assert len(stores.token_vectors(list(stores.doc_table(A, "sections")))) > 5

    # both there, neither re-ingested: every reference resolves, in both directions
    _check_resolved(stores, A, B, A_TO_B)
    _check_resolved(stores, B, A, B_TO_A)
    docs = stores.documents()
    assert docs[A]["status"] == docs[B]["status"] == "ingested"
    a_sources, b_sources = _citing(stores, A, B), _citing(stores, B, A)
    assert set(docs[B]["referenced_by"]) == a_sources and set(docs[A]["referenced_by"]) == b_sources

    # EN 1990 replaced by an edition without Table A1.1: that reference alone is unresolved, with the reason
    _ingest(system, codes["B without table"])
    refs = _refs_from(stores, A, B)
    table_source, table_ref = refs["EN 1990, Annex A1, Table A1.1"]
    found = resolve(table_ref, stores, table_source)
    assert (found.key, found.document, found.reason) == (None, B, NOT_FOUND)
    _check_resolved(stores, A, B, {k: v for k, v in A_TO_B.items() if "Table A1.1" not in k})
    docs = stores.documents()
    assert set(docs[B]["referenced_by"]) == a_sources  # A's citations kept through the overwrite
    assert set(docs[A]["referenced_by"]) == b_sources

    # EN 1990 deleted: every reference into it is unresolved, "document not ingested"; it stays listed
    assert stores.delete_document(B)
    resolver = Resolver(stores)
    for raw in A_TO_B:
        source, ref = refs[raw]
        found = resolver.resolve(ref, source)
        assert (found.key, found.reason) == (None, NOT_INGESTED), raw
    docs = stores.documents()
    assert docs[B]["status"] == "referenced-only" and set(docs[B]["referenced_by"]) == a_sources
    assert docs[A]["referenced_by"] == []  # the deleted document no longer cites anything

    # ... and back: EN 1990 ingested again resolves them again, A still not re-ingested
    _ingest(system, codes["B"])
    _check_resolved(stores, A, B, A_TO_B)
    assert set(stores.documents()[A]["referenced_by"]) == b_sources


# ---------------------------------------------------------------- the readers use the same resolution
@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory, codes: dict[str, Path], embedder: Any) -> Any:
    """A local store holding A, then B (A never re-ingested)."""
    from clausewise.system import System

    d = tmp_path_factory.mktemp("both")
    system = System(stores=Stores(LocalBlobs(d / "store")), embedder=embedder, cache_dir=d / "cache")
    _ingest(system, codes["A"])
    _ingest(system, codes["B"])
    return system


def test_follow_refs_leads_into_the_document_ingested_later(both: Any) -> None:
    from clausewise.nodes.query.follow_refs import follow_refs

    key = f"{A}_4.1"
    state = {
        "extracts": {key: [{"text": "x", "claimed_refs": []}]},
        "candidates": {key: {"via": "vector", "hop": 0, "from_key": None}},
        "followed": {},
    }
    update = follow_refs(state, query_runtime(both))  # type: ignore[arg-type]
    cands = update["candidates"]
    assert cands[f"{B}_table_A1.1"]["ref"] == "EN 1990, Annex A1, Table A1.1"
    assert cands[f"{B}_table_A1.1"]["focus"] == "*"
    assert cands[f"{B}_expression_6.10"]["via"] == "reference"
    assert cands[f"{B}_A1.2.2"]["focus"] == "(1)"
    assert f"{B}_6.4.3.2" in cands
    assert not [r for r in update["unresolved_references"] if r.get("document") == B]


def test_a_question_names_sections_in_the_documents_it_names_or_in_each(both: Any) -> None:
    resolver = Resolver(both.stores)
    named = named_sections("Does 1.2(1) of EN 1990 matter here, and what does Table A1.1 give?", resolver)
    assert named == [
        {"raw": "1.2(1) of EN 1990", "focus": "(1)", "keys": [f"{B}_1.2"]},
        {"raw": "Table A1.1", "focus": "*", "keys": [f"{B}_table_A1.1"]},
    ]
    named = named_sections("Loads per EN 1990 clause 6.4.3.2(1) and Table 4.1 of EN 1991-9-8?", resolver)
    assert [(n["raw"], n["focus"], n["keys"]) for n in named] == [
        ("EN 1990 clause 6.4.3.2(1)", "(1)", [f"{B}_6.4.3.2"]),
        ("Table 4.1 of EN 1991-9-8", "*", [f"{A}_table_4.1"]),
    ]
    # no document named: a number both documents hold stands for both; one only EN 1991-9-8 holds, for it
    named = named_sections("What do clause 1.2 and Table 4.1 say for a shed with a 1.5 m overhang?", resolver)
    assert [(n["raw"], sorted(n["keys"])) for n in named] == [
        ("clause 1.2", sorted([f"{A}_1.2", f"{B}_1.2"])),
        ("Table 4.1", [f"{A}_table_4.1"]),
    ]
    # a bare number of two levels is a value, whatever clause has that number; and "Section 6-1.1" is
    # another document's numbering, not Section 6 of EN 1990
    assert named_sections("Is a factor of 1.2 on leaf loads enough for a shed 4.1 m high?", resolver) == []
    assert named_sections("What does Section 6-1.1 require for sheds?", resolver) == []


def test_the_keyword_step_names_one_section_for_each_number_the_question_gives(both: Any) -> None:
    """A chapter's bare heading stands for its first subclause; of a number both documents hold, the
    section nearest the question is named; each named section is a candidate with its focus."""
    from clausewise.nodes.query.keyword import keyword

    question = "What does Section 6 of EN 1990 require for sheds, and what does clause 1.2 say about leaf loads?"
    update = keyword({"search_question": question}, query_runtime(both))  # type: ignore[typeddict-item]
    named = update["named"]
    assert named[f"{B}_6.1"] == "*"
    assert len([key for key in named if key.endswith("_1.2")]) == 1
    assert all(update["candidates"][key]["via"] == "named" for key in named)


def test_the_keyword_step_finds_the_printed_forms_of_a_stem(both: Any) -> None:
    """The offline keywords are stems ("verifi" of "verified", which no code prints) and the index does
    not stem: each is searched as the prefix of its forms, so "verified" finds the clauses that print
    "Verifications" and "verified" (before, the stem was searched as a word and found nothing)."""
    from clausewise.nodes.query.keyword import keyword

    update = keyword({"search_question": "How is a shed verified?"}, query_runtime(both))  # type: ignore[typeddict-item]
    found = {key for key, c in update["candidates"].items() if c["via"] == "keyword"}
    assert {f"{B}_6.1", f"{B}_6.4.1"} <= found
    from clausewise.nodes.query.keyword import searched_forms

    assert searched_forms(["confer hall", "l*", "Table 5.2", "*"]) == ["confer* hall*", "l", "tabl* 5.2", ""]
    keywords = update["candidates"][f"{B}_6.1"]["keywords"]
    assert "verifi" in keywords  # the stem, which no section prints as a word
    assert not any(re.search(r"\bverifi\b", s["text"].lower()) for _, s in both.stores.iter_sections())


def test_show_and_get_section_resolve_now(both: Any, cli: Callable[..., Any], embedder: Any) -> None:
    import json

    from fastapi.testclient import TestClient

    from clausewise.server.app import create_app

    root = both.stores.blobs.local_root
    shown = json.loads(cli("show", f"{A}_4.1", "--store", root, "--json").stdout)
    by_raw = {" ".join(r["raw"].split()): r for r in shown["references"]}
    assert by_raw["EN 1990, Annex A1, Table A1.1"] == {
        "raw": "EN 1990, Annex A1, Table A1.1",
        "target": f"{B}_table_A1.1",
        "resolved": True,
        "kind": "table",
        "reason": None,
    }
    with TestClient(create_app(stores=Stores(LocalBlobs(root)), embedder=embedder, page_processes=1)) as client:
        got = client.get(f"/sections/{A}_4.1").json()
    refs = {" ".join(r["raw"].split()): r for r in got["references"]}
    assert refs["Expression (6.10) of EN 1990"]["resolved"] is True
    assert refs["Expression (6.10) of EN 1990"]["target"] == f"{B}_expression_6.10"


# ---------------------------------------------------------------- parsing, no store
@pytest.mark.parametrize(
    ("text", "raw", "target", "kind"),
    [
        ("see EN 1990, Annex A1, Table A1.1 for", "EN 1990, Annex A1, Table A1.1", "CEN_EN1990_table_A1.1", "table"),
        ("to EN 1990, 6.4.3.2 apply", "EN 1990, 6.4.3.2", "CEN_EN1990_6.4.3.2", "clause"),
        ("in EN 1991-1-1, Table A.1 apply", "EN 1991-1-1, Table A.1", "CEN_EN1991-1-1_table_A.1", "table"),
        (
            "use Expression (6.10) of EN 1990 here",
            "Expression (6.10) of EN 1990",
            "CEN_EN1990_expression_6.10",
            "expression",
        ),
        ("as in EN 1990 A1.2.2(1) where", "EN 1990 A1.2.2(1)", "CEN_EN1990_A1.2.2", "clause"),
        ("see 4.3 of EN 1991-1-4.", "4.3 of EN 1991-1-4", "CEN_EN1991-1-4_4.3", "clause"),
        ("with BS EN 1992-1-1 clause 3.1.2 taken", "BS EN 1992-1-1 clause 3.1.2", "CEN_EN1992-1-1_3.1.2", "clause"),
        ("with EN 1990,\n3.2.\n(2) Impact", "EN 1990,\n3.2", "CEN_EN1990_3.2", "clause"),
        ("see EN 1990 4.1.2 (7)P the", "EN 1990 4.1.2 (7)P", "CEN_EN1990_4.1.2", "clause"),
        ("(EN 1990, Table Al.1) and", "EN 1990, Table Al.1", "CEN_EN1990_table_A1.1", "table"),
        ("NOTE EN 1990 Annex D may be used.", "EN 1990 Annex D", "CEN_EN1990_annex_D", "annex"),
        (
            "with expression (6.11 b) of EN 1990).",
            "expression (6.11 b) of EN 1990",
            "CEN_EN1990_expression_6.11b",
            "expression",
        ),
        ("see Section 6 of EN 1990", "Section 6 of EN 1990", "CEN_EN1990_6", "clause"),
        ("given in 4.3 in EN 1990 is", "4.3 in EN 1990", "CEN_EN1990_4.3", "clause"),
        ("a factor 1.5 in EN 1990 is", "EN 1990", "CEN_EN1990", "document"),
        ("EN 1991-1-1\n6.2 Title", "EN 1991-1-1", "CEN_EN1991-1-1", "document"),
        ("EN 1990 and Table 5.1", "EN 1990", "CEN_EN1990", "document"),
    ],
)
def test_the_words_around_a_designation_name_the_most_specific_object(
    text: str, raw: str, target: str, kind: str
) -> None:
    refs = spot_references(DocId("CEN", "EN1991-9-9"), {"key": "CEN_EN1991-9-9_9.9", "text": text}, set())
    outside = [r for r in refs if r["document"] != "CEN_EN1991-9-9"]
    assert [(r["raw"], r["target"], r["kind"]) for r in outside] == [(raw, target, kind)]
    assert text[slice(*outside[0]["span"])] == raw


def test_objects_before_of_a_designation_are_all_in_it() -> None:
    refs = spot_references(
        DocId("CEN", "EN1991-9-9"),
        {"key": "CEN_EN1991-9-9_9.9", "text": "see Tables 5.1 and 5.2 of EN 1990 now"},
        set(),
    )
    assert [(r["raw"], r["target"]) for r in refs] == [
        ("Tables 5.1", "CEN_EN1990_table_5.1"),
        ("5.2 of EN 1990", "CEN_EN1990_table_5.2"),
    ]


def test_a_document_under_another_publisher_is_the_one_cited(tmp_path: Path) -> None:
    """EN 1990 ingested with --publisher BSI is the document "EN 1990" names; an OCR'd "Table A.I.I" is
    Table A1.1 there."""
    stores = Stores(LocalBlobs(tmp_path))
    writer = stores.new_generation("BSI_EN1990")
    sections = {f"BSI_EN1990_{c}": {"key": f"BSI_EN1990_{c}", "text": ""} for c in ("6.4.3.2", "table_A1.1")}
    writer.put_json("sections", sections)
    stores.update_documents(lambda d: {**d, "BSI_EN1990": {"key": "BSI_EN1990", "status": "ingested"}})
    writer.publish({"doc_key": "BSI_EN1990"})
    resolver = Resolver(stores)
    ref = {"raw": "EN 1990, 6.4.3.2", "target": "CEN_EN1990_6.4.3.2", "document": "CEN_EN1990", "kind": "clause"}
    assert resolver.resolve(ref).key == "BSI_EN1990_6.4.3.2"
    ocr = dict(ref, raw="table A.I.I of EN 1990", target="CEN_EN1990_table_A.1.1", kind="table")
    assert resolver.resolve(ocr).key == "BSI_EN1990_table_A1.1"
    [shown] = resolved_references([dict(ref, target="CEN_EN1990_9.9")], resolver, "CEN_EN1991-9-9_1.1")
    assert (shown["resolved"], shown["reason"], shown["document"]) == (False, NOT_FOUND, "BSI_EN1990")


def test_a_number_asked_without_its_document_is_read_in_the_document_the_question_is_about(both: Any) -> None:
    """Both codes have a clause 1.2; the question is on verifying ultimate limit states, EN 1990's topic.
    EN 1991-9-8's 1.2 (its normative references) speaks of the basis of design and its terms, and is
    nearer the question than EN 1990's own 1.2: the question's nearest chunks, not that one clause, say
    which document it asks about."""
    from collections import Counter

    from clausewise.keys import document_of
    from clausewise.nodes.query.deps import QueryDeps
    from clausewise.nodes.query.keyword import ASKED_NEAREST, in_asked_document

    deps = QueryDeps(both)
    question = (
        "When verifying ultimate limit states, how are design values derived from characteristic values, "
        "and what do the basis of design terms in clause 1.2 say?"
    )
    vector = deps.query_vector(question)
    near = deps.vector_index.similarity(vector, [f"{A}_1.2", f"{B}_1.2"])
    assert near[f"{A}_1.2"].score > near[f"{B}_1.2"].score  # the one clause's similarity points to EN 1991-9-8
    votes = Counter(document_of(h.key) for h in deps.vector_index.search(vector, k=ASKED_NEAREST))
    assert votes[B] > votes[A]
    assert in_asked_document(deps, question, [f"{A}_1.2", f"{B}_1.2"]) == f"{B}_1.2"
