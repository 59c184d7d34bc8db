"""Sections of both sample variants ingested through the graph (nodes/ingest/merge_sections.py): keys,
parents, reading order, front matter, notes, pages, annex status; plus the parser on synthetic pages."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

import pytest

from clausewise.keys import DocId
from clausewise.nodes.ingest.merge_sections import build_sections, page_warnings, plausible_next
from clausewise.stores import Stores
from clausewise.stores.local import LocalBlobs

EXPECTED_CODES = [
    "1",
    "1.1",
    "1.2",
    "1.3",
    "1.4",
    "1.4.1",
    "1.4.2",
    "1.4.3",
    "1.5",
    "4",
    "4.1",
    "4.2",
    "table_4.1",
    "5",
    "5.1",
    "expression_5.1",
    "5.2",
    "table_5.1",
    "5.3",
    "5.3.1",
    "5.3.2",
    "figure_5.1",
    "annex_A",
    "A.1",
    "A.2",
]


def _s(ingested: SimpleNamespace, code: str) -> dict[str, Any]:
    return ingested.sections[f"{ingested.doc_key}_{code}"]  # type: ignore[no-any-return]


def test_document_identity(ingested: SimpleNamespace) -> None:
    assert ingested.doc_key == "CEN_EN1991-9-9"
    docs = Stores(LocalBlobs(ingested.dir)).documents()
    entry = docs["CEN_EN1991-9-9"]
    assert entry["status"] == "ingested"
    assert (entry["publisher"], entry["code"], entry["edition"], entry["pages"]) == ("CEN", "EN 1991-9-9", "2025", 8)
    assert entry["file"] == ingested.pdf.name


def test_expected_keys_exist(ingested: SimpleNamespace) -> None:
    keys = set(ingested.sections)
    missing = [c for c in EXPECTED_CODES if f"{ingested.doc_key}_{c}" not in keys]
    assert not missing


def test_body_sections_in_reading_order(ingested: SimpleNamespace) -> None:
    prefix = ingested.doc_key + "_"
    body = [
        k.removeprefix(prefix) for k, s in ingested.sections.items() if s["kind"] not in ("front", "contents", "cover")
    ]
    assert body == EXPECTED_CODES


def test_kinds_and_counts(ingested: SimpleNamespace) -> None:
    kinds = {code: _s(ingested, code)["kind"] for code in EXPECTED_CODES}
    assert kinds["table_4.1"] == kinds["table_5.1"] == "table"
    assert kinds["figure_5.1"] == "figure"
    assert kinds["expression_5.1"] == "expression"
    assert kinds["annex_A"] == "annex"
    assert kinds["5.3.2"] == kinds["A.1"] == "clause"
    counts = ingested.output["summary"]
    assert (counts["clauses"], counts["annexes"], counts["tables"], counts["figures"], counts["expressions"]) == (
        20,
        1,
        2,
        1,
        1,
    )
    assert counts["images"] == 3
    assert counts["pages"] == 8 and counts["pages_without_text"] == []


@pytest.mark.parametrize(
    ("code", "parent"),
    [
        ("1", None),
        ("1.1", "1"),
        ("1.4.2", "1.4"),
        ("5.3", "5"),
        ("5.3.2", "5.3"),
        ("annex_A", None),
        ("A.1", "annex_A"),
        ("A.2", "annex_A"),
        ("table_4.1", "4.2"),
        ("table_5.1", "5.2"),
        ("figure_5.1", "5.3.2"),
        ("expression_5.1", "5.1"),
    ],
)
def test_parents(ingested: SimpleNamespace, code: str, parent: str | None) -> None:
    expected = f"{ingested.doc_key}_{parent}" if parent else None
    assert _s(ingested, code)["parent"] == expected


def test_every_parent_exists(ingested: SimpleNamespace) -> None:
    for key, s in ingested.sections.items():
        assert s["parent"] is None or s["parent"] in ingested.sections, key


def test_previous_next_chain_is_consistent(ingested: SimpleNamespace) -> None:
    keys = list(ingested.sections)
    first = [k for k, s in ingested.sections.items() if s["previous"] is None]
    last = [k for k, s in ingested.sections.items() if s["next"] is None]
    assert first == [keys[0]] and last == [keys[-1]]
    walked, key = [], keys[0]
    while key is not None:
        walked.append(key)
        nxt = ingested.sections[key]["next"]
        if nxt is not None:
            assert ingested.sections[nxt]["previous"] == key
        key = nxt
    assert walked == keys  # one chain through every section, no cycle, no gap


def test_front_matter_does_not_swallow_clause_1(ingested: SimpleNamespace) -> None:
    fronts = {k: s for k, s in ingested.sections.items() if s["kind"] == "front"}
    foreword = fronts[f"{ingested.doc_key}_foreword"]
    assert foreword["title"] == "Foreword" and foreword["pages"] == [2]
    assert f"{ingested.doc_key}_national-annex-for-en-1991-9-9" in fronts
    for s in fronts.values():
        assert "1.1 Scope" not in s["text"] and "Section 1 General" not in s["text"]
        assert max(s["pages"]) <= 2
    clause1 = _s(ingested, "1")
    assert clause1["title"] == "General" and clause1["pages"] == [3]
    assert _s(ingested, "1.1")["text"].startswith("1.1 Scope\n(1) This Part gives guidance")
    # everything before clause 1 is front matter
    keys = list(ingested.sections)
    assert all(ingested.sections[k]["kind"] in ("front", "cover") for k in keys[: keys.index(f"{ingested.doc_key}_1")])


def test_clause_text_stops_at_the_next_heading(ingested: SimpleNamespace) -> None:
    text = _s(ingested, "4.1")["text"]
    assert text.startswith("4.1 Characteristic values")
    assert "4.2 Other representative values" not in text
    assert "(4) Wet leaves weigh considerably more" in text
    assert _s(ingested, "5.3")["text"] == "5.3 Shape coefficients"


def test_notes_stay_inside_their_clause(ingested: SimpleNamespace) -> None:
    assert (
        "NOTE: The National Annex may give a different value. The recommended value is 0,5."
        in _s(ingested, "4.1")["text"]
    )
    text = _s(ingested, "5.3.2")["text"]
    assert "NOTE 1: The values of \u03bc given in Figure 5.1 apply to clean roof coverings." in text
    assert "NOTE 2: For roofs with moss or rough coverings" in text
    assert "NOTE 1: The National Annex may decide whether this Annex may be used." in _s(ingested, "A.1")["text"]
    assert not any("note" in k.lower().rsplit("_", 1)[-1] for k in ingested.sections)
    assert "NOTE" not in _s(ingested, "figure_5.1")["text"]


def test_text_after_a_figure_continues_its_clause(ingested: SimpleNamespace) -> None:
    text = _s(ingested, "5.3.2")["text"]
    assert (
        text.index("(1) For flat and monopitch roofs")
        < text.index("Figure 5.1 \u2014")
        < text.index("(2) For a pitch between 30\u00b0 and 60\u00b0")
    )


@pytest.mark.parametrize(
    ("code", "pages"),
    [
        ("1", [3]),
        ("1.1", [3]),
        ("1.4.2", [4]),
        ("4.1", [5]),
        ("table_4.1", [5]),
        ("5.1", [5, 6]),
        ("expression_5.1", [5]),
        ("5.2", [6]),
        ("table_5.1", [6]),
        ("5.3.2", [6, 7]),
        ("figure_5.1", [7]),
        ("annex_A", [8]),
        ("A.1", [8]),
        ("A.2", [8]),
    ],
)
def test_pages(ingested: SimpleNamespace, code: str, pages: list[int]) -> None:
    assert _s(ingested, code)["pages"] == pages


def test_page_map_of_a_clause_over_a_page_break(ingested: SimpleNamespace) -> None:
    s = _s(ingested, "5.1")
    assert [p for _, p in s["page_map"]] == [5, 6]
    offset = s["page_map"][1][0]
    page6 = s["text"][offset:]
    assert page6.startswith("area. Expression (5.1) applies to roofs")
    assert "(1)P The leaf load on the roof s shall be determined" in s["text"][:offset]


def test_annex_a_is_informative(ingested: SimpleNamespace) -> None:
    annex = _s(ingested, "annex_A")
    assert annex["status"] == "informative"
    assert annex["title"] == "Leaf loads on light garden structures"
    assert _s(ingested, "A.1")["title"] == "General"
    assert _s(ingested, "A.2")["title"] == "Values for light structures"


def test_tables_figures_and_expressions(ingested: SimpleNamespace) -> None:
    t51 = _s(ingested, "table_5.1")
    assert t51["title"] == "Exposure coefficient Ce for different sites"
    assert ["Sheltered: enclosed garden below trees", "1,2"] in t51["rows"]
    assert "| Windswept: open site with no shelter | 0,8 |" in t51["text"]
    assert _s(ingested, "figure_5.1")["caption"] == "Figure 5.1 \u2014 Shape coefficient for flat shed roofs"
    expr = _s(ingested, "expression_5.1")
    assert expr["formula"] == "s = \u03bc \u00b7 Ce \u00b7 sk"
    stores = Stores(LocalBlobs(ingested.dir))
    formula = stores.lookup("formulae", f"{ingested.doc_key}_expression_5.1")
    assert formula is not None
    image = formula.pop("image")  # the expression is cropped from the page like a figure
    assert image and image.endswith("_expression_5.1.png")
    assert formula == {
        "key": f"{ingested.doc_key}_expression_5.1",
        "formula": "s = \u03bc \u00b7 Ce \u00b7 sk",
        "page": 5,
        "section": f"{ingested.doc_key}_5.1",
    }


def test_a_tables_marked_note_is_the_tables_and_not_the_clauses(ingested: SimpleNamespace) -> None:
    """Table 4.1's row "Garden with trees a)" marks the note printed under it ("a) Trees taller ..."):
    the note is the table's text, after its rows, and no longer clause 4.2's."""
    table = _s(ingested, "table_4.1")["text"]
    note = "a) Trees taller than 5 m within a distance of 10 m from the structure."
    assert " ".join(table.split("\n")[-1].split()) == note
    assert "Trees taller" not in _s(ingested, "4.2")["text"]
    assert not any("Trees taller" in " ".join(row) for row in _s(ingested, "table_4.1")["rows"])


@pytest.mark.parametrize("code", ["table_4.1", "table_5.1", "figure_5.1", "expression_5.1"])
def test_objects_store_has_caption_page_and_image(ingested: SimpleNamespace, code: str) -> None:
    stores = Stores(LocalBlobs(ingested.dir))
    key = f"{ingested.doc_key}_{code}"
    obj = stores.lookup("objects", key)
    assert obj is not None
    assert obj["page"] == ingested.sections[key]["pages"][0]
    assert obj["caption"].startswith(("Table", "Figure", "Expression"))
    assert obj["description"].startswith(obj["caption"])
    png = stores.object_image(key)
    assert png is not None and png.startswith(b"\x89PNG\r\n\x1a\n")
    assert obj["image"].startswith(f"docs/{ingested.doc_key}/{stores.manifest(ingested.doc_key)['generation']}/")


def test_sections_store_matches_the_section_entries(ingested: SimpleNamespace) -> None:
    for key, s in ingested.sections.items():
        assert s["key"] == key and s["doc_key"] == ingested.doc_key and s["document"] == "EN 1991-9-9"
        assert s["pages"] == sorted(s["pages"]) and all(1 <= p <= 8 for p in s["pages"])
        assert s["text"].strip()


def test_both_variants_give_the_same_structure(sample_store: SimpleNamespace, scanned_store: SimpleNamespace) -> None:
    def shape(store: SimpleNamespace) -> list[tuple[str, str, list[int], str | None]]:
        return [(k, s["kind"], s["pages"], s["parent"]) for k, s in store.sections.items()]

    assert shape(sample_store) == shape(scanned_store)


# ---------------------------------------------------------------- the parser on synthetic pages
def _page(n: int, texts: list[str]) -> dict[str, Any]:
    return {
        "page": n,
        "objects": [],
        "lines": [{"text": t, "bbox": [70.0, 80.0 + 14 * i, 500.0, 90.0 + 14 * i]} for i, t in enumerate(texts)],
    }


def test_unnumbered_bold_headings_after_a_list_open_sections_but_words_in_a_drawing_do_not() -> None:
    """A guide whose headings are bold and unnumbered (no numbered headings to learn its typography from):
    a bold line after a line that ends without a full stop (a list, a caption) is a heading, as where
    headings are numbered; bold words inside a figure's box (a sign in a drawing) are not."""
    lines = [
        ("Site transport", True, ""),
        ("Keep vehicles and people apart on site, for example with signs at the gates", False, ""),
        ("SLOW", True, ""),
        ("NO ENTRY", True, ""),
        ("Figure 3 Signs at the site entrance", False, ""),
        ("Traffic routes", True, ""),
        ("Plan the routes so that vehicles need not reverse.", False, ""),
        ("Mark the routes clearly on the ground and keep them free of stored materials.", False, ""),
        *[
            (f"Routes {i} must be wide enough for the largest vehicle that will use them on site, with", False, "")
            for i in range(6)
        ],
        ("room to spare on either side for people walking beside them.", False, ""),
    ]
    page = _typo_page(2, lines)
    page["objects"] = [
        {
            "kind": "figure",
            "number": "3",
            "title": "Signs at the site entrance",
            "caption": "Figure 3 Signs at the site entrance",
            "caption_bbox": [70.0, 136.0, 500.0, 148.0],
            "bbox": [60.0, 106.0, 520.0, 134.0],  # around "SLOW" and "NO ENTRY"
            "region": "drawn",
        }
    ]
    sections = build_sections(
        DocId("ACME", "SG2"), "Guide", [_typo_page(1, [("Safety on widget sites", True, "")]), page]
    )
    titles = {s["title"] for s in sections.values() if s["kind"] != "figure"}
    assert {"Site transport", "Traffic routes"} <= titles and not titles & {"SLOW", "NO ENTRY"}
    (routes,) = [s for s in sections.values() if s["title"] == "Traffic routes"]
    assert "need not reverse" in routes["text"] and "SLOW" not in routes["text"]


