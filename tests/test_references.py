"""Reference spotting and resolution (clausewise/references.py): on the ingested sample (internal
references resolved, other codes listed as referenced-only until ingested) and on synthetic sections."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from clausewise.keys import DocId
from clausewise.references import Resolver, named_sections, spot_references
from clausewise.stores import Stores
from clausewise.stores.local import LocalBlobs

DOC = "CEN_EN1991-9-9"


@pytest.fixture(scope="module")
def store(sample_store: SimpleNamespace) -> Stores:
    return Stores(LocalBlobs(sample_store.dir))


def _refs(store: Stores, code: str) -> list[dict[str, Any]]:
    return store.lookup("references", f"{DOC}_{code}") or []


def _ref(store: Stores, code: str, raw: str) -> dict[str, Any]:
    found = [r for r in _refs(store, code) if r["raw"].strip() == raw]
    assert found, f"no reference {raw!r} from {code}: {[r['raw'] for r in _refs(store, code)]}"
    return found[0]


# ---------------------------------------------------------------- references on the sample
@pytest.mark.parametrize(
    ("source", "raw", "target", "kind"),
    [
        ("1.3", "Expression (5.1)", "expression_5.1", "expression"),
        ("5.1", "Expression (5.1)", "expression_5.1", "expression"),
        ("1.5", "Table 4.1", "table_4.1", "table"),
        ("1.5", "Figure 5.1", "figure_5.1", "figure"),
        ("5.1", "Table 5.1", "table_5.1", "table"),
        ("1.1", "Annex A", "annex_A", "annex"),
        ("4.1", "Annex A", "annex_A", "annex"),
        ("1.5", "5.2(3)", "5.2", "clause"),
        ("4.1", "5.1(3)", "5.1", "clause"),
        ("1.1", "4.1", "4.1", "clause"),
        ("A.2", "1.3", "1.3", "clause"),
        ("foreword", "Section 4", "4", "clause"),
    ],
)
def test_internal_references_resolve(store: Stores, source: str, raw: str, target: str, kind: str) -> None:
    ref = _ref(store, source, raw)
    assert ref["target"] == f"{DOC}_{target}"
    assert ref["kind"] == kind
    assert ref["document"] == DOC
    assert ref["resolved"] is True
    assert store.lookup("sections", ref["target"]) is not None


@pytest.mark.parametrize("code", ["4.2", "5.2"])
def test_the_following_table_is_the_next_table(store: Stores, code: str) -> None:
    ref = _ref(store, code, "the following table")
    assert ref["kind"] == "neighbour" and ref["resolved"] is True
    assert ref["target"] == store.lookup("sections", f"{DOC}_{code}")["next_table"]  # type: ignore[index]
    assert ref["target"] == {"4.2": f"{DOC}_table_4.1", "5.2": f"{DOC}_table_5.1"}[code]


def test_reference_spans_are_verbatim(store: Stores, sample_store: SimpleNamespace) -> None:
    for key, section in sample_store.sections.items():
        for ref in store.lookup("references", key) or []:
            start, end = ref["span"]
            assert section["text"][start:end] == ref["raw"], (key, ref)
            assert ref["target"] != key  # a section does not cite itself


@pytest.mark.parametrize(
    ("source", "raw", "target"),
    [
        ("1.1", "EN 1990", "CEN_EN1990"),
        ("1.1", "ISO 4355", "ISO_ISO4355"),
        ("1.1", "EN 1991-1-3", "CEN_EN1991-1-3"),
        ("5.1", "EN 1991-1-1", "CEN_EN1991-1-1"),
    ],
)
def test_other_documents_are_unresolved_until_ingested(store: Stores, source: str, raw: str, target: str) -> None:
    ref = _ref(store, source, raw)
    assert ref["target"] == target and ref["document"] == target and ref["kind"] == "document"
    assert ref["resolved"] is False
    assert ref["reason"] == "document not ingested"


@pytest.mark.parametrize("target", ["CEN_EN1990", "ISO_ISO4355", "CEN_EN1991-1-3", "CEN_EN1991-1-1"])
def test_referenced_documents_are_listed_as_referenced_only(store: Stores, target: str) -> None:
    entry = store.documents()[target]
    assert entry["status"] == "referenced-only"
    assert entry["referenced_by"] and all(k.startswith(DOC + "_") for k in entry["referenced_by"])
    assert entry["referenced_by"] == sorted(set(entry["referenced_by"]))
    assert f"{DOC}_1.2" in entry["referenced_by"]  # the normative references clause names all four
    assert (
        entry["code"]
        == {
            "CEN_EN1990": "EN 1990",
            "ISO_ISO4355": "ISO 4355",
            "CEN_EN1991-1-3": "EN 1991-1-3",
            "CEN_EN1991-1-1": "EN 1991-1-1",
        }[target]
    )


def test_the_documents_own_designation_is_not_a_reference(store: Stores) -> None:
    assert DOC not in [r["document"] for r in _refs(store, "foreword") if r["document"] != DOC]
    assert store.documents()[DOC]["referenced_by"] == []


def test_summary_counts_match_the_references_store(store: Stores, sample_store: SimpleNamespace) -> None:
    refs = [r for k in sample_store.sections for r in (store.lookup("references", k) or [])]
    summary = sample_store.output["summary"]
    assert summary["references"] == len(refs)
    assert summary["references_unresolved"] == sum(1 for r in refs if not r["resolved"])
    assert summary["references_internal"] == summary["references_resolved"]  # every internal reference resolved
    # the sample cites EN 1990 and ISO 4355, which are not in its store
    not_ingested = sum(1 for r in refs if not r["resolved"] and r.get("reason") == "document not ingested")
    assert summary["references_not_ingested"] == not_ingested > 0


# ---------------------------------------------------------------- references, synthetic
def _section(text: str, key: str = f"{DOC}_9.9", **extra: Any) -> dict[str, Any]:
    return {"key": key, "text": text, "kind": "clause", "title": "", **extra}


def test_spot_references_units() -> None:
    doc = DocId("CEN", "EN1991-9-9")
    known = {f"{DOC}_table_5.1", f"{DOC}_5.2", f"{DOC}_annex_A"}
    text = (
        "See EN 1990, 6.4.3.2 and Table 5.1 or Figure 5.2; the values given in 5.2(3) and in Annex B apply. "
        "For this document see EN 1991-9-9."
    )
    refs = spot_references(doc, _section(text), known)
    by_raw: dict[str, list[dict[str, Any]]] = {}
    for r in refs:
        by_raw.setdefault(r["raw"].strip(), []).append(r)
    assert by_raw["EN 1990, 6.4.3.2"][0]["target"] == "CEN_EN1990_6.4.3.2"
    assert by_raw["EN 1990, 6.4.3.2"][0]["document"] == "CEN_EN1990"
    assert by_raw["Table 5.1"][0]["target"] == f"{DOC}_table_5.1" and by_raw["Table 5.1"][0]["resolved"] is True
    assert by_raw["Figure 5.2"][0]["target"] == f"{DOC}_figure_5.2" and by_raw["Figure 5.2"][0]["resolved"] is False
    assert by_raw["5.2(3)"][0]["target"] == f"{DOC}_5.2" and by_raw["5.2(3)"][0]["resolved"] is True
    assert by_raw["Annex B"][0]["target"] == f"{DOC}_annex_B" and by_raw["Annex B"][0]["resolved"] is False
    assert not any(r["document"] == "CEN_EN1990" and r["target"] == f"{DOC}_6.4.3.2" for r in refs)
    assert "EN 1991-9-9" not in by_raw  # itself
    assert [r["span"][0] for r in refs] == sorted(r["span"][0] for r in refs)


def test_an_object_named_in_lower_case_is_a_reference_where_the_document_has_it() -> None:
    """Some codes print "taken from annex A", "given by expression (3.1)": those are references. A
    lower-case word whose number the document does not have ("sections 65", "tables 12" on a contents
    line) is not."""
    doc = DocId("CEN", "EN1991-9-9")
    known = {f"{DOC}_annex_A", f"{DOC}_annex_E", f"{DOC}_expression_3.1", f"{DOC}_table_E.5", f"{DOC}_figure_2.1"}
    text = (
        "T0 may be taken from annex A; a method is given in annex E. The net flux is given by expression (3.1), "
        "the growth rate in table E.5 and figure 2.1. Rectangular sections 65, tables 12."
    )
    refs = spot_references(doc, _section(text), known)
    assert [(r["raw"].strip(), r["target"], r["kind"]) for r in refs] == [
        ("annex A", f"{DOC}_annex_A", "annex"),
        ("annex E", f"{DOC}_annex_E", "annex"),
        ("expression (3.1)", f"{DOC}_expression_3.1", "expression"),
        ("table E.5", f"{DOC}_table_E.5", "table"),
        ("figure 2.1", f"{DOC}_figure_2.1", "figure"),
    ]


def test_an_appendix_is_referred_to_as_an_annex() -> None:
    """ "Appendix 1" (numbered, as HSE's guides number them) and "Appendix B" reach the annex of that
    code: ingest codes an appendix as an annex."""
    doc = DocId("HSE", "HSG150")
    known = {"HSE_HSG150_annex_1", "HSE_HSG150_annex_B"}
    text = "Appendix 1 contains an inspection form; the checklist of Appendix B and Appendices 3 apply."
    refs = spot_references(doc, _section(text, key="HSE_HSG150_139"), known)
    targets = {r["raw"].strip(): (r["target"], r["resolved"]) for r in refs}
    assert targets["Appendix 1"] == ("HSE_HSG150_annex_1", True)
    assert targets["Appendix B"] == ("HSE_HSG150_annex_B", True)
    assert targets["Appendices 3"] == ("HSE_HSG150_annex_3", False)


def test_a_table_cited_by_its_number_reaches_each_part_printed_under_it() -> None:
    """ "Table 4-1" where the code prints Tables 4-1(a) and 4-1(b), "Figure 6.2" where it prints Figures
    6.2a and 6.2c: the reference reaches each part; a clause number is never widened to its neighbours'."""
    doc = DocId("DOD", "UFC3-301-01")
    known = {
        "DOD_UFC3-301-01_table_4-1(a)",
        "DOD_UFC3-301-01_table_4-1(b)",
        "DOD_UFC3-301-01_table_4-10",
        "DOD_UFC3-301-01_figure_6.2a",
        "DOD_UFC3-301-01_figure_6.2c",
        "DOD_UFC3-301-01_7.4a",
    }
    text = "Use the objectives of Table 4-1 with Figure 6.2; see also 7.4 and Table 4-2."
    refs = spot_references(doc, _section(text, key="DOD_UFC3-301-01_4-2.2"), known)
    targets = [(r["raw"].strip(), r["target"].split("_", 2)[2], r["resolved"]) for r in refs]
    assert ("Table 4-1", "table_4-1(a)", True) in targets and ("Table 4-1", "table_4-1(b)", True) in targets
    assert ("Figure 6.2", "figure_6.2a", True) in targets and ("Figure 6.2", "figure_6.2c", True) in targets
    assert not [t for t in targets if t[1] in ("table_4-10", "7.4a")]
    assert ("Table 4-2", "table_4-2", False) in targets


def test_a_number_that_runs_on_into_more_digits_is_not_a_reference() -> None:
    """A contents line "Appendices 129" names a page, not Appendix 12; "Section 1617A" of a quoted code
    is not Section 16; a figure number before a scan's run of digits on the next line is the figure alone."""
    doc = DocId("HSE", "HSG150")
    known = {"HSE_HSG150_annex_12", "HSE_HSG150_16", "HSE_HSG150_figure_7.16", "HSE_HSG150_figure_7.17"}
    text = "Appendices 129\nmade by Section 1617A of the code"
    refs = spot_references(doc, _section(text, key="HSE_HSG150_1"), known)
    assert not [r for r in refs if r["target"] in ("HSE_HSG150_annex_12", "HSE_HSG150_16")], refs
    refs = spot_references(doc, _section("as shown in Figures 7.16 and 7.17.\n7777777777", key="HSE_HSG150_2"), known)
    assert [r["target"] for r in refs] == ["HSE_HSG150_figure_7.16", "HSE_HSG150_figure_7.17"]


def test_a_number_among_values_is_a_value_not_a_clause() -> None:
    """A table's or figure's body read into a clause is rows of values ("-0.5 -1.4 -1.5"): numbers that
    happen to be clause numbers there, or after "=", are values. A clause number alone on its line, in
    a list ("- 1.4(1)", "-1.5(2)") or after a cue, stays a reference."""
    doc = DocId("CEN", "EN1991-9-9")
    known = {f"{DOC}_1.4", f"{DOC}_1.5", f"{DOC}_7.6"}
    values = "surfacing 0.2 0.4 -2.0 -4.5 -0.5 -1.4 -0.5\n2.5 0.5 1.5 0.6 1.0 -7.6 -6.5\nwhere gamma = 1.5 for the case"
    assert spot_references(doc, _section(values), known) == []
    cited = "through:\n- 1.4(1)\n-1.5(2)\nThe rules of 7.6 apply, as given in 1.5 2 and 1.4."
    refs = spot_references(doc, _section(cited), known)
    assert [r["target"] for r in refs] == [f"{DOC}_1.4", f"{DOC}_1.5", f"{DOC}_7.6", f"{DOC}_1.5", f"{DOC}_1.4"]


@pytest.mark.parametrize(
    ("text", "raw"),
    [
        ("the values given in 5.2(3) apply", "5.2(3)"),
        ("as in 5.2 (3) above", "5.2 (3)"),
        ("according to 5.2(3)P the load", "5.2(3)P"),
        ("see 5.2(3)\nfor roofs", "5.2(3)"),
        # a paragraph number opening the next line is the citing clause's own next paragraph
        ("NOTE q is defined in 5.2\n(2) The wind pressure", "5.2"),
        # a clause in brackets with its paragraph ("only one of psi and an (6.3.1.2 (11))")
        ("only one of the factors (5.2 (3)) shall be applied", "5.2 (3)"),
        ("only one of the factors (5.2\n(3)) shall be applied", "5.2\n(3)"),
    ],
)
def test_a_clause_reference_is_kept_as_written(text: str, raw: str) -> None:
    """The words a clause reference claims are exactly the text at its span: the references node keeps
    only those, so a span that ran on over the space after "5.2(3)" lost the reference."""
    refs = spot_references(DocId("CEN", "EN1991-9-9"), _section(text), {f"{DOC}_5.2"})
    assert [(r["raw"], r["target"]) for r in refs] == [(raw, f"{DOC}_5.2")]
    assert all(text[r["span"][0] : r["span"][1]] == r["raw"] for r in refs)


def test_an_annex_clause_is_referred_to_by_its_number() -> None:
    """ "given in A.3", "see E.2.5", "B. 2 (3)" (a scan's spaces) and "A 1.3(2)" (clause 3 of annex A1)
    name clauses of annexes the document has, after a word that cites or with a paragraph named;
    "A 1.3(2)" is not clause 1.3, and an annex number among values or opening a heading is no reference."""
    known = {f"{DOC}_{c}" for c in ("A.3", "E.2.5", "B.2", "A1.3", "1.3", "A.2")}
    text = (
        "The procedure is given in A.3. Fire loads (see E.2.5) apply; the peak factor in B. 2 (3) is used.\n"
        "NOTE See also A 1.3(2).\nvalues A.2 3,5 and 4,0\nA.2 Terrain categories"
    )
    refs = spot_references(DocId("CEN", "EN1991-9-9"), _section(text), known)
    assert [(r["raw"], r["target"]) for r in refs] == [
        ("A.3", f"{DOC}_A.3"),
        ("E.2.5", f"{DOC}_E.2.5"),
        ("B. 2 (3)", f"{DOC}_B.2"),
        ("A 1.3(2)", f"{DOC}_A1.3"),
    ]


def test_an_annex_clause_whose_dot_a_scan_lost_is_referred_to() -> None:
    """ "given in B4(2)": a scan dropped the dot of B.4; read as clause B.4 with its paragraph where the
    document has B.4 and nothing numbered B4, never as a value or where Annex A1's clauses are A1.x."""
    known = {f"{DOC}_{c}" for c in ("B.4", "B.3", "A1.2", "A.1")}
    text = "are given in B4(2) and B3 (1)P. Type B4 sheets; see A1(2) of the annex."
    refs = spot_references(DocId("CEN", "EN1991-9-9"), _section(text), known)
    assert [(r["raw"], r["target"]) for r in refs] == [("B4(2)", f"{DOC}_B.4"), ("B3 (1)P", f"{DOC}_B.3")]


def test_a_number_a_scan_printed_with_letters_for_digits_is_read_where_one_reading_is_a_section() -> None:
    """'"key element" (see A.S)', "Figure 7.B", "defined in E.1.S.2.4", "expression (C.l)": a scan read
    8, 5 or 1 as a letter. Read where one digit reading names a section; where two do (A.5 and A.8 for
    "A.S"), the one whose title a word before it names; with no such word, or keys without titles, not
    at all (the rules before read what they can). A number whose letter is a real part stays as it was."""
    titles = {
        f"{DOC}_A.5": "Horizontal ties",
        f"{DOC}_A.8": "Key elements",
        f"{DOC}_figure_7.8": "Pressure coefficients",
        f"{DOC}_E.1.5.2.4": "Mode shape",
        f"{DOC}_expression_C.1": "Expression (C.1)",
        f"{DOC}_table_7.4a": "Duopitch roofs",
    }
    doc = DocId("CEN", "EN1991-9-9")

    def read(text: str, known: Any = titles) -> list[tuple[str, str | None]]:
        return [(r["raw"], r["target"]) for r in spot_references(doc, _section(text), known)]

    assert read('should be designed as a "key element" (see A.S).') == [("A.S", f"{DOC}_A.8")]
    assert read("with effective horizontal ties (see A.S).") == [("A.S", f"{DOC}_A.5")]
    assert read("Horizontal ties are required. See A.S.") == [("A.S", f"{DOC}_A.5")]  # "See" opening a sentence
    assert read("Reference is made in A.S.") == []  # A.5 or A.8: no word tells
    assert read('as a "key element" (see A.S).', set(titles)) == []  # no titles to tell them apart
    assert read("the zones are given in Figure 7.B.") == [("Figure 7.B", f"{DOC}_figure_7.8")]
    assert read("m is defined in E.1.S.2.4 (1)") == [("E.1.S.2.4", f"{DOC}_E.1.5.2.4")]
    assert read("determined using expression (C.l):") == [("expression (C.l)", f"{DOC}_expression_C.1")]
    assert read("given in Table 7.4a") == [("Table 7.4a", f"{DOC}_table_7.4a")]
    assert read("NOTE 1 Figure 7,28 may also be used", {**titles, f"{DOC}_figure_7.28": ""}) == [
        ("Figure 7,28", f"{DOC}_figure_7.28")
    ]
    assert read("given in 7,28 m", {**titles, f"{DOC}_7.28": ""}) == []  # a value, not clause 7.28
    assert read("see 10.S", {**titles, f"{DOC}_10.5": ""}) == [("10.S", f"{DOC}_10.5")]


def test_a_point_and_four_a_scan_read_as_one_letter_a_is_read_after_an_objects_name() -> None:
    """ "(see f.i. Table EA)", "Figure AA", "Table 7Aa and Table 7Ab": a scan read ".4" as "A". After a
    table's, figure's or expression's name it is read as .4 where the document has that section and none
    printed so; without the name ("see EA") or where no such section exists, it is not a reference."""
    known = {f"{DOC}_table_E.4": "Fire load densities", f"{DOC}_figure_A.4": "", f"{DOC}_table_7.4a": ""}
    known |= {f"{DOC}_table_7.4b": "", f"{DOC}_figure_CA": "Figure CA"}
    doc = DocId("CEN", "EN1991-9-9")

    def read(text: str) -> list[tuple[str, str | None]]:
        return [(r["raw"].strip(), r["target"]) for r in spot_references(doc, _section(text), known)]

    assert read("per unit floor area (see f.i. Table EA)") == [("Table EA", f"{DOC}_table_E.4")]
    assert read("are illustrated in Figure AA and") == [("Figure AA", f"{DOC}_figure_A.4")]
    assert read("values are given in Table 7Aa and Table 7Ab.") == [
        ("Table 7Aa", f"{DOC}_table_7.4a"),
        ("Table 7Ab", f"{DOC}_table_7.4b"),
    ]
    assert read("as given in EA and EB") == []  # no object's name before it
    assert read("see Table BA for the values") == []  # the document has no Table B.4
    assert read("see Figure CA for the values") == [("Figure CA", f"{DOC}_figure_CA")]  # printed so: as printed


def test_an_annex_to_another_document_is_that_documents() -> None:
    """ "Annex A2 to EN 1990" is EN 1990's annex, not this document's Annex A2 (which it has, on another
    subject); "Annex A 1 of this standard" stays this document's."""
    doc = DocId("CEN", "EN1991-9-9")
    known = {f"{DOC}_annex_A1", f"{DOC}_annex_A2"}
    text = "given in Annex A 1 of this standard for buildings, and in Annex A2 to EN 1990 for bridges."
    refs = spot_references(doc, _section(text), known)
    assert [(r["raw"].strip(), r["target"]) for r in refs] == [
        ("Annex A 1", f"{DOC}_annex_A1"),
        ("Annex A2 to EN 1990", "CEN_EN1990_annex_A2"),
    ]


def test_a_clauses_own_paragraphs_are_no_reference_out_of_it() -> None:
    """ "(see Table E.2 and clauses (4) and (5))" names paragraphs of the clause itself, not sections 4
    and 5; "clauses 4 and 5" names the sections."""
    known = {f"{DOC}_4", f"{DOC}_5", f"{DOC}_table_E.2"}
    refs = spot_references(DocId("CEN", "EN1991-9-9"), _section("(see Table E.2 and clauses (4) and (5))."), known)
    assert [r["target"] for r in refs] == [f"{DOC}_table_E.2"]
    refs = spot_references(DocId("CEN", "EN1991-9-9"), _section("see clauses 4 and 5"), known)
    assert [r["target"] for r in refs] == [f"{DOC}_4", f"{DOC}_5"]


def test_a_bracketed_number_is_a_clause_only_with_three_levels_or_a_paragraph() -> None:
    """ "(6.10)" numbers an expression; "(4.2.3)" and "(4.5 (2))" in brackets name clauses."""
    known = {f"{DOC}_4.5", f"{DOC}_4.2.3"}
    found = spot_references(DocId("CEN", "EN1991-9-9"), _section("ratio (4.5) and (4.2.3), see (4.5 (2))."), known)
    assert [(r["raw"], r["target"]) for r in found] == [("4.2.3", f"{DOC}_4.2.3"), ("4.5 (2)", f"{DOC}_4.5")]


@pytest.mark.parametrize(
    ("text", "targets"),
    [
        ("see Tables 5.1 and 5.2", {"table_5.1", "table_5.2"}),
        ("Annexes A and B apply", {"annex_A", "annex_B"}),
        ("Figures 5.1, 5.2 and 5.3", {"figure_5.1", "figure_5.2", "figure_5.3"}),
    ],
)
def test_every_number_of_a_multiple_reference_is_a_reference(text: str, targets: set[str]) -> None:
    refs = spot_references(DocId("CEN", "EN1991-9-9"), _section(text), set())
    assert {r["target"] for r in refs} == {f"{DOC}_{t}" for t in targets}


def test_a_range_names_the_members_in_between() -> None:
    """ "Tables 7.1 to 7.5" names Tables 7.2 to 7.4 too (those the document has), "clauses 4.3 to 4.7"
    the clauses between; "Tables 5.1 and 5.2" names no others."""
    known = {f"{DOC}_table_7.{n}" for n in range(1, 6) if n != 3} | {f"{DOC}_4.{n}" for n in range(1, 9)}
    known |= {f"{DOC}_table_5.{n}" for n in range(1, 4)}
    text = "The values in Tables 7.1 to 7.5 apply; see clauses 4.3 to 4.7 and Tables 5.1 and 5.3."
    targets = [
        r["target"].removeprefix(f"{DOC}_") for r in spot_references(DocId("CEN", "EN1991-9-9"), _section(text), known)
    ]
    assert sorted(targets) == sorted(
        [
            "table_7.1",
            "table_7.5",
            "table_7.2",
            "table_7.4",
            "4.3",
            "4.7",
            "4.4",
            "4.5",
            "4.6",
            "table_5.1",
            "table_5.3",
        ]
    )


def test_neighbour_references() -> None:
    doc = DocId("CEN", "EN1991-9-9")
    section = _section(
        "As given above, the values in the following figure apply.",
        previous=f"{DOC}_9.8",
        next=f"{DOC}_9.10",
        next_figure=f"{DOC}_figure_9.1",
    )
    refs = {r["raw"]: r["target"] for r in spot_references(doc, section, set())}
    assert refs == {"given above": f"{DOC}_9.8", "the following figure": f"{DOC}_figure_9.1"}


def test_own_designation_is_not_a_reference_under_a_publisher_override() -> None:
    doc = DocId("BSI", "EN1991-9-9")
    refs = spot_references(
        doc, _section("This document (EN 1991-9-9:2025) is a sample.", key="BSI_EN1991-9-9_fw"), set()
    )
    assert [r for r in refs if r["kind"] == "document"] == []


def test_wide_numbers_resolve_where_the_document_has_them() -> None:
    """Numbers with a suffix or a chapter hyphen (Table A1.2(B), Table 2-1, Figure C-1, paragraph
    2-1.1) and quoted codes' sections (1705.13) resolve to their own entries; the usual forms are
    read as before."""
    doc = DocId("DOD", "UFC3-301-01")
    known = {
        f"DOD_UFC3-301-01_{code}"
        for code in ("table_2-1", "figure_C-1", "table_A1.2(B)", "2-1.1", "1705.13", "table_7.3a", "table_5.1")
    }
    text = (
        "See Table 2-1 and Figure C-1. Use Table A1.2(B), paragraph 2-1.1 and Section 1705.13; "
        "Table 7.3a and Table 5.1 apply; Table 3-4 is not here."
    )
    refs = spot_references(doc, {"key": "DOD_UFC3-301-01_x", "text": text}, known)
    found = {r["raw"].strip(): (r["target"].split("_", 2)[2], r["resolved"]) for r in refs}
    assert found["Table 2-1"] == ("table_2-1", True)
    assert found["Figure C-1"] == ("figure_C-1", True)
    assert found["Table A1.2(B)"] == ("table_A1.2(B)", True)
    assert found["paragraph 2-1.1"] == ("2-1.1", True)
    assert found["Section 1705.13"] == ("1705.13", True)
    assert found["Table 7.3a"] == ("table_7.3a", True)
    assert found["Table 5.1"] == ("table_5.1", True)
    assert found["Table 3-4"] == ("table_3-4", False)  # named, not in the document
    broken = spot_references(doc, {"key": "DOD_UFC3-301-01_x", "text": "as given in Table 2-\n1 above"}, known)
    assert [r["target"] for r in broken] == ["DOD_UFC3-301-01_table_2-1"]  # the hyphen ended a line
    quoted = spot_references(doc, {"key": "DOD_UFC3-301-01_x", "text": "per Section 1603 of the IBC"}, known)
    assert quoted == []  # not a truncated "Section 16"


def test_a_list_of_hyphen_numbers_names_each_and_no_clause_of_their_parts() -> None:
    """ "Tables C-1, C-2, and C-3" names the three tables, not a table "C" and clause 2; a quoted code's
    "Table 13.6-1" or "Sections B-5.1 and B-5.2" of the document's own are read whole: the "-1" after a
    number another reading took is no clause 1."""
    doc = DocId("DOD", "UFC3-301-01")
    known = {f"DOD_UFC3-301-01_{c}" for c in ("table_C-1", "table_C-2", "table_C-3", "1", "2", "B-5.1", "B-5.2")}
    text = (
        "Tables C-1, C-2, and C-3 may be used; see ASCE 7-16 Table 13.6-1 and ASCE 7-22 Equation 13.3-1.\n"
        "The requirements of Sections B-5.1 and B-5.2 must be satisfied."
    )
    refs = spot_references(doc, _section(text, key="DOD_UFC3-301-01_C-3.1"), known)
    internal = [r["target"].split("_", 2)[2] for r in refs if r["document"] == "DOD_UFC3-301-01"]
    assert internal == ["table_C-1", "table_C-2", "table_C-3", "B-5.1", "B-5.2"]


def test_hyphens_stay_ranges_where_the_document_has_no_hyphen_numbers() -> None:
    doc = DocId("CEN", "EN1991-1-3")
    known = {"CEN_EN1991-1-3_table_5.1", "CEN_EN1991-1-3_table_5.2"}
    refs = spot_references(doc, {"key": "CEN_EN1991-1-3_x", "text": "see Tables 5.1-5.2"}, known)
    assert {r["target"] for r in refs} == known


def test_numbered_paragraphs_are_referenced_where_the_document_has_them() -> None:
    """In a document whose sections are numbered paragraphs, "see paragraph 46" names paragraph 46 and
    "paragraphs 580-597" each of the run; in a code with a handful of top-level clauses, "paragraph 4" is
    not taken for clause 4."""
    doc = DocId("HSE", "HSG150")
    known = {f"HSE_HSG150_{n}" for n in range(1, 700)}
    text = "Plan the work (see paragraph 46); emergency procedures are in paragraphs 580-597, not paragraph 900."
    refs = spot_references(doc, {"key": "HSE_HSG150_12", "text": text}, known)
    assert [(r["raw"], r["target"], r["resolved"]) for r in refs] == [
        ("paragraph 46", "HSE_HSG150_46", True),
        *[("paragraphs 580-597", f"HSE_HSG150_{n}", True) for n in range(580, 598)],
    ]
    # a run broken at the end of a printed line, and one with an en dash
    text = "For the inspections see paragraphs 131-\n139; for the records paragraphs 612–615."
    refs = spot_references(doc, {"key": "HSE_HSG150_167", "text": text}, known)
    assert [r["target"] for r in refs] == [f"HSE_HSG150_{n}" for n in [*range(131, 140), *range(612, 616)]]
    code = DocId("CEN", "EN1991-1-1")
    clauses = {f"CEN_EN1991-1-1_{n}" for n in range(1, 8)}
    refs = spot_references(code, {"key": "CEN_EN1991-1-1_x", "text": "as stated in paragraph 4 above"}, clauses)
    assert [r["target"] for r in refs] == []


def test_a_question_names_a_numbered_paragraph_in_the_document_that_has_them() -> None:
    """Read as if it stood in each document, "paragraph 46" names the numbered paragraph of the one
    document numbered that way, and "Table 4.1" the table of the one that has it."""
    tables = {
        "HSE_HSG150": {f"HSE_HSG150_{n}": {} for n in range(1, 60)},
        "CEN_EN1991-1-1": {"CEN_EN1991-1-1_4.1": {}, "CEN_EN1991-1-1_table_4.1": {}},
    }
    stores = SimpleNamespace(
        visible_documents=lambda: {d: {"generation": "g"} for d in tables},
        manifest=lambda d: {"generation": "g"} if d in tables else None,
        doc_table=lambda d, table: tables[d],
    )
    named = named_sections("Does paragraph 46 apply to my site, and what does Table 4.1 say?", Resolver(stores))  # type: ignore[arg-type]
    assert named == [
        {"raw": "paragraph 46", "focus": "*", "keys": ["HSE_HSG150_46"]},
        {"raw": "Table 4.1", "focus": "*", "keys": ["CEN_EN1991-1-1_table_4.1"]},
    ]


def test_a_section_named_by_its_title_is_a_reference_to_it() -> None:
    """Guides name sections by title: "(see Inspecting surfaces and fixtures)", "refer 'Critical
    lighting' in this guide". A title quoted, or printed after "see"/"refer to"/"entitled", reaches the
    first section of that title; a title that runs on into a longer name ("see Confined Spaces
    Regulations 1997"), one in lower case after a cue, and a plain title ("General") are no reference."""
    doc = DocId("MBIE", "Guide")
    known = {
        "MBIE_Guide_inspecting-surfaces": "Inspecting surfaces and fixtures",
        "MBIE_Guide_critical-lighting": "Critical lighting",
        "MBIE_Guide_critical-lighting-page-13": "Critical lighting (page 13)",
        "MBIE_Guide_3.3": "Concrete masonry",
        "MBIE_Guide_confined": "Confined spaces",
        "MBIE_Guide_general": "General",
    }
    text = (
        "Cracks seen from the normal viewing position (see Inspecting surfaces and fixtures) are defects. "
        "Lighting: refer ‘Critical lighting’ in this guide, and 'concrete masonry'. Under the Confined "
        "Spaces Regulations, see Confined Spaces Regulations 1997; see confined spaces; see General."
    )
    refs = spot_references(doc, _section(text, key="MBIE_Guide_2.2"), known)
    assert [(r["raw"], r["target"], r["resolved"]) for r in refs] == [
        ("Inspecting surfaces and fixtures", "MBIE_Guide_inspecting-surfaces", True),
        ("‘Critical lighting’", "MBIE_Guide_critical-lighting", True),
        ("'concrete masonry'", "MBIE_Guide_3.3", True),
    ]
    assert all(text[r["span"][0] : r["span"][1]] == r["raw"] for r in refs)
    # a section does not refer to itself by its own title; a set of keys alone (no titles) reads none
    own = spot_references(doc, _section(text, key="MBIE_Guide_inspecting-surfaces"), known)
    assert [r["target"] for r in own] == ["MBIE_Guide_critical-lighting", "MBIE_Guide_3.3"]
    assert not spot_references(doc, _section(text), set(known))
