"""check-document's identification: the printed designation (title page, running headers and footers)
over metadata and distributor stamps, the edition from the designation's own year or the title page's
date, the title from the title page unless the metadata holds a real one (nodes/ingest/check_document.py).

The synthetic PDFs are small PyMuPDF documents, one per family style; the corpus tests read the PDFs in
../shared/corpus and are skipped when it is absent."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pymupdf
import pytest

from clausewise.nodes.ingest.check_document import IngestError, identify

CORPUS = Path(__file__).resolve().parents[3] / "../shared/corpus"
RAW, PUBLIC = CORPUS / "raw", CORPUS / "public"


@dataclass
class Layout:
    """A code as printed: a title page, then body pages with running headers and footers."""

    cover: list[tuple[str, float]]  # title-page lines and their font sizes
    header: list[str] = field(default_factory=list)  # running header lines, every body page
    footer: list[str] = field(default_factory=list)
    stamp: str | None = None  # a distributor's stamp in the top margin of every page
    meta: dict[str, str] = field(default_factory=dict)
    body_pages: int = 4
    cover_top: str | None = None  # a line in the cover's top margin only


def make_pdf(path: Path, layout: Layout) -> Path:
    doc = pymupdf.open()
    body = [
        "1 Scope",
        "(1) This document gives rules for the design of buildings.",
        "(2) It is used with the references given in 1.2 and see EN 1990 for the basis of design.",
        "2 Requirements",
        "(1) The loads shall be taken from the tables of this document.",
    ]
    for n in range(1 + layout.body_pages):
        page = doc.new_page(width=595, height=842)
        if layout.stamp:
            page.insert_text((40, 18), layout.stamp, fontsize=6)
        if n == 0:
            if layout.cover_top:
                page.insert_text((60, 30), layout.cover_top, fontsize=10)
            y = 160.0
            for text, size in layout.cover:
                page.insert_text((60, y), text, fontsize=size)
                y += size * 1.6
            continue
        for i, text in enumerate(layout.header):
            page.insert_text((60, 40 + 11 * i), text, fontsize=9)
        for i, text in enumerate(layout.footer):
            page.insert_text((60, 800 + 11 * i), text, fontsize=9)
        for i, text in enumerate(body):
            page.insert_text((60, 120 + 16 * i), text, fontsize=10)
    doc.set_metadata(layout.meta)
    doc.save(path)
    doc.close()
    return path


def read(path: Path, publisher: str | None = None, code: str | None = None) -> dict[str, object]:
    with pymupdf.open(path) as doc:
        return identify(doc, path, publisher, code)


LICENSED = "Licensed copy: ACME Consultants Ltd, 14/06/2005, Uncontrolled copy"

FAMILIES = {
    "indian": (
        Layout(
            cover=[
                ("Indian Standard", 14),
                ("DESIGN LOADS FOR BUILDINGS AND STRUCTURES", 18),
                ("CODE OF PRACTICE PART 3 WIND LOADS", 18),
                ("IS 875 (Part 3) : 2015", 22),
                ("ICS 91.080.01", 9),
                ("BUREAU OF INDIAN STANDARDS", 10),
            ],
            header=["IS 875 (Part 3)"],
            # a stamp that names the code with another year, on every page: more often than the year printed
            stamp="Supplied by Book Supply Bureau under the licence from BIS for ACME Ltd - IS 875 (Part 3) : 2005",
            meta={"title": "875_2.pdf"},
        ),
        (
            "BIS",
            "IS875-3",
            "IS 875 (Part 3)",
            "2015",
            "DESIGN LOADS FOR BUILDINGS AND STRUCTURES CODE OF PRACTICE PART 3 WIND LOADS",
        ),
    ),
    "ufc": (
        Layout(
            cover=[("UNIFIED FACILITIES CRITERIA (UFC)", 24), ("STRUCTURAL ENGINEERING", 24)],
            header=["UFC 3-301-01", "11 April 2023", "Change 4, 3 June 2025"],
            stamp=LICENSED,
            meta={"title": "P06100-1.fm"},
        ),
        ("DOD", "UFC3-301-01", "UFC 3-301-01", "2023", "UNIFIED FACILITIES CRITERIA (UFC) STRUCTURAL ENGINEERING"),
    ),
    "fema": (
        Layout(
            cover=[("Seismic Performance", 40), ("Assessment of Buildings", 40), ("FEMA P-58-6 / December 2018", 20)],
            footer=["2-10 | 2: Implementing the Method | FEMA P-58-6"],
            meta={"title": "Microsoft Word - P58-6 final.docx"},
        ),
        ("FEMA", "FEMA-P-58-6", "FEMA P-58-6", "2018", "Seismic Performance Assessment of Buildings"),
    ),
    "hse": (
        Layout(
            cover=[
                ("Health and safety", 30),
                ("in construction", 30),
                ("This is a free-to-download, web-friendly version of HSG150", 10),
                ("(Third edition, published 2006).", 10),
            ],
            footer=["Health and safety in construction   Page 4 of 141"],
            meta={"title": "Health and safety in construction\nHSG150", "author": "Health and Safety Executive (HSE)"},
        ),
        ("HSE", "HSG150", "HSG150", "2006", "Health and safety in construction"),
    ),
    "as-nzs": (
        Layout(
            cover=[("AS/NZS 1170.0:2002", 22), ("Structural design actions", 18), ("Part 0: General principles", 18)],
            header=["AS/NZS 1170.0:2002"],
            stamp="Licensed to J Smith on 01 Mar 2005. Single user licence only. Network use prohibited.",
        ),
        ("SA-SNZ", "AS-NZS1170.0", "AS/NZS 1170.0", "2002", "Structural design actions Part 0: General principles"),
    ),
    "asce": (
        Layout(
            cover=[("ASCE/SEI 7-22", 24), ("Minimum Design Loads and Associated Criteria", 18), ("for Buildings", 18)],
            footer=["ASCE STANDARD ASCE/SEI 7-22"],
            meta={"title": "7-22.pdf"},
        ),
        ("ASCE", "ASCE7", "ASCE 7", "2022", "Minimum Design Loads and Associated Criteria for Buildings"),
    ),
    "aci": (
        Layout(
            cover=[("ACI 318-19", 26), ("Building Code Requirements", 18), ("for Structural Concrete", 18)],
            header=["ACI 318-19"],
        ),
        ("ACI", "ACI318", "ACI 318", "2019", "Building Code Requirements for Structural Concrete"),
    ),
    "din": (
        Layout(
            cover=[("DIN 1045-1", 24), ("Tragwerke aus Beton, Stahlbeton und Spannbeton", 16), ("August 2008", 10)],
            header=["DIN 1045-1:2008-08"],
        ),
        ("DIN", "DIN1045-1", "DIN 1045-1", "2008", "Tragwerke aus Beton, Stahlbeton und Spannbeton"),
    ),
    "csa": (
        Layout(
            cover=[("CSA A23.3-14", 24), ("Design of concrete structures", 18)],
            footer=["CSA A23.3-14 (R2019)"],
        ),
        ("CSA", "CSA-A23.3", "CSA A23.3", "2014", "Design of concrete structures"),
    ),
    "nzs": (
        Layout(
            cover=[
                ("NZS 3101.1:2006", 24),
                ("Concrete structures standard", 18),
                ("Part 1 - The design of concrete structures", 14),
            ],
            header=["NZS 3101.1:2006"],
        ),
        ("SNZ", "NZS3101.1", "NZS 3101.1", "2006", "Concrete structures standard"),
    ),
    "bs-en": (
        Layout(
            cover=[
                ("BS EN 1991-1-3:2003", 22),
                ("Eurocode 1 - Actions on structures", 18),
                ("Part 1-3: Snow loads", 18),
            ],
            header=["BS EN 1991-1-3:2003", "EN 1991-1-3:2003 (E)"],
            stamp="Licensed Copy: Univ of Example, 05/04/2005, Uncontrolled Copy, (c) BSI",
        ),
        ("CEN", "EN1991-1-3", "EN 1991-1-3", "2003", "Eurocode 1 - Actions on structures Part 1-3: Snow loads"),
    ),
    "na-to-bs-en": (
        Layout(
            cover=[
                ("NA to BS EN 1991-1-3:2003", 22),
                ("UK National Annex to Eurocode 1", 18),
                ("Actions on structures", 18),
            ],
            header=["NA to BS EN 1991-1-3:2003"],
        ),
        ("BSI", "NA-EN1991-1-3", "NA to EN 1991-1-3", "2003", "UK National Annex to Eurocode 1 Actions on structures"),
    ),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_identifies_each_family_from_the_printed_page(tmp_path: Path, family: str) -> None:
    layout, (publisher, code, display, edition, title) = FAMILIES[family]
    doc = read(make_pdf(tmp_path / "code.pdf", layout))
    assert (doc["publisher"], doc["code"], doc["display"], doc["edition"]) == (publisher, code, display, edition)
    assert doc["key"] == f"{publisher}_{code}"
    assert doc["title"] == title


def test_a_designation_only_in_a_distributor_stamp_is_not_the_document(tmp_path: Path) -> None:
    layout = Layout(
        cover=[("Wind loads on garden sheds", 24), ("March 2020", 14)],
        footer=["FEMA P-999"],  # on the body pages; the stamp is on every page
        stamp="Licensed to ACME for IS 875 (Part 3) : 1987 users, downloaded 2005-06-14",
    )
    doc = read(make_pdf(tmp_path / "code.pdf", layout))
    assert (doc["key"], doc["edition"]) == ("FEMA_FEMA-P-999", "2020")


def test_a_designation_atop_the_cover_alone_names_the_document(tmp_path: Path) -> None:
    """Printed small in the cover's top margin and nowhere else (no running headers): the cover's own
    text names the code, as a line under its title would."""
    layout = Layout(
        cover=[("Indian Standard", 16), ("CODE OF PRACTICE FOR DESIGN LOADS", 16), ("PART 9 SAMPLE LOADS", 14)],
        cover_top="IS 875 (Part 9) : 2019",
    )
    doc = read(make_pdf(tmp_path / "code.pdf", layout))
    assert (doc["key"], doc["edition"]) == ("BIS_IS875-9", "2019")


def test_a_real_metadata_title_that_the_page_bears_out_is_kept(tmp_path: Path) -> None:
    layout = Layout(
        cover=[("EUROPEAN STANDARD", 20), ("EN 1991-1-3", 20), ("Eurocode 1: Actions on structures", 14)],
        header=["EN 1991-1-3:2003 (E)"],
        meta={"title": "EN 1991-1-3: Eurocode 1: Actions on structures"},
    )
    doc = read(make_pdf(tmp_path / "code.pdf", layout))
    assert doc["title"] == "EN 1991-1-3: Eurocode 1: Actions on structures"
    # a stale metadata title the pages do not bear out gives way to the title page
    layout.meta = {"title": "Template for internal reports and memoranda"}
    doc = read(make_pdf(tmp_path / "code2.pdf", layout))
    assert doc["title"] == "Eurocode 1: Actions on structures"


def test_guidance_without_a_designation_is_keyed_by_its_issuer_and_title(tmp_path: Path) -> None:
    layout = Layout(
        cover=[("Guidance", 50), ("Guide to tolerances and workmanship", 26), ("in new houses 2015", 26)],
        footer=["GUIDANCE - GUIDE TO TOLERANCES AND WORKMANSHIP IN NEW HOUSES 2015"],
        meta={"author": "Ministry of Housing and Works"},
    )
    doc = read(make_pdf(tmp_path / "guide.pdf", layout))
    assert (doc["publisher"], doc["code"], doc["edition"]) == ("MHW", "Guide-tolerances-workmanship-new", "2015")
    assert doc["title"] == "Guide to tolerances and workmanship in new houses 2015"


def test_nothing_readable_says_what_was_found_and_how_to_name_it(tmp_path: Path) -> None:
    layout = Layout(cover=[("Loads on garden sheds", 24), ("Draft for comment", 12)], meta={"title": "P06100-1.fm"})
    path = make_pdf(tmp_path / "shed.pdf", layout)
    with pytest.raises(IngestError) as err:
        read(path)
    message = str(err.value)
    assert "\n" not in message and message.startswith("shed.pdf: cannot tell which code this is")
    assert "Loads on garden sheds" in message and "P06100-1.fm" in message and "--code" in message
    doc = read(path, code="IS 875 (Part 3):2015")
    assert (doc["key"], doc["edition"], doc["title"]) == ("BIS_IS875-3", "2015", "Loads on garden sheds")


def test_code_and_publisher_overrides(tmp_path: Path) -> None:
    layout, _ = FAMILIES["indian"]
    path = make_pdf(tmp_path / "code.pdf", layout)
    assert read(path, code="IS 875 (Part 3)")["edition"] == "2015"  # same code: the printed edition stays
    assert read(path, publisher="bis-in")["key"] == "BIS-IN_IS875-3"
    for bad in ("..", "../etc/passwd", "a/b"):
        with pytest.raises(IngestError, match="not a document code"):
            read(path, code=bad)
    with pytest.raises(IngestError, match="not a publisher name"):
        read(path, publisher="..")


# ---------------------------------------------------------------- the corpus
EN_CORPUS = {
    "EN_1991-1-1_2002.pdf": ("CEN_EN1991-1-1", "2002"),
    "EN_1991-1-2_2002.pdf": ("CEN_EN1991-1-2", "2002"),
    "EN_1991-1-3_2003.pdf": ("CEN_EN1991-1-3", "2003"),
    "EN_1991-1-4_2005.pdf": ("CEN_EN1991-1-4", "2005"),
    "EN_1991-1-5_2003.pdf": ("CEN_EN1991-1-5", "2003"),
    "EN_1991-1-6_2005.pdf": ("CEN_EN1991-1-6", "2005"),
    "EN_1991-1-7_2006.pdf": ("CEN_EN1991-1-7", "2006"),
}


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(EN_CORPUS))
def test_en_corpus_keeps_its_keys_and_editions(name: str) -> None:
    if not (RAW / name).exists():
        pytest.skip("../shared/corpus is absent")
    doc = read(RAW / name)
    assert (doc["key"], doc["edition"]) == EN_CORPUS[name]
    assert str(doc["title"]).startswith(f"EN {EN_CORPUS[name][0].split('_EN')[1]}: Eurocode 1")


PUBLIC_CORPUS = {
    "UFC_3-301-01_2023_C4.pdf": ("DOD", "UFC3-301-01", "UFC 3-301-01", "2023", "Structural Engineering"),
    "FEMA_P-58-6_2018.pdf": (
        "FEMA",
        "FEMA-P-58-6",
        "FEMA P-58-6",
        "2018",
        "Guidelines for Performance-Based Seismic Design of Buildings",
    ),
    "HSE_HSG150_2006.pdf": ("HSE", "HSG150", "HSG150", "2006", "Health and safety in construction"),
    # no designation is printed: keyed by the issuer and the title's first words
    "MBIE_Tolerances_Guide_2015.pdf": (
        "MBIE",
        "Guide-tolerances-materials-workmanship",
        "Guide-tolerances-materials-workmanship",
        "2015",
        "Guide to tolerances, materials and workmanship in new residential construction",
    ),
}


@pytest.mark.corpus
@pytest.mark.parametrize("name", sorted(PUBLIC_CORPUS))
def test_public_corpus_identifies_without_code(name: str) -> None:
    if not (PUBLIC / name).exists():
        pytest.skip("../shared/corpus is absent")
    publisher, code, display, edition, title = PUBLIC_CORPUS[name]
    doc = read(PUBLIC / name)
    assert (doc["publisher"], doc["code"], doc["display"], doc["edition"]) == (publisher, code, display, edition)
    assert title.lower() in str(doc["title"]).lower()
    assert not str(doc["title"]).lower().endswith((".pdf", ".fm", ".doc", ".docx"))