def test_table_of_contents_and_numbers_in_text_are_not_headings() -> None:
    pages = [
        _page(
            1,
            [
                "Contents",
                "Foreword ........ 2",
                "1 Scope ........ 3",
                "1.1 General ........ 3",
                "2 Loads ........ 4",
                "2.1 Snow ........ 4",
            ],
        ),
        _page(
            2,
            [
                "Foreword",
                "This code is for tests. Clause 1 applies to sheds.",
                "1 m of snow is assumed here.",
                "2 Some text that is not a heading.",
            ],
        ),
        _page(
            3,
            [
                "1 Scope",
                "1.1 General",
                "(1) The values apply.",
                "12 people may stand on it.",
                "NOTE: a note here.",
                "2 Loads",
                "2.1 Snow",
                "(1) Snow is 1,0 kN/m2.",
                "2.2 Wind",
                "(1) Wind see 2.1.",
            ],
        ),
    ]
    sections = build_sections(DocId("CEN", "EN9999"), "Test", pages)
    assert list(sections) == [
        "CEN_EN9999_contents",
        "CEN_EN9999_foreword",
        "CEN_EN9999_1",
        "CEN_EN9999_1.1",
        "CEN_EN9999_2",
        "CEN_EN9999_2.1",
        "CEN_EN9999_2.2",
    ]
    assert sections["CEN_EN9999_contents"]["kind"] == "contents"
    assert sections["CEN_EN9999_1"]["pages"] == [3]
    assert "12 people may stand on it." in sections["CEN_EN9999_1.1"]["text"]
    assert "NOTE: a note here." in sections["CEN_EN9999_1.1"]["text"]
    assert "1 m of snow" in sections["CEN_EN9999_foreword"]["text"]


@pytest.mark.parametrize(
    ("heading", "code", "title", "kind"),
    [("0 Introduction", "introduction", "Introduction", "clause"), ("0. FOREWORD", "foreword", "FOREWORD", "front")],
)
def test_a_foreword_or_introduction_numbered_0_is_a_section_of_its_own(
    heading: str, code: str, title: str, kind: str
) -> None:
    """ISO and IS number the introduction or the foreword 0: it is a section of its own, named by its
    words, not part of the front matter before it; its "0.1" paragraphs stay in it. The foreword is the
    publisher's front matter; the introduction opens the text."""
    pages = [
        _page(1, ["Contents", "Foreword ........ 2", "1 Scope ........ 3"]),
        _page(
            2,
            [
                "Adopted by the committee on structural safety.",
                heading,
                "This standard was adopted by the committee. It applies to sheds.",
                "0.1 This revision takes account of recent practice.",
            ],
        ),
        _page(3, ["1 Scope", "1.1 General", "(1) The values apply."]),
    ]
    sections = build_sections(DocId("BIS", "IS9999"), "Test", pages)
    front = sections[f"BIS_IS9999_{code}"]
    assert (front["kind"], front["title"]) == (kind, title)
    assert "0.1 This revision" in front["text"] and "Adopted by" not in front["text"]
    assert sections["BIS_IS9999_1.1"]["kind"] == "clause"


def test_the_texts_opening_before_clause_1_is_body_and_the_publishers_matter_is_front(tmp_path: Any) -> None:
    """A guide's unnumbered opening ("Introduction", "Purpose", "What is a defect?", "How to use this
    guide", "Interpreting tolerances") holds rules its chapters rely on: clauses, ranked as the body
    is; its acknowledgements and status notice stay front matter, its contents page contents."""
    import pymupdf
    from helpers.layouts import write_guide_with_opening

    from clausewise.nodes.ingest.extract_page import read_page

    path = write_guide_with_opening(tmp_path / "guide.pdf")
    with pymupdf.open(path) as doc:
        pages = [read_page(doc, i, crop=False) for i in range(len(doc))]
    sections = build_sections(DocId("ACME", "WG1"), "Guide", pages)
    kinds = {s["title"]: s["kind"] for s in sections.values()}
    assert kinds["Acknowledgements"] == kinds["Document status"] == "front"
    assert "contents" in kinds.values()
    for title in ("Introduction", "Purpose", "What is a defect?", "How to use this guide", "Interpreting tolerances"):
        assert kinds[title] == "clause", title
    rule = next(s for s in sections.values() if s["title"] == "Interpreting tolerances")
    assert "not to be interpolated" in rule["text"] and rule["pages"] == [5]
    assert sections["ACME_WG1_1.1"]["kind"] == "clause" and "5 mm over 3 m" in sections["ACME_WG1_1.1"]["text"]


def test_a_foreword_on_the_page_where_the_clauses_begin_is_not_the_cover() -> None:
    """A short foreword in the first column of the page whose second column opens the clauses (as IS
    codes are set) is front matter, not a second cover page: the page is full of text."""
    clauses = [
        f"1.{n} The imposed loads of this kind shall be taken from the table for occupancy {n}." for n in range(1, 9)
    ]
    pages = [
        _page(1, ["IS 9999 : 2019", "Indian Standard", "SAMPLE LOADS"]),
        _page(2, ["0. FOREWORD", "0.1 This standard was adopted by the committee.", "1. SCOPE", *clauses]),
    ]
    sections = build_sections(DocId("BIS", "IS9999"), "Test", pages)
    assert sections["BIS_IS9999_cover"]["pages"] == [1]
    assert "adopted by the committee" in sections["BIS_IS9999_foreword"]["text"]


def _national_annex_pages(*pages: list[str]) -> list[dict[str, Any]]:
    """A code's cover and foreword (pages 1 and 2), the given pages, then its clause 1."""
    middle = [_page(n, lines) for n, lines in enumerate(pages, 3)]
    after = _page(3 + len(pages), ["1 Scope", "1.1 General", "(1) The values apply."])
    return [_page(1, ["EN 9999", "Test code"]), _page(2, ["Foreword", "This code is for tests."]), *middle, after]


def test_a_table_head_after_a_colon_is_not_a_front_heading() -> None:
    """A foreword's list of nationally determined parameters, introduced by "... through clauses:"
    and set as a table ("Clause  Item"), stays with the sentence that introduces it: the table's head
    is not a heading, so the list's clauses are read as listed (the NDP rules are found from it)."""
    pages = _national_annex_pages(
        [
            "National annex",
            "National choice is allowed in EN 9999 through clauses:",
            "Clause Item",
            "3.1(5) Return periods",
            "4.1(1) Construction loads",
        ]
    )
    sections = build_sections(DocId("CEN", "EN9999"), "Test", pages)
    annex = sections["CEN_EN9999_national-annex"]
    assert "Clause Item" in annex["text"] and "4.1(1) Construction loads" in annex["text"]
    assert "CEN_EN9999_clause-item" not in sections


def test_a_list_of_clauses_overleaf_or_with_annex_rows_stays_in_its_front_section() -> None:
    """The same list begun overleaf (the sentence ending in a colon at the foot of one page, the
    table's head at the top of the next) and with rows naming an annex after a clause's number alone
    ("A1.1(1)", then "Annex A2 Friction forces"): neither the head nor an annex row is a heading, so
    every row stays in the national annex's section."""
    pages = _national_annex_pages(
        ["National annex", "National choice is allowed in EN 9999 through clauses:"],
        [
            "Paragraph Item",
            "3.1(5) Return periods",
            "Annex A1 Representative values of construction loads",
            "A1.1(1)",
            "Annex A2 Design values of friction forces",
            "A2.5(2)",
        ],
    )
    sections = build_sections(DocId("CEN", "EN9999"), "Test", pages)
    annex = sections["CEN_EN9999_national-annex"]
    assert "Paragraph Item" in annex["text"] and "A2.5(2)" in annex["text"] and annex["pages"] == [3, 4]
    assert [k for k, s in sections.items() if s["kind"] == "front"] == ["CEN_EN9999_national-annex"]


def test_a_bold_table_head_after_a_colon_is_not_a_front_heading() -> None:
    """Where headings are bold, the list's head set in bold ("Paragraph  Item") still follows the sentence
    ending in a colon that introduces it: it stays in that section, and the bold heading after the
    list's last row opens the next."""
    plain = "The code gives rules for tests. It is set in the plain body font, not in bold."
    pages = _sized_pages(
        [("EN 9999", 20.0, True)],
        [("Foreword", 12.0, True), (plain, 10.0, False), (plain, 10.0, False)],
        [
            ("National annex", 12.0, True),
            ("National choice is allowed in EN 9999 through clauses:", 10.0, False),
            ("Paragraph Item", 10.0, True),
            ("3.1(5) Return periods", 10.0, False),
            ("4.1(1) Construction loads.", 10.0, False),
            ("Links to other codes", 12.0, True),
            (plain, 10.0, False),
        ],
        [("1 Scope", 12.0, True), ("1.1 General", 12.0, True), ("(1) " + plain, 10.0, False)],
        leading=14,
    )
    sections = build_sections(DocId("CEN", "EN9999"), "Test", pages)
    annex = sections["CEN_EN9999_national-annex"]
    assert "Paragraph Item" in annex["text"] and "4.1(1) Construction loads" in annex["text"]
    assert "CEN_EN9999_paragraph-item" not in sections and "CEN_EN9999_links-to-other-codes" in sections


def test_a_bold_heading_after_a_colon_that_heads_numbered_paragraphs_is_a_heading() -> None:
    """A guide whose paragraphs are numbered names its parts in a list ("... into two sections:") and
    sets each part's heading in bold over its paragraphs: the heading after the colon heads paragraph
    6, so it opens a part (unlike a table's head after a colon, over rows that are not paragraphs)."""
    body = [(f"{n} Paragraph {n} says what the guide asks of the reader here.", 10.0, False) for n in range(1, 25)]
    body[4] = ("5 The book is divided into two sections:", 10.0, False)
    pages = _sized_pages(
        [("A GUIDE", 24.0, True)],
        [("Introduction", 12.0, True), *body[:5], ("Section 1: Preparing for work", 10.0, True), *body[5:12]],
        [*body[12:]],
        leading=14,
    )
    sections = build_sections(DocId("ACME", "G2"), "Guide", pages)
    part = next(s for s in sections.values() if s["title"] == "Section 1: Preparing for work")
    assert sections["ACME_G2_6"]["parent"] == part["key"] and "Section 1" not in sections["ACME_G2_5"]["text"]


@pytest.mark.parametrize(
    ("current", "new", "ok"),
    [
        (None, (1,), True),
        (None, (2,), False),
        ((5, 3, 1), (5, 3, 2), True),
        ((5, 3, 1), (5, 4), True),
        ((5, 3, 1), (6,), True),
        ((5, 3, 1), (5, 3, 1, 1), True),
        ((5,), (5, 1), True),
        ((5, 3, 1), (9,), False),
        ((5, 3, 1), (5, 3), False),
        ((5, 3, 1), (5, 3, 1), False),
        ((4, 2), (4, 1), False),
        ((5,), (5, 3), False),
    ],
)
def test_plausible_next(current: tuple[int, ...] | None, new: tuple[int, ...], ok: bool) -> None:
    assert plausible_next(current, new) is ok


def test_plausible_next_jump_allows_missing_sections() -> None:
    assert plausible_next((1, 5), (4,)) is False
    assert plausible_next((1, 5), (4,), jump=3) is True  # sections 2 and 3 absent (as in the sample)


# ---------------------------------------------------------------- other layouts
def test_two_column_code_gives_its_clauses_on_their_pages(tmp_path: Any) -> None:
    """A two-column code with a running header, footer and printed page numbers (tests/helpers/
    layouts.py): every clause is its own section on its page, columns are read in order, no page
    number becomes a clause and no running line a title."""
    import pymupdf
    from helpers.layouts import PAGE_OFFSET, write_two_column

    from clausewise.nodes.ingest.extract_page import read_page

    path = write_two_column(tmp_path / "two.pdf")
    with pymupdf.open(path) as doc:
        pages = [read_page(doc, i, crop=False) for i in range(len(doc))]
    sections = build_sections(DocId("ACME", "ACME12-3"), "Widgets", pages)
    by_code = {s["section"]: s for s in sections.values()}
    assert by_code["cover"]["kind"] == "cover"
    expected = {"7": 2, "7.1": 2, "7.2": 2, "7.3": 3, "7.4": 3, "8": 4, "8.1": 4, "8.2": 4}
    assert {c: by_code[c]["pages"][0] for c in expected} == expected
    assert by_code["7.2"]["title"] == "Wind pressure"
    text_71 = by_code["7.1"]["text"]
    assert text_71.index("Bravo first paragraph") < text_71.index("Charlie continues the general clause")
    text_72 = by_code["7.2"]["text"]  # runs on from the right column to the next page's left column
    assert "Delta pressure text" in text_72 and "Echo continues the wind pressure clause" in text_72
    assert "Foxtrot" not in text_72
    printed = {str(p + PAGE_OFFSET) for p in range(4)}
    assert not printed & set(by_code)
    for s in sections.values():
        assert "ACME Guide to Widgets" not in s["text"] and "Actions on widgets" not in s["title"]


def _typo_page(n: int, lines: list[tuple[str, bool, str]], size: float = 10.0) -> dict[str, Any]:
    """A born-digital page: (text, bold, bold lead) per line."""
    return {
        "page": n,
        "objects": [],
        "lines": [
            {"text": t, "bbox": [70.0, 80.0 + 14 * i, 500.0, 92.0 + 14 * i], "size": size, "bold": b, "lead": lead}
            for i, (t, b, lead) in enumerate(lines)
        ],
    }


def _sized_pages(*pages: list[tuple[str, float, bool]], leading: float) -> list[dict[str, Any]]:
    """Born-digital pages 1, 2, ...: (text, size, bold) per line, a line every ``leading`` points."""
    return [
        {
            "page": n,
            "objects": [],
            "lines": [
                {
                    "text": t,
                    "bbox": [70.0, 80.0 + leading * i, 500.0, 80.0 + leading * i + size],
                    "size": size,
                    "bold": b,
                }
                for i, (t, size, b) in enumerate(lines)
            ],
        }
        for n, lines in enumerate(pages, 1)
    ]


def test_headings_in_other_styles() -> None:
    """Run-in headings (bold words or a dash end the title), chapter-hyphen numbers (2-1.1), quoted
    codes' numbers set in bold (1603.1.10, out of sequence), a number on its own line above its title."""
    body = (
        "The text of the clause goes on for a while here, and it is set in the plain body font, not bold.",
        False,
        "",
    )
    pages = [
        _typo_page(
            1,
            [
                ("CHAPTER 1 INTRODUCTION", True, ""),
                ("1-1 BACKGROUND.", True, ""),
                body,
                ("1-2 PURPOSE AND SCOPE.", True, ""),
                body,
                ("2-1.1 Section 101 - GENERAL.", True, ""),
                ("1603.1.10 - Systems Requiring Special Inspection for Seismic", True, ""),
                ("Resistance [Addition]", True, ""),
                body,
                ("1603.2 - Delegated Engineered Systems [Addition]", True, ""),
                body,
            ],
        ),
        _typo_page(
            2,
            [
                (
                    "2-1.2 Terrain category. The roughness of the ground is taken from the map.",
                    False,
                    "2-1.2 Terrain category.",
                ),
                body,
                ("2-1.3", True, ""),
                ("Repair Time", True, ""),
                body,
                ("2-1.4 Orography \u2014 The effects of hills are taken into account where they", False, ""),
                body,
                ("1 - The structure is classified as Risk Category III.", False, ""),
                ("2-1.5 Reduction in Imposed Loads \u2014 The reduction", False, ""),  # a narrow column
                body,
                ("2-1.6 Concentrated Loads \u2014 Floors shall be", False, ""),
                body,
                ("2-1.7 Walls \u2014 Rectangular plan buildings", False, ""),  # a title in two parts
                body,
            ],
        ),
    ]
    sections = build_sections(DocId("DOD", "UFC3-301-01"), "Test", pages)
    titles = {s["section"]: s["title"] for s in sections.values() if s["kind"] == "clause"}
    assert titles == {
        "1": "INTRODUCTION",
        "1-1": "BACKGROUND",
        "1-2": "PURPOSE AND SCOPE",
        "2-1.1": "Section 101 - GENERAL",
        "1603.1.10": "Systems Requiring Special Inspection for Seismic Resistance [Addition]",
        "1603.2": "Delegated Engineered Systems [Addition]",
        "2-1.2": "Terrain category",
        "2-1.3": "Repair Time",
        "2-1.4": "Orography",
        "2-1.5": "Reduction in Imposed Loads",
        "2-1.6": "Concentrated Loads",
        "2-1.7": "Walls \u2014 Rectangular plan buildings",
    }
    run_in = sections["DOD_UFC3-301-01_2-1.2"]
    assert "The roughness of the ground is taken from the map." in run_in["text"]  # the run-in text stays
    assert sections["DOD_UFC3-301-01_1-2"]["parent"] == "DOD_UFC3-301-01_1"


def test_a_display_title_wrapped_under_its_chapter_number_is_read_whole() -> None:
    """A chapter number on its own line over a display title set on two lines ("Chapter 2" /
    "Developing Preliminary and" / "Final Designs"): the title is both lines, joined without a space
    after a hyphen at the break; the text follows."""
    lines = [("Chapter 2", 12.0, True), ("Developing Preliminary and", 20.0, True), ("Final Designs", 20.0, True)]
    lines += [("The design process includes the selection of a structural system and its materials.", 10.0, False)]
    lines += [("2.1 Preliminary Design", 12.0, True), ("A preliminary design sets out the system.", 10.0, False)]
    before = [
        ("Chapter 1", 12.0, True),
        ("Implementing Performance-", 20.0, True),
        ("Based Design", 20.0, True),
        ("This chapter sets out the methods used.", 10.0, False),
    ]
    before += [("1.1 General", 12.0, True)]
    before += [("The methods are general and apply to every type of building.", 10.0, False)] * 12
    lines += [("The system is chosen for the site, the use and the loads it is designed for.", 10.0, False)] * 10
    pages = _sized_pages([("FEMA P-9", 24.0, True)], before, lines, leading=24)
    sections = build_sections(DocId("FEMA", "P-9"), "Test", pages)
    chapter = sections["FEMA_P-9_2"]
    assert chapter["title"] == "Developing Preliminary and Final Designs"
    assert "The design process includes" in chapter["text"]
    assert sections["FEMA_P-9_1"]["title"] == "Implementing Performance-Based Design"  # the hyphen kept


def test_a_lead_paragraph_set_as_large_as_its_heading_is_not_part_of_its_title() -> None:
    """A front heading in bold over a lead paragraph set as large in a lighter weight ("Purpose" / "This
    guide has been prepared ..."): the title is the heading; a display title wrapped in the same weight
    ("Site management and" / "supervision") is read whole."""
    front = [("Purpose", 12.0, True), ("This guide has been prepared to help builders and owners.", 12.0, False)]
    front += [("It sets out what good work looks like and how it is checked.", 9.0, False)] * 12
    front += [("Site management and", 12.0, True), ("supervision", 12.0, True)]
    front += [("The site is managed by the principal contractor.", 9.0, False)] * 4
    body = [("1 Scope", 10.0, True), ("1.1 General", 10.0, True)]
    body += [("The values apply to houses and their parts.", 9.0, False)] * 12
    pages = _sized_pages([("GUIDE", 24.0, True)], front, body, leading=16)
    sections = build_sections(DocId("MBIE", "G1"), "Test", pages)
    titles = {s["title"]: s["kind"] for s in sections.values()}
    assert titles["Purpose"] == titles["Site management and supervision"] == "clause"  # the text's opening
    assert "This guide has been prepared" in sections["MBIE_G1_purpose"]["text"]


def test_a_heading_behind_a_change_mark_opens_its_section_and_keeps_the_mark_in_its_text() -> None:
    """A document that marks its changes ("\\4\\ ... /4/") may set the mark before a heading: the
    heading is found as if unmarked, and its section's text keeps the mark as printed."""
    body = ("The text of the clause goes on for a while here, set in the plain body font, not bold.", False, "")
    marked = "\\4\\ 1607.14 \u2013 Bridge Crane Support Structures [Addition]"
    lines = [("CHAPTER 1 INTRODUCTION", True, ""), ("1-1 BACKGROUND.", True, ""), body]
    lines += [("1607.12.5 - Hangars [Addition]", True, ""), body, (marked, True, ""), body, ("/4/", False, ""), body]
    sections = build_sections(DocId("DOD", "UFC3-301-01"), "Test", [_typo_page(1, lines)])
    crane = sections["DOD_UFC3-301-01_1607.14"]
    assert crane["title"] == "Bridge Crane Support Structures [Addition]"
    assert crane["text"].startswith(marked) and "/4/" in crane["text"]
    assert marked not in sections["DOD_UFC3-301-01_1607.12.5"]["text"]


def test_another_codes_clause_quoted_in_the_text_is_not_a_section() -> None:
    """A guide quotes another code's clause, its heading set in bold as that code sets it ("403.9
    Voluntary ..."), between its own 2.2.1 and 2.2.2: the quote is text of 2.2.1, and the quote's
    numbered items ("3. New or ...") do not open chapter 3 ahead of the guide's own."""
    body = ("The text of the clause goes on for a while here, set in the plain body font, not bold.", False, "")
    pages = [
        _typo_page(
            1,
            [
                ("1.1 Scope", True, ""),
                body,
                ("2.1 Approval", True, ""),
                body,
                ("2.2 Permits", True, ""),
                ("2.2.1 Voluntary Upgrades", True, ""),
                ("Many jurisdictions have adopted the existing building code. Its Section 403.9 states:", False, ""),
                ("403.9 Voluntary seismic improvements. Alterations to existing", True, "403.9 Voluntary"),
                ("structural elements shall be permitted, provided that:", False, ""),
                ("1. The altered structure is no less conforming than before.", False, ""),
                ("3. New or relocated elements are detailed as for new construction.", False, ""),
                ("2.2.2 Code-Conforming Designs", True, ""),
                body,
                ("Chapter 3", True, ""),
                ("Selecting Objectives", True, ""),
                body,
            ],
        )
    ]
    sections = build_sections(DocId("FEMA", "P-58-6"), "Test", pages)
    codes = [s["section"] for s in sections.values() if s["kind"] == "clause"]
    assert codes == ["1.1", "2.1", "2.2", "2.2.1", "2.2.2", "3"]
    quoted_in = sections["FEMA_P-58-6_2.2.1"]["text"]
    assert "403.9 Voluntary seismic improvements" in quoted_in and "3. New or relocated" in quoted_in
    assert sections["FEMA_P-58-6_3"]["title"] == "Selecting Objectives"


def test_a_code_that_numbers_its_sections_after_another_codes_keeps_them_between_its_own() -> None:
    """A modification document numbers most headings as the code it modifies ("1604.1", "1604.2", ...)
    and its own in turn: its "1605.2" between its own "2-4.2" and "2-4.3" is a section, not a quote."""
    body = ("The text of the clause goes on for a while here, set in the plain body font, not bold.", False, "")
    lines = [("2-4.1 General.", True, ""), body]
    lines += [item for n in range(1, 13) for item in ((f"1604.{n} - Loads [Addition]", True, ""), body)]
    lines += [("2-4.2 Snow Loads.", True, ""), body, ("1605.2 - Combinations [Replacement]", True, ""), body]
    lines += [("2-4.3 Rain Loads.", True, ""), body]
    pages = [_typo_page(1, lines[:30]), _typo_page(2, lines[30:])]
    sections = build_sections(DocId("DOD", "UFC3-301-01"), "Test", pages)
    codes = [s["section"] for s in sections.values() if s["kind"] == "clause"]
    assert codes[-3:] == ["2-4.2", "1605.2", "2-4.3"]


def test_annex_headings_without_a_status_and_letter_hyphen_numbers() -> None:
    pages = [
        _typo_page(
            1,
            [("1 General", True, ""), ("1.1 Scope", True, "")]
            + [("Text of the scope, long enough to be the body of the document in plain type.", False, "")] * 6,
        ),
        _typo_page(
            2,
            [
                ("APPENDIX B ALTERNATE DESIGN PROCEDURE", True, ""),
                ("B-1 GENERAL.", True, ""),
                *[("Text of the appendix, long enough to be the body of the document in plain type.", False, "")] * 3,
                ("B-16.1 Determining Response Spectra", True, ""),
                *[("Text again, long enough to be the body of the document in plain type here.", False, "")] * 3,
                ("B-17.5.1.1 Nonlinear Static Procedure.", True, ""),
                *[("More text, long enough to be the body of the document in plain type here too.", False, "")] * 3,
            ],
        ),
    ]
    sections = build_sections(DocId("DOD", "UFC3-301-01"), "Test", pages)
    codes = [s["section"] for s in sections.values()]
    assert codes[-4:] == ["annex_B", "B-1", "B-16.1", "B-17.5.1.1"]
    assert sections["DOD_UFC3-301-01_annex_B"]["status"] is None
    assert sections["DOD_UFC3-301-01_B-16.1"]["title"] == "Determining Response Spectra"


def test_a_document_without_numbered_clauses_is_cut_into_page_sized_sections() -> None:
    prose = "Workers on the site should wear the protective equipment that the task needs every day. " * 9
    pages = [_page(1, ["Health and safety", "in construction"])]
    pages += [_page(n, [prose[i : i + 90] for i in range(0, len(prose), 90)]) for n in range(2, 8)]
    sections = build_sections(DocId("HSE", "HSG150"), "Test", pages)
    kinds = [s["kind"] for s in sections.values()]
    assert kinds[0] == "cover"
    fronts = [s for s in sections.values() if s["kind"] == "front"]
    assert len(fronts) >= 3
    assert all(len(s["pages"]) <= 3 for s in fronts)
    assert len({s["section"] for s in fronts}) == len(fronts)


def test_contents_page_found_by_page_numbers_and_running_lines_by_repetition() -> None:
    contents = _page(
        2,
        [
            "Scope 3",
            "Wind actions 5",
            "Terrain 7",
            "Orography 9",
            "Snow actions 11",
            "Roofs 13",
            "Drifts 15",
            "Annex A Data 17",
            "Annex B Maps 19",
        ],
    )
    pages = [_page(1, ["A Code for Widgets", "Part 3"]), contents]
    for n in range(3, 7):
        page = _page(n, ["1 Scope" if n == 3 else f"1.{n - 3} Topic number {n}", f"(1) The text of page {n}."])
        page["lines"].insert(
            0, {"text": f"GUIDE TO WIDGETS 2015 | {n}", "bbox": [70.0, 20.0, 300.0, 30.0], "band": "top"}
        )
        pages.append(page)
    pages[3]["lines"].append({"text": "(informative)", "bbox": [70.0, 40.0, 150.0, 50.0], "band": "top"})
    sections = build_sections(DocId("X", "WIDGETS"), "Test", pages)
    kinds = {s["section"]: s["kind"] for s in sections.values()}
    assert kinds["cover"] == "cover" and kinds["contents"] == "contents"
    assert [c for c, k in kinds.items() if k == "clause"] == ["1", "1.1", "1.2", "1.3"]
    text = "\n".join(s["text"] for s in sections.values())
    assert "GUIDE TO WIDGETS" not in text
    assert "(informative)" in text  # on one page only: not a running line


def test_numbered_paragraphs_of_a_guidance_document_are_its_sections(tmp_path: Any) -> None:
    """Body paragraphs numbered in one run under unnumbered headings (tests/helpers/layouts.py): each
        paragraph is a section of its own, coded by its number, on the page it opens on, under its heading
    (a part of the body, not front matter);
        a paragraph opening in the footer's band stays text; the running footer is not."""
    import pymupdf
    from helpers.layouts import write_numbered_paragraphs

    from clausewise.nodes.ingest.extract_page import read_page

    path, opens = write_numbered_paragraphs(tmp_path / "guide.pdf")
    with pymupdf.open(path) as doc:
        pages = [read_page(doc, i, crop=False) for i in range(len(doc))]
    sections = build_sections(DocId("ACME", "SG1"), "Guide", pages)
    paragraphs = {s["section"]: s for s in sections.values() if s["kind"] == "clause" and s["section"].isdigit()}
    assert len(opens) >= 20
    low = [ln["text"] for page in pages for ln in page["lines"] if ln["bbox"][1] > 0.9 * 842]
    assert len([t for t in low if re.match(r"\d+ Paragraph", t)]) == 4  # one a page, kept as text
    assert {int(c): s["pages"][0] for c, s in paragraphs.items()} == opens
    for n, s in paragraphs.items():
        assert s["text"].startswith(f"{n} Paragraph {n} says that")
        assert f"Paragraph {int(n) + 1} says" not in s["text"]
        assert "Safety on widget sites" not in s["text"] and "Page " not in s["text"]
        heading = ["Working at height", "Site transport", "Fire and emergencies", "Welfare"][opens[int(n)] - 2]
        assert sections[s["parent"]]["title"] == s["title"] == heading
        assert sections[s["parent"]]["kind"] == "clause"  # a part of the body, not front matter


def test_a_tables_column_heads_set_in_bold_across_the_line_do_not_open_a_section(tmp_path: Any) -> None:
    """A guide without numbered clauses sets its headings in bold, and the column heads of a table
    without a caption too ("MATERIAL  VIEWING POSITION  REFERENCE", three pieces set wide apart on one
    baseline): those are the table's first row, in the section the table is printed in; so are a
    flowchart's answers on its arrows ("Yes    Yes", two pieces); a bold line of one piece is still a
    heading."""
    import pymupdf

    from clausewise.nodes.ingest.extract_page import read_page

    doc = pymupdf.open()
    doc.new_page(width=595, height=842).insert_text((57, 200), "A guide to finishes", fontsize=24, fontname="hebo")
    for pno, heading in enumerate(["Inspecting surfaces", "Critical lighting"]):
        page = doc.new_page(width=595, height=842)
        page.insert_text((57, 100), heading, fontsize=14, fontname="hebo")
        y = 130.0
        for i in range(10):
            page.insert_text(
                (57, y), f"Sentence {i} of {heading.lower()} runs on across the page as text does here.", fontsize=10
            )
            y += 13
        if pno == 0:
            y += 10
            for x, head in ((57, "MATERIAL"), (230, "VIEWING POSITION"), (420, "REFERENCE")):
                page.insert_text((x, y), head, fontsize=10, fontname="hebo")
            for row in (("Tiled surfaces", "At 2 m", "Working group"), ("Roofs", "At 3 m", "Roofing body")):
                y += 15
                for x, cell in zip((57, 230, 420), row, strict=True):
                    page.insert_text((x, y), cell, fontsize=10)
            y += 30
            page.insert_text((57, y), "Sentence after the table ends the section here.", fontsize=10)
        else:  # the answers on a flowchart's arrows, bold and set wide apart: "Yes    Yes"
            y += 20
            for x in (120, 300):
                page.insert_text((x, y), "Yes", fontsize=10, fontname="hebo")
            page.insert_text((57, y + 20), "Inspect the surface again under critical light.", fontsize=10)
    path = tmp_path / "guide.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        pages = [read_page(pdf, i, crop=False) for i in range(len(pdf))]
    assert [ln.get("cells", 1) for ln in pages[1]["lines"] if ln["text"].startswith("MATERIAL")] == [3]
    assert all(ln.get("cells", 1) == 1 for ln in pages[1]["lines"] if ln["text"].startswith(("Inspecting", "Sentence")))
    sections = build_sections(DocId("ACME", "G1"), "Guide", pages)
    titles = [s["title"] for s in sections.values()]
    assert "Inspecting surfaces" in titles and "Critical lighting" in titles
    assert not any("MATERIAL" in t or "Yes" in t for t in titles)
    lighting = next(s for s in sections.values() if s["title"] == "Critical lighting")
    assert "Yes Yes" in lighting["text"] and "Inspect the surface again" in lighting["text"]
    surfaces = next(s for s in sections.values() if s["title"] == "Inspecting surfaces")
    assert "MATERIAL VIEWING POSITION REFERENCE" in surfaces["text"] and "Tiled surfaces" in surfaces["text"]
    assert "Sentence after the table" in surfaces["text"]


def test_numbered_appendices_after_numbered_paragraphs_are_annexes(tmp_path: Any) -> None:
    """ "Appendix 1: Inspection report form" after a run of numbered paragraphs (HSE's HSG series) is an
    annex coded by its number, not a part of the front matter, its display title read over both lines;
    its form's items "1." to "12." are its text, not paragraphs or clauses; "Appendix 2" after it is the
    next annex, a smaller heading in it is a part of it, a heading as large as its own ends the
    appendices; the paragraphs of the body keep their numbers."""
    import pymupdf
    from helpers.layouts import write_numbered_paragraphs

    from clausewise.nodes.ingest.extract_page import read_page

    path, opens = write_numbered_paragraphs(tmp_path / "guide.pdf", appendices=True)
    with pymupdf.open(path) as doc:
        pages = [read_page(doc, i, crop=False) for i in range(len(doc))]
    sections = build_sections(DocId("ACME", "SG1"), "Guide", pages)
    annexes = {s["section"]: s for s in sections.values() if s["kind"] == "annex"}
    assert sorted(annexes) == ["annex_1", "annex_2"]
    form, checklist = annexes["annex_1"], annexes["annex_2"]
    assert form["title"] == "Inspection report form with timing chart" and form["status"] is None
    assert form["pages"] == [6] and checklist["title"] == "Site checklist" and checklist["pages"] == [7]
    assert "12. Name and position of the person receiving it." in form["text"]
    assert checklist["text"].startswith("Appendix 2: Site checklist\n1 ")
    assert not [s for s in sections.values() if s["kind"] == "front" and "Appendix" in (s["title"] or "")]
    (site,) = [s for s in sections.values() if s["title"] == "Access on site"]
    assert site["kind"] == "clause" and site["parent"] == "ACME_SG1_annex_2"
    assert "routes on site kept clear" in site["text"] and "competent" not in site["text"]
    (scaffolds,) = [s for s in sections.values() if s["title"] == "Scaffolds"]  # a heading after a question
    assert scaffolds["parent"] == "ACME_SG1_annex_2" and "competent people?" in scaffolds["text"]
    (references,) = [s for s in sections.values() if s["title"] == "References"]
    assert references["kind"] == "front" and not references.get("parent")
    paragraphs = {int(s["section"]) for s in sections.values() if s["kind"] == "clause" and s["section"].isdigit()}
    assert paragraphs == set(opens)  # the appendices' numbers opened no paragraphs


def _clause_entry(text: str, page_map: list[list[int]]) -> dict[str, Any]:
    """A clause's entry as `build_sections` makes it: its text, on the pages mapped."""
    return {"kind": "clause", "text": text, "page_map": page_map, "pages": sorted({page for _, page in page_map})}


def test_a_note_printed_under_a_table_belongs_to_the_table_too() -> None:
    """ "Table 5.2 NOTE": the NOTE lines after a table's caption in the clause around it, up to the next
    paragraph or caption, are added to the table's text (on their page); the clause keeps them."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    clause = (
        "5.3 Temperature profiles\n(2) Use Table 5.2 above ground.\nTable 5.2: Indicative temperatures\n"
        "NOTE: Values of T3 may be specified in the National\nAnnex; T3 = 18 °C is recommended.\n"
        "Table 5.3: Underground parts\n(3) Further text."
    )
    entries = {
        "X_5.3": _clause_entry(clause, [[0, 20], [60, 21]]),
        "X_table_5.2": {
            "kind": "table",
            "parent": "X_5.3",
            "caption": "Table 5.2: Indicative temperatures",
            "text": "Table 5.2: Indicative temperatures\n| Summer | T3 |",
            "page_map": [[0, 20]],
            "pages": [20],
        },
        "X_table_5.3": {
            "kind": "table",
            "parent": "X_5.3",
            "caption": "Table 5.3: Underground parts",
            "text": "Table 5.3: Underground parts\n| Winter | T6 |",
            "page_map": [[0, 21]],
            "pages": [21],
        },
    }
    _table_notes(entries)
    table = entries["X_table_5.2"]
    assert table["text"].endswith(
        "| Summer | T3 |\nNOTE: Values of T3 may be specified in the National\nAnnex; T3 = 18 °C is recommended."
    )
    assert table["pages"] == [20, 21] and table["page_map"][-1][1] == 21
    assert entries["X_table_5.3"]["text"] == "Table 5.3: Underground parts\n| Winter | T6 |"  # no NOTE under it
    rest = entries["X_5.3"]
    assert rest["text"] == clause.replace(
        "\nNOTE: Values of T3 may be specified in the National\nAnnex; T3 = 18 °C is recommended.", ""
    )
    assert rest["page_map"] == [[0, 20], [60, 21]] and rest["pages"] == [20, 21]


def test_a_note_under_a_table_whose_caption_wrapped_goes_with_it() -> None:
    """A caption whose title ends on a second line the table took ("Table 6.1: Linear temperature
    difference" / "for different types of bridge decks") is printed in the clause by its first line
    alone: the NOTE under it still goes with the table; "given in Table 6.1." is no caption."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    caption = "Table 6.1: Linear temperature difference for different types of bridge decks"
    clause = (
        "6.1.4.1 Vertical linear component\n(1) Values are given in Table 6.1.\n"
        "Table 6.1: Linear temperature difference\nNOTE 2: The values are based on a depth of surfacing of 50 mm."
    )
    entries = {
        "X_6.1.4.1": _clause_entry(clause, [[0, 27]]),
        "X_table_6.1": _table_entry("X_6.1.4.1", caption, "| Steel deck | 18 |", [[0, 27]]),
    }
    _table_notes(entries)
    note = "NOTE 2: The values are based on a depth of surfacing of 50 mm."
    assert entries["X_table_6.1"]["text"].endswith(f"| Steel deck | 18 |\n{note}")
    assert entries["X_6.1.4.1"]["text"].endswith("given in Table 6.1.\nTable 6.1: Linear temperature difference")


def _table_entry(parent: str, caption: str, body: str, page_map: list[list[int]]) -> dict[str, Any]:
    """A table's entry as `build_sections` makes it: its caption, then its rows, on the pages mapped."""
    return {
        "kind": "table",
        "parent": parent,
        "caption": caption,
        "text": f"{caption}\n{body}",
        "page_map": page_map,
        "pages": sorted({page for _, page in page_map}),
    }


def test_a_tables_footnotes_go_with_it_and_notes_numbered_on_from_the_clause_stay_there() -> None:
    """Under a table: its footnotes ("b The value ...") are the table's, also after a caption whose
    title wraps onto a second line; a note numbered on from the paragraph's own notes ("NOTE 1" above
    the table, "NOTE 2" under it) is the paragraph's, while a table's own notes start at 1."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    def table(key: str, caption: str) -> dict[str, object]:
        return _table_entry("X_C.3", caption, "| Road | 2400 |", [[0, 30]])

    clause = (
        "C.3 Impact\n(1) The values are given in Table C.2.\n"
        "Table C.2 - Design values for vehicle mass\na Road in areas where the speed limit is 50 km/h.\n"
        "b The value of db may be multiplied by 0,6\n(see Figure C.2).\n"
        "(2) The forces act horizontally.\nNOTE 1 The National Annex may give other values in Table C.3.\n"
        "Table C.3 - Forces on columns\nNOTE 2 The National Annex may prescribe the force as a function of distance.\n"
        "(3) Shape coefficients are given in Table C.4.\n"
        "Table C.4 - Shape coefficients for exceptional drifts for roofs\nabutting and close to taller structures\n"
        "Note 1: the least value of 2h/sk applies.\n(4) Further text."
    )
    entries = {
        "X_C.3": _clause_entry(clause, [[0, 30]]),
        "X_table_C.2": table("X_table_C.2", "Table C.2 - Design values for vehicle mass"),
        "X_table_C.3": table("X_table_C.3", "Table C.3 - Forces on columns"),
        "X_table_C.4": table("X_table_C.4", "Table C.4 - Shape coefficients for exceptional drifts for roofs"),
    }
    _table_notes(entries)
    assert entries["X_table_C.2"]["text"].endswith(
        "| Road | 2400 |\na Road in areas where the speed limit is 50 km/h.\n"
        "b The value of db may be multiplied by 0,6\n(see Figure C.2)."
    )
    assert entries["X_table_C.3"]["text"] == "Table C.3 - Forces on columns\n| Road | 2400 |"
    assert entries["X_table_C.4"]["text"].endswith("| Road | 2400 |\nNote 1: the least value of 2h/sk applies.")
    rest = entries["X_C.3"]["text"]
    assert "NOTE 2 The National Annex may prescribe" in rest  # the paragraph's notes go on under the table
    assert "speed limit" not in rest and "least value" not in rest


def test_a_note_the_table_marks_goes_with_it_but_a_list_after_a_table_stays_in_the_clause() -> None:
    """ "a) Trees taller than 5 m ..." under a table whose row ends in "a)" is the table's note; the same
    kind of line under a table that marks nothing is the clause's list going on."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    def clause(caption: str) -> str:
        head = "4.2 Values\n(2) The values are given in the following table.\n"
        return f"{head}{caption}\na) Trees taller than 5 m.\n(3) Next."

    entries = {
        "X_4.2": _clause_entry(clause("Table 4.1 Factors"), [[0, 5]]),
        "X_table_4.1": _table_entry("X_4.2", "Table 4.1 Factors", "| Garden with trees a) | 0,7 |", [[0, 5]]),
        "X_4.3": _clause_entry(clause("Table 4.2 Cases"), [[0, 6]]),
        "X_table_4.2": _table_entry("X_4.3", "Table 4.2 Cases", "| Open garden | 0,5 |", [[0, 6]]),
        # a row labelled "(3)", as the paragraph after the table is numbered: a label, not a note's marker
        "X_4.4": {
            "kind": "clause",
            "text": clause("Table 4.3 Loads").replace("a) Trees taller than 5 m.\n", ""),
            "page_map": [[0, 7]],
            "pages": [7],
        },  # fmt: skip
        "X_table_4.3": _table_entry("X_4.4", "Table 4.3 Loads", "| (3) | Inside the area | 10 % |", [[0, 7]]),
    }
    _table_notes(entries)
    assert entries["X_table_4.1"]["text"].endswith("| Garden with trees a) | 0,7 |\na) Trees taller than 5 m.")
    assert "Trees taller" not in entries["X_4.2"]["text"] and entries["X_4.2"]["text"].endswith("Factors\n(3) Next.")
    assert entries["X_table_4.2"]["text"] == "Table 4.2 Cases\n| Open garden | 0,5 |"
    assert "a) Trees taller than 5 m.\n(3) Next." in entries["X_4.3"]["text"]
    assert entries["X_table_4.3"]["text"] == "Table 4.3 Loads\n| (3) | Inside the area | 10 % |"
    assert entries["X_4.4"]["text"].endswith("Table 4.3 Loads\n(3) Next.")


def test_lettered_notes_written_with_a_full_stop_go_with_their_table_also_after_a_line_of_change_marks() -> None:
    """Another publisher letters a table's notes "a. The ..." and, where a note was deleted in a
    change, prints a line of change marks alone ("\\4\\ /4/") between the caption and the notes."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    clause = (
        "1604.3.1 Deflections\nDeflections must not exceed those permitted by Table 2-1.\n"
        "Table 2-1 \\4\\ /4/ Deflection Limits for Framing\n\\4\\ /4/\n"
        "a. The wind load is permitted to be taken as 0.42 times the\ncomponent wind loads.\n"
        "b. L must be calculated as L = kl.\nTable 1604.5 [Replacement]\nOther text."
    )
    entries = {
        "X_1604.3.1": _clause_entry(clause, [[0, 32]]),
        "X_table_2-1": _table_entry(
            "X_1604.3.1", "Table 2-1 \\4\\ /4/ Deflection Limits for Framing", "| Brick veneer | L/600 |", [[0, 32]]
        ),
    }
    _table_notes(entries)
    assert entries["X_table_2-1"]["text"].endswith(
        "| Brick veneer | L/600 |\na. The wind load is permitted to be taken as 0.42 times the\n"
        "component wind loads.\nb. L must be calculated as L = kl."
    )
    rest = entries["X_1604.3.1"]["text"]
    assert "0.42 times" not in rest and "Table 1604.5 [Replacement]\nOther text." in rest


def test_a_tables_note_running_on_over_the_page_goes_with_it_and_so_do_the_notes_after_it() -> None:
    """A table's notes (its own, on the last page it runs on to) end mid-sentence at the foot of the
    page: the rest of the note and the lettered notes after it, which the clause's text holds after the
    table's caption on the next page, are the table's; the clause's next paragraph is not."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    clause = (
        "1604.5 Risk category\n(1) Each building is assigned a category from Table 2-2.\n"
        "Table 2-2 Risk Category of Buildings\n"
        "outside of the inundation zone or if equivalent facilities are designed for it.\n"
        "f. Use the site-specific value for the year 2065.\ng. Subject to approval, a scenario may be used.\n"
        "(2) Further text."
    )
    page36 = clause.index("outside")
    entries = {
        "X_1604.5": _clause_entry(clause, [[0, 33], [page36, 36]]),
        "X_table_2-2": _table_entry(
            "X_1604.5",
            "Table 2-2 Risk Category of Buildings",
            "| II | 1.0 |\nNotes to Table 2-2\n"
            "e. These facilities may be designed for Category III if equivalent facilities are available",
            [[0, 33], [40, 35]],
        ),
    }
    _table_notes(entries)
    table = entries["X_table_2-2"]
    assert table["text"].endswith(
        "are available\noutside of the inundation zone or if equivalent facilities are designed for it.\n"
        "f. Use the site-specific value for the year 2065.\ng. Subject to approval, a scenario may be used."
    )
    assert table["pages"] == [33, 35, 36] and table["page_map"][-1][1] == 36
    rest = entries["X_1604.5"]
    assert (
        rest["text"].endswith("Table 2-2 Risk Category of Buildings\n(2) Further text.") and "2065" not in rest["text"]
    )

    # A table that ends with a finished sentence, or with its rows, takes no lower-case line after it.
    for ending in ("e. These facilities may be designed for Category III.", "| V | 1.25 |"):
        entries["X_table_2-2"]["text"] = "Table 2-2 Risk Category of Buildings\n| II | 1.0 |\n" + ending
        entries["X_1604.5"]["text"] = clause
        entries["X_1604.5"]["page_map"] = [[0, 33], [page36, 36]]
        _table_notes(entries)
        assert entries["X_1604.5"]["text"] == clause


def test_a_table_over_several_pages_takes_its_lettered_notes_under_its_last_part_and_over_the_page() -> None:
    """A table printed over pages with its caption again on each (the clause around it holds only the
    captions): its lettered notes are printed under its last part, after a line of its own ("FOR SI:
    ..."), and go on at the top of the next page ("c." at the foot, "d." on). They are the table's, on
    their pages; the clause keeps that line and its next paragraph. Before, the notes were read as the
    clause's text and cited as the clause. One "a ..." line after a line of the clause is no series of
    notes and stays."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    caption = "Table 3-1 Design Coefficients and Factors for Systems,"
    clause = (
        "3-6.2 Analysis procedure\nAdd at the end of the section.\n"
        f"{caption}\n"
        "Table 3-1 Design Coefficients and Factors for Systems\n"
        "FOR SI: 1 foot = 304.8 mm\n"
        "a. Response modification coefficient, R, for use throughout.\n"
        "b. Where the tabulated value of the overstrength factor is greater than 2.\n"
        "c. Deflection amplification factor, Cd.\n"
        "d. NL = Not limited and NP = Not permitted.\n"
        "e. See Section 12.2.5.4 for the limits.\n"
        "(2) Further text."
    )
    p72, p73 = clause.index("Table 3-1 Design Coefficients and Factors for Systems\n"), clause.index("d. NL")
    entries = {
        "X_3-6.2": _clause_entry(clause, [[0, 71], [p72, 72], [p73, 73]]),
        "X_table_3-1": _table_entry("X_3-6.2", caption, "| A. Bearing walls | 5 | 2 |", [[0, 71], [40, 72]]),
    }
    _table_notes(entries)
    table, rest = entries["X_table_3-1"], entries["X_3-6.2"]
    assert table["text"].endswith(
        "| A. Bearing walls | 5 | 2 |\na. Response modification coefficient, R, for use throughout.\n"
        "b. Where the tabulated value of the overstrength factor is greater than 2.\n"
        "c. Deflection amplification factor, Cd.\nd. NL = Not limited and NP = Not permitted.\n"
        "e. See Section 12.2.5.4 for the limits."
    )
    assert table["pages"] == [71, 72, 73]
    assert table["page_map"][-1] == [table["text"].index("d. NL"), 73]
    assert rest["text"].endswith("FOR SI: 1 foot = 304.8 mm\n(2) Further text.")
    assert "Not limited" not in rest["text"] and 73 in rest["pages"]

    # a text layer that reads the column of markers before the notes' words ("a. b. c. Where ...")
    grouped = clause.replace(
        "a. Response modification coefficient, R, for use throughout.\nb. Where",
        "a. b. Response modification coefficient, R, for use throughout. Where",
    )
    entries["X_3-6.2"] = _clause_entry(grouped, [[0, 71], [p72, 72], [grouped.index("d. NL"), 73]])
    entries["X_table_3-1"] = _table_entry("X_3-6.2", caption, "| A. Bearing walls | 5 | 2 |", [[0, 71], [40, 72]])
    _table_notes(entries)
    assert entries["X_table_3-1"]["text"].endswith(
        "Cd.\nd. NL = Not limited and NP = Not permitted.\ne. See Section 12.2.5.4 for the limits."
    )
    assert "a. b. Response" in entries["X_table_3-1"]["text"] and "Response" not in entries["X_3-6.2"]["text"]

    # notes that do not go on in letters ("d." after "c."), on the next page, are not the table's
    single = clause.replace("d. NL", "g. NL")
    entries["X_3-6.2"] = _clause_entry(single, [[0, 71], [p72, 72], [p73, 73]])
    entries["X_table_3-1"] = _table_entry("X_3-6.2", caption, "| A. Bearing walls | 5 | 2 |", [[0, 71], [40, 72]])
    _table_notes(entries)
    assert entries["X_table_3-1"]["text"].endswith("c. Deflection amplification factor, Cd.")
    assert "g. NL = Not limited" in entries["X_3-6.2"]["text"]

    # one "a ..." line after a line of the clause stays the clause's
    plain = f"3-6.3 Other\n{caption}\nThe systems are listed by type.\na. Bearing walls are the first type.\n"
    entries = {
        "X_3-6.3": _clause_entry(plain, [[0, 71]]),
        "X_table_3-1": _table_entry("X_3-6.3", caption, "| A. Bearing walls | 5 | 2 |", [[0, 71]]),
    }
    _table_notes(entries)
    assert entries["X_3-6.3"]["text"] == plain


def test_a_tables_own_lettered_notes_going_on_at_the_next_pages_top_are_its_too() -> None:
    """A table whose notes "a." to "i." are already its own, on its last page, and whose note "j." (after
    a change mark) opens the next page, where the clause around the table goes on: "j." is the table's.
    A next page that opens with another letter, or with the clause's words, stays the clause's."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    caption = "Table E-1 Minimum Uniformly Distributed Live Loads"
    clause = f"E-1 REFERENCES.\nAll references are to the building code.\n{caption}\n"
    page182 = len(clause)
    clause += "j. \\4\\ Rack space should be verified for each project. /4/\n(2) Further text."
    notes = "| Offices | 50 |\nh. All attics must be designed for equipment.\ni. For pedestrian bridges see AASHTO."

    def entries_for(text: str) -> dict[str, dict[str, Any]]:
        return {
            "X_E-1": _clause_entry(text, [[0, 175], [page182, 182]]),
            "X_table_E-1": _table_entry("X_E-1", caption, notes, [[0, 175], [30, 181]]),
        }

    entries = entries_for(clause)
    _table_notes(entries)
    table = entries["X_table_E-1"]
    assert table["text"].endswith("see AASHTO.\nj. \\4\\ Rack space should be verified for each project. /4/")
    assert table["pages"] == [175, 181, 182] and table["page_map"][-1] == [table["text"].index("j. "), 182]
    assert (
        entries["X_E-1"]["text"]
        == f"E-1 REFERENCES.\nAll references are to the building code.\n{caption}\n(2) Further text."
    )
    for other in ("k. Rack space should be verified.", "Rack space should be verified."):
        entries = entries_for(clause.replace("j. \\4\\ Rack space should be verified for each project. /4/", other))
        before = entries["X_E-1"]["text"]
        _table_notes(entries)
        assert entries["X_E-1"]["text"] == before


def test_a_note_under_a_table_ends_with_its_page() -> None:
    """The next page's lines are not the note's: there a table whose caption OCR could not read ("T hI
    A 10 St") would otherwise be taken into the table before it, cited on that table's page."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    clause = (
        "Annex A\nTable A.9 - Stored products - foodstuffs\nNOTE See Section 4.\n"
        "T hI A 10 St\nbeverages\nbeer 10,0\nliquid gas\npropane 5,0\n"
    )
    page42 = clause.index("T hI")
    entries = {
        "X_annex_A": {"kind": "annex", "text": clause, "page_map": [[0, 41], [page42, 42]], "pages": [41, 42]},
        "X_table_A.9": {
            "kind": "table",
            "parent": "X_annex_A",
            "caption": "Table A.9 - Stored products - foodstuffs",
            "text": "Table A.9 - Stored products - foodstuffs\n| eggs | 4,0 |",
            "page_map": [[0, 41]],
            "pages": [41],
        },
    }
    _table_notes(entries)
    assert entries["X_table_A.9"]["text"].endswith("| eggs | 4,0 |\nNOTE See Section 4.")
    assert entries["X_table_A.9"]["pages"] == [41]
    rest = entries["X_annex_A"]
    assert "liquid gas" in rest["text"] and 42 in rest["pages"]
    assert rest["page_map"][-1] == [rest["text"].index("T hI"), 42]


def test_cutting_a_tables_note_out_of_a_clause_keeps_its_pages_right() -> None:
    from clausewise.nodes.ingest.merge_sections import _cut

    text = "5.3 Title\n(1) On page 20.\nNOTE on page 21 only\n(2) On page 22."
    note = text.index("NOTE")
    entry = {"text": text, "page_map": [[0, 20], [note, 21], [text.index("(2)"), 22]], "pages": [20, 21, 22]}
    _cut(entry, note, text.index("\n(2)"))
    assert entry["text"] == "5.3 Title\n(1) On page 20.\n(2) On page 22."
    assert entry["page_map"] == [[0, 20], [entry["text"].index("(2)"), 22]]
    assert entry["pages"] == [20, 22]


def test_headings_an_ocr_text_layer_misread_are_found_where_the_sequence_expects_them() -> None:
    """A scan's text layer reads a title's capital as a small letter ("1.3 large and ..."), puts a
    space into an annex's clause number ("A 1.3" for A1.3) and reads an 8 as S ("B.S" for B.8): each is
    the heading the sequence expects next, and opens its own section. A sentence opening with a clause
    number ("1.4 and 1.5 apply ...") and a small-letter line the clause's paragraph (1) does not
    follow stay text."""

    def scanned(n: int, texts: list[str]) -> dict[str, Any]:
        return {**_page(n, texts), "scanned": True}

    pages = [
        scanned(
            1,
            [
                "1 General",
                "1.1 Scope",
                "(1) This part gives wind actions.",
                "1.2 Orography",
                "(1) Where orography increases wind velocities, this is taken into account.",
                "1.3 large and considerably higher neighbouring structures",
                "(1) If the structure is close to a structure twice as high, wind may increase.",
                "1.4 and 1.5 apply to built-up areas",
                "1.4 closely spaced buildings",
                "(2) The rule of (1) applies.",
            ],
        ),
        scanned(
            2,
            [
                "Annex A1 (normative)",
                "Supplementary rules",
                "A1.2 Serviceability limit states",
                "(1) Combinations are those of EN 1990.",
                "A 1.3 Horizontal actions",
                "(1)P Horizontal actions shall be taken into account.",
            ],
        ),
        scanned(
            3,
            [
                "Annex B (informative)",
                "Robustness",
                "B.7 Nominal section of load-bearing wall",
                "(1) The nominal length is 2,25H.",
                "B.S Key elements",
                "(1) A key element should sustain an accidental design action.",
            ],
        ),
    ]
    sections = build_sections(DocId("CEN", "EN9999"), "Test", pages)
    titles = {s["section"]: s["title"] for s in sections.values()}
    assert titles["1.3"] == "Large and considerably higher neighbouring structures"
    assert "1.4 and 1.5 apply to built-up areas" in sections["CEN_EN9999_1.3"]["text"]
    assert "1.4 closely spaced buildings" in sections["CEN_EN9999_1.3"]["text"]  # no paragraph (1) after it
    assert "1.4" not in titles
    assert titles["A1.3"] == "Horizontal actions"
    assert "Horizontal actions shall" not in sections["CEN_EN9999_A1.2"]["text"]
    assert titles["B.8"] == "Key elements" and sections["CEN_EN9999_B.8"]["parent"] == "CEN_EN9999_annex_B"
    assert "key element" not in sections["CEN_EN9999_B.7"]["text"]


def test_a_table_or_figure_is_labelled_with_its_number_as_printed() -> None:
    """ "Table 7.4a" is cited as printed, not "Table 7.4A"; its key keeps the same number."""
    page = _page(1, ["1 Scope", "(1) The pressure coefficients are given in Table 7.4a and Figure 7.4b."])
    for kind, number in (("table", "7.4a"), ("figure", "7.4b")):
        caption = f"{kind.title()} {number}: Pressure coefficients"
        page["objects"].append({"kind": kind, "number": number, "title": "Pressure coefficients",
                                "caption": caption, "bbox": [70.0, 300.0, 500.0, 400.0]})  # fmt: skip
    sections = build_sections(DocId("ACME", "WC1"), "Wind code", [page])
    assert sections["ACME_WC1_table_7.4a"]["section"] == "Table 7.4a"
    assert sections["ACME_WC1_figure_7.4b"]["section"] == "Figure 7.4b"


def test_a_table_run_on_over_pages_that_print_its_column_heads_again_is_one_table() -> None:
    """Table 2-2 runs on over the next page without its caption, its column heads printed again: that
    page's rows are the table's, up to the clause's next paragraph, and are no longer text of the clause
    around the table. A page that does not open with the heads stays the clause's."""
    heads = ["Risk", "Category", "Nature of Occupancy", "Seismic Factor"]
    page1 = _page(1, ["1 General", "1.1 Risk categories", "(1) Risk categories are given in Table 2-2.",
                      "Table 2-2 Risk Category of Buildings"])  # fmt: skip
    page1["objects"].append({"kind": "table", "number": "2-2", "title": "Risk Category of Buildings",
                             "caption": "Table 2-2 Risk Category of Buildings", "bbox": [70.0, 130.0, 500.0, 800.0],
                             "body": "| Risk | Category | Nature of Occupancy | Seismic Factor |\n| I | | Sheds | 1 |",
                             "rows": [heads, ["I", "", "Sheds", "1"]]})  # fmt: skip
    page2 = _page(2, [*heads, "II Dormitories and offices 1.00", "III Schools 1.25", "(2) The factor applies to all."])
    page3 = _page(3, ["(3) Risk Category IV buildings are essential facilities."])
    sections = build_sections(DocId("ACME", "C1"), "Code", [page1, page2, page3])
    table, clause = sections["ACME_C1_table_2-2"], sections["ACME_C1_1.1"]
    assert table["pages"] == [1, 2] and "III Schools 1.25" in table["text"]
    assert "III Schools" not in clause["text"] and "Dormitories" not in clause["text"]
    assert "(2) The factor applies to all." in clause["text"] and "(3) Risk Category IV" in clause["text"]
    assert clause["pages"] == [1, 2, 3]


def test_a_caption_naming_two_parts_of_a_figure_is_a_caption_not_a_heading(tmp_path: Any) -> None:
    """A guide's caption may name two drawings at once ("Figure 4a and b  Through the trap", set in bold
    under them): it is the figure's caption (keyed by its first part), not a heading, so the paragraphs
    after it stay under the section's own heading."""
    import pymupdf

    from clausewise.nodes.ingest.extract_page import read_page

    doc = pymupdf.open()
    doc.new_page(width=595, height=842).insert_text((57, 200), "A guide to towers", fontsize=24, fontname="hebo")
    page = doc.new_page(width=595, height=842)
    page.insert_text((57, 100), "Tower scaffolds", fontsize=14, fontname="hebo")
    y = 130.0
    for i in range(6):
        page.insert_text((57, y), f"Sentence {i} on towers runs on across the page as text does here.", fontsize=10)
        y += 13
    page.insert_text((57, y), "Never carry out these activities on a tower:", fontsize=10)
    for x in (60, 300):  # two drawings side by side
        page.draw_rect(pymupdf.Rect(x, y + 15, x + 200, y + 135), color=(0, 0, 0), width=1)
        page.draw_line(pymupdf.Point(x, y + 15), pymupdf.Point(x + 200, y + 135), color=(0, 0, 0), width=1)
    y += 150
    page.insert_text((57, y), "Figure 4a and b  Through the trap", fontsize=9, fontname="hebo")
    y += 25
    for i in range(6):
        page.insert_text((57, y), f"Line {i} after the drawings says how to climb a tower from inside it.", fontsize=10)
        y += 13
    path = tmp_path / "guide.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        pages = [read_page(pdf, i, crop=False) for i in range(len(pdf))]
    sections = build_sections(DocId("ACME", "G2"), "Guide", pages)
    assert not any("Through the trap" in (s["title"] or "") for s in sections.values() if s["kind"] != "figure")
    towers = next(s for s in sections.values() if s["title"] == "Tower scaffolds")
    assert "Line 5 after the drawings" in towers["text"]
    (figure,) = [s for s in sections.values() if s["kind"] == "figure"]
    assert figure["key"] == "ACME_G2_figure_4a" and figure["title"] == "Through the trap"


def test_a_caption_letter_a_scan_reads_in_lower_case_is_the_annex_it_is_printed_in() -> None:
    """A scan may read the annex letter of a caption in lower case ("Figure e.8" for "Figure C.8"): in
    Annex C the figure is C.8, with its title and drawing; outside an annex of that letter the number is
    no object's (its line stays text), not a figure "e.8"."""
    from clausewise.nodes.ingest.extract_page import parse_caption

    assert parse_caption("Figure e.8") == ("figure", "e.8", "")
    assert parse_caption("Figure a.8") is None and parse_caption("Figure e8") is None
    body = [
        f"(1) Maps of the snow load at sea level for region {n}, long enough to be a clause here." for n in range(4)
    ]
    pages = [
        _page(1, ["1 General", "1.1 Scope", *body]),
        _page(2, ["Annex C (informative)", "European ground snow load maps", "C.1 General", *body]),
        _page(3, ["Sweden, Finland: Snow Load at Sea Level", "Figure e.8"]),
    ]
    obj = {"kind": "figure", "number": "e.8", "title": "Sweden, Finland: Snow Load at Sea Level",
           "caption": "Figure e.8", "bbox": [70.0, 80.0, 500.0, 700.0]}  # fmt: skip
    pages[2]["objects"].append(dict(obj))
    sections = build_sections(DocId("CEN", "EN9999"), "Snow", pages)
    figure = sections["CEN_EN9999_figure_C.8"]
    assert figure["section"] == "Figure C.8" and figure["title"] == obj["title"]
    assert figure["parent"] == "CEN_EN9999_C.1" and figure["raw_number"] == "e.8"  # the clause on its page, in Annex C
    outside = [_page(1, ["1 General", "1.1 Scope", *body, "Figure e.8"])]
    outside[0]["objects"].append(dict(obj))
    sections = build_sections(DocId("CEN", "EN9999"), "Snow", outside)
    assert not [s for s in sections.values() if s["kind"] == "figure"]
    assert "Figure e.8" in sections["CEN_EN9999_1.1"]["text"]


def test_a_table_whose_caption_carries_a_change_mark_set_apart_is_the_clause_its_printed_in() -> None:
    """ "~ Table 7.5 - ..." (an amendment mark, a space, the caption): the table belongs to the clause
    that prints its caption, with the NOTE under it, not to the next clause on the page."""
    page = _page(1, ["1 Roofs", "1.1 Hipped roofs", "(3) The recommended values are given in Table 7.5.",
                     "~ Table 7.5 - Recommended values for hipped roofs",
                     "NOTE 1 Linear interpolation may be used between values of the same sign.",
                     "1.2 Multispan roofs", "(1) Pressure coefficients are given in Table 7.6."])  # fmt: skip
    page["objects"].append({"kind": "table", "number": "7.5", "title": "Recommended values for hipped roofs",
                            "caption": "Table 7.5 - Recommended values for hipped roofs",
                            "bbox": [70.0, 300.0, 500.0, 400.0]})  # fmt: skip
    sections = build_sections(DocId("ACME", "WC1"), "Wind code", [page])
    table, clause = sections["ACME_WC1_table_7.5"], sections["ACME_WC1_1.1"]
    assert table["parent"] == "ACME_WC1_1.1"
    assert "NOTE 1 Linear interpolation" in table["text"] and "Linear interpolation" not in clause["text"]


def test_the_documents_warnings_name_pages_nobody_can_search_and_tables_not_read_as_rows() -> None:
    pages = [
        {"page": 1, "has_text": True, "has_image": False},
        {"page": 2, "has_text": False, "has_image": True},
        {"page": 3, "has_text": True, "has_image": False, "tables_failed": True},
        {"page": 4, "has_text": True, "has_image": True, "tables_failed": False},
    ]
    assert page_warnings(pages) == [
        "1 page(s) have an image but no text layer (not searchable): 2",
        "1 page(s) whose drawn tables could not be read as rows (read line by line): 3",
    ]
    assert page_warnings(pages[:1]) == []
    many = [{"page": n, "has_text": True, "has_image": False, "tables_failed": True} for n in range(1, 26)]
    assert page_warnings(many) == [
        "25 page(s) whose drawn tables could not be read as rows (read line by line): "
        + ", ".join(map(str, range(1, 21)))
        + " ..."
    ]


def test_unnumbered_headings_nest_by_how_strongly_they_are_set(tmp_path: Any) -> None:
    """A born-digital guide that numbers its paragraphs but not its headings: a chapter in large type,
    its sections in bold, their parts in bold italic. Each heading sits under the nearest heading above it
    set more strongly, so the same part heading in two chapters ("Inspections and reports") is told apart
    by its chapter; the title page's display title is no chapter's parent; and a passage's `within` (the
    headings above it, as the brief shows them) names them."""
    import pymupdf

    from clausewise.nodes.ingest.extract_page import read_page
    from clausewise.nodes.ingest.merge_sections import with_neighbours
    from clausewise.tools.query_tasks import headings_above

    doc = pymupdf.open()
    title = doc.new_page(width=595, height=842)  # a title page with a lead text: not a cover
    title.insert_text((57, 200), "Safety on widget sites", fontsize=28, fontname="hebo")
    for i in range(12):
        title.insert_text(
            (57, 260 + 16 * i), f"This guide, line {i}, is for all who plan, manage and do the work.", fontsize=10
        )
    n = 0
    for chapter, section in (("Working at height", "Scaffolds"), ("Groundwork", "Trenches")):
        for lines in (
            [(chapter, 20.0, "helv")],
            [(section, 12.0, "hebo")],
            [("Inspections and reports", 10.0, "hebi")],
        ):
            page = doc.new_page(width=595, height=842)
            y = 150.0
            for text, size, font in lines:
                page.insert_text((57, y), text, fontsize=size, fontname=font)
                y += 30
            for _ in range(6):
                n += 1
                page.insert_text((57, y), str(n), fontsize=10)
                page.insert_text(
                    (90, y),
                    f"Paragraph {n} on {section.lower()} asks the contractor to take care of the work, "
                    "the public and the site at all times.",
                    fontsize=10,
                )
                y += 24
    path = tmp_path / "nested.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        pages = [read_page(pdf, i, crop=False) for i in range(len(pdf))]
    sections = with_neighbours(build_sections(DocId("ACME", "SG2"), "Guide", pages))

    def chain(key: str) -> list[str]:
        titles = []
        while sections[key].get("parent"):
            key = sections[key]["parent"]
            titles.append(sections[key]["title"])
        return titles

    first = next(k for k, s in sections.items() if s["text"].startswith("15 Paragraph 15"))
    second = next(k for k, s in sections.items() if s["text"].startswith("33 Paragraph 33"))
    assert chain(first) == ["Inspections and reports", "Scaffolds", "Working at height"]
    assert chain(second) == ["Inspections and reports", "Trenches", "Groundwork"]
    assert sections[first]["parent"] != sections[second]["parent"]
    assert sections["ACME_SG2_safety-on-widget-sites"]["kind"] == "front"  # read as a heading, set largest
    assert not any(s["parent_title"] == "Safety on widget sites" for s in sections.values())
    # the two nearest headings above it besides its own
    assert headings_above(sections.get, second) == ["Groundwork", "Trenches"]
    assert headings_above(sections.get, first) == ["Working at height", "Scaffolds"]
    assert headings_above(sections.get, sections[second]["parent"]) == ["Groundwork", "Trenches"]


def test_footnotes_numbered_as_the_captions_superscripts_go_with_the_table() -> None:
    """A caption that carries its footnotes' numbers as superscripts on its last word ("Performance
    Objectives1,2") has them printed under the table as lines opening with the number: they (and the
    footnotes numbered on after them) are the table's, up to the clause's next paragraph. A line
    opening with a number under a table whose caption carries no such marks is the clause's."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    clause = (
        "4-2.2 Objectives\n(1) Use the objectives of Table 4-1.\n"
        "Table 4-1 Structural Performance Objectives1,2\n1 CP = Collapse Prevention; LS = Life Safety\n"
        "2 See Section 2 for the hazard levels.\n3 For Risk Category III, Tier 1 screening is to use the checklists.\n"
        "(2) Further text.\nTable 4-2 Wall ties\n1 Clean the cavity before the ties are fixed.\n(3) More text."
    )
    entries = {
        "X_4-2.2": _clause_entry(clause, [[0, 94]]),
        "X_table_4-1": _table_entry(
            "X_4-2.2", "Table 4-1 Structural Performance Objectives1,2", "| Risk Category III | LS |", [[0, 94]]
        ),
        "X_table_4-2": _table_entry("X_4-2.2", "Table 4-2 Wall ties", "| Tie | Spacing |", [[0, 94]]),
    }
    _table_notes(entries)
    notes = (
        "1 CP = Collapse Prevention; LS = Life Safety\n2 See Section 2 for the hazard levels.\n"
        "3 For Risk Category III, Tier 1 screening is to use the checklists."
    )
    assert entries["X_table_4-1"]["text"].endswith(f"| Risk Category III | LS |\n{notes}")
    assert entries["X_table_4-2"]["text"] == "Table 4-2 Wall ties\n| Tie | Spacing |"
    rest = entries["X_4-2.2"]["text"]
    assert notes not in rest and "Objectives1,2\n(2) Further text." in rest
    assert "Table 4-2 Wall ties\n1 Clean the cavity" in rest


def test_a_chapter_heading_after_another_codes_numbered_clause_follows_the_codes_own_sequence() -> None:
    """A code that modifies another code's clauses under its own chapters ("1-2", then "1603.1" to
    "1603.12" in bold, then "CHAPTER 2 NONBUILDING STRUCTURES"; "26.12.1" before "CHAPTER 3"): a chapter
    heading follows the chapter before it, not the other code's "1603.12" or "26.12.1"; it opens a
    section, the chapter's clauses sit under it, and the last modified clause does not take its heading as text."""
    body = ("The text of the clause goes on for a while here, set in the plain body font, not bold.", False, "")
    lines = [("CHAPTER 1 MODIFICATIONS TO IBC", True, ""), ("1-1 GENERAL.", True, ""), body]
    for n in range(1, 13):
        lines += [(f"1603.{n} - Modified Clause Number {n} [Addition]", True, ""), body, body, body]
    lines += [("CHAPTER 2 NONBUILDING STRUCTURES", True, ""), ("2-1 HIGHWAY BRIDGE DESIGN.", True, ""), body]
    lines += [("2-2 ASCE 7 CHAPTER 26 - WIND LOADS.", True, ""), ("26.12.1 - General. [Supplement]", True, ""), body]
    lines += [("CHAPTER 3 EXISTING BUILDINGS", True, ""), ("3-1 GENERAL.", True, ""), body]
    sections = build_sections(
        DocId("DOD", "UFC3-301-01"), "Test", [_typo_page(1, lines[:30]), _typo_page(2, lines[30:])]
    )
    by_code = {s["section"]: s for s in sections.values() if s["kind"] == "clause"}
    assert by_code["2"]["title"] == "NONBUILDING STRUCTURES"
    assert by_code["2-1"]["parent"] == "DOD_UFC3-301-01_2"
    assert "CHAPTER 2" not in by_code["1603.12"]["text"]
    assert by_code["1603.12"]["title"] == "Modified Clause Number 12 [Addition]"
    assert by_code["3"]["title"] == "EXISTING BUILDINGS" and by_code["3-1"]["parent"] == "DOD_UFC3-301-01_3"
    assert "CHAPTER 3" not in by_code["26.12.1"]["text"]


def test_a_sentence_naming_a_figure_at_a_lines_start_on_a_later_page_does_not_continue_the_figure(
    tmp_path: Any,
) -> None:
    """A clause on a later page whose sentence breaks before "Figure 2.1 (a)) and ..." does not carry the
    figure on to that page: the figure keeps its own page and the clause its sentence."""
    import pymupdf

    from clausewise.nodes.ingest.extract_page import read_page

    doc = pymupdf.open()
    heading = {"fontsize": 11, "fontname": "hebo"}
    first = doc.new_page(width=595, height=842)
    first.insert_text((72, 90), "1 Scope", **heading)
    first.insert_text((72, 110), "(1) This part gives the thermal actions on walls of buildings.", fontsize=9)
    first.insert_text((72, 160), "(2) The temperature profile is made of the components shown below.", fontsize=9)
    first.draw_rect(pymupdf.Rect(150, 190, 440, 340), width=1.5)
    first.insert_text((180, 370), "Figure 2.1: Diagrammatic representation of constituent components", fontsize=9)
    second = doc.new_page(width=595, height=842)
    second.insert_text((72, 90), "1.1 Consideration of temperature components", **heading)
    lines = [
        "(1)P Both the uniform temperature component of the temperature distribution across the wall (see",
        "Figure 2.1 (a)) and the linearly varying temperature difference component across the wall (see",
        "Figure 2.1 (b)) shall be considered for each layer of the structure in turn.",
    ]
    for i, line in enumerate(lines):
        second.insert_text((72, 115 + 11 * i), line, fontsize=9)
    path = tmp_path / "figure-named-later.pdf"
    doc.save(path)
    with pymupdf.open(path) as pdf:
        pages = [read_page(pdf, i, crop=False) for i in range(len(pdf))]
    sections = build_sections(DocId("CEN", "EN1991-1-5"), "Thermal actions", pages)
    by_code = {s["section"]: s for s in sections.values()}
    figure = by_code["Figure 2.1"]
    assert figure["pages"] == [1]
    assert "shall be considered" not in figure["text"] and "Consideration" not in figure["text"]
    assert "(b)) shall be considered for each layer" in by_code["1.1"]["text"]


def test_a_key_and_notes_opening_the_page_after_a_table_that_fills_its_pages_are_the_tables() -> None:
    """A table that fills its pages, its caption on the first, with its key and numbered notes at the
    top of the page after its last and no caption there: the lines that open with what its cells print
    ("LS", "NBM", "1988") or with the next note's number, the lines going on from them, and one
    sentence between them are the table's, up to the clause's next paragraph. Where that page opens
    with the clause's own words, or with a token the table does not print, it stays the clause's."""
    from clausewise.nodes.ingest.merge_sections import _table_notes

    caption = "Table 4-2 Benchmark Years for Buildings"
    head = f"4-3.2.2 Repairs\nIf repairs are made, the requirements must be met.\n{caption}\n"
    key = (
        "LS Only buildings evaluated to the Life Safety level may be considered Benchmark Buildings.\n"
        "NBM - No benchmark year; buildings need to be evaluated.\n"
        "1 Building Type refers to one of the Common Building Types defined in\n"
        "the standard's Table 3-1.\n2 Buildings on hillside sites must not be considered Benchmark Buildings.\n"
        "Years shown in table refer to editions of document.\n"
        "1988 - TM 5-809-10-2, Seismic Design Guidelines for Upgrading Existing Buildings."
    )
    rows = "| Building Type1,2 | UBC LS | IO |\n| Wood Frame | 1976 | NBM |\n| Steel Frame | 1988 | LS |"

    def entries_for(after: str) -> dict[str, dict[str, Any]]:
        return {
            "X_4-3.2.2": _clause_entry(head + after, [[0, 99], [len(head) - len(caption) - 1, 100], [len(head), 103]]),
            "X_table_4-2": _table_entry("X_4-3.2.2", caption, rows, [[0, 100], [40, 101], [80, 102]]),
        }

    entries = entries_for(key + "\n(2) The clause goes on.")
    _table_notes(entries)
    table, clause = entries["X_table_4-2"], entries["X_4-3.2.2"]
    assert table["text"].endswith(f"| Steel Frame | 1988 | LS |\n{key}")
    assert table["pages"] == [100, 101, 102, 103] and table["page_map"][-1] == [table["text"].index("LS Only"), 103]
    assert clause["text"] == f"{head}(2) The clause goes on."
    for own in (
        "The existing structure must be evaluated in accordance with the standard.\n1 More text.",
        "GSREB - Guidelines for Seismic Retrofit of Existing Buildings.\nNBM - No benchmark year.",
        "3 Buildings on hillside sites must be evaluated.\nNBM - No benchmark year.",
        "LS Only buildings evaluated to the Life Safety level.\nThe clause goes on in a paragraph of its own.",
    ):
        entries = entries_for(own)
        before = entries["X_4-3.2.2"]["text"]
        _table_notes(entries)
        assert entries["X_4-3.2.2"]["text"] == before, own
