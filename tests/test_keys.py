"""Store keys: one normalisation of every spelling of a designation (clausewise/keys.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clausewise.keys import (
    DocId,
    cited,
    clean_number,
    code_label,
    doc_id,
    find_designations,
    given_identity,
    is_safe_key,
    object_key,
    parse_designation,
    publisher_name,
    split_key,
)


@pytest.mark.parametrize(
    "text",
    [
        "EN 1991-1-3",
        "EN1991-1-3",
        "BS EN 1991-1-3:2003",
        "prEN 1991-1-3",
        "EN 199 1-1-3",  # OCR split the number
        "EN 1991 1-3",  # OCR lost the first hyphen
        "EN1991 1-3",
        "EN 1991\u20131\u20133",  # en dashes
        "BS EN 1991-1-3:2003+A1:2015",
        "DIN EN 1991-1-3",
        "see EN 1991-1-3, 5.3.2 for the shape coefficients",
    ],
)
def test_spellings_of_one_designation_give_one_key(text: str) -> None:
    found = parse_designation(text)
    assert found is not None
    assert found.key == "CEN_EN1991-1-3"
    assert (found.publisher, found.code) == ("CEN", "EN1991-1-3")
    assert found.display == "EN 1991-1-3"


@pytest.mark.parametrize(
    ("text", "key", "display"),
    [
        ("ISO 4355", "ISO_ISO4355", "ISO 4355"),
        ("ISO 4355:2013", "ISO_ISO4355", "ISO 4355"),
        ("BS ISO 4355", "ISO_ISO4355", "ISO 4355"),
        ("EN 1990", "CEN_EN1990", "EN 1990"),
        ("EN ISO 12944-2", "CEN_EN-ISO12944-2", "EN ISO 12944-2"),
        ("BS 6399-3:1988", "BSI_BS6399-3", "BS 6399-3"),
        ("IEC 60364-4", "IEC_IEC60364-4", "IEC 60364-4"),
        ("NA to BS EN 1991-1-3:2003", "BSI_NA-EN1991-1-3", "NA to EN 1991-1-3"),
        ("NA to BS EN 1991-1-3:2003+A1:2015", "BSI_NA-EN1991-1-3", "NA to EN 1991-1-3"),
        ("UK NA to BS EN 1991-1-3:2003", "BSI_NA-EN1991-1-3", "NA to EN 1991-1-3"),
    ],
)
def test_publishers_and_national_annexes(text: str, key: str, display: str) -> None:
    found = parse_designation(text)
    assert found is not None
    assert found.key == key
    assert found.display == display


def test_national_annex_is_not_the_code_it_annexes() -> None:
    na = parse_designation("NA to BS EN 1991-1-3:2003")
    en = parse_designation("BS EN 1991-1-3:2003")
    assert na is not None and en is not None
    assert na.publisher == "BSI"
    assert na.key != en.key


def test_amended_national_annex_designation_is_keyed_under_bsi() -> None:
    found = parse_designation("NA+A1:2015 to BS EN 1991-1-3:2003+A1:2015")
    assert found is not None
    assert found.key == "BSI_NA-EN1991-1-3"


@pytest.mark.parametrize(
    ("text", "edition"),
    [
        ("EN 1991-1-3", None),
        ("BS EN 1991-1-3:2003", "2003"),
        ("EN 1991-1-3 : 2003", "2003"),
        ("EN 1991-1-3:2003+A1:2015", "2003"),  # the edition, not the amendment
        ("prEN 1991-1-3:2022", "2022"),
        ("ISO 4355:2013", "2013"),
    ],
)
def test_edition_is_kept_out_of_the_key(text: str, edition: str | None) -> None:
    found = parse_designation(text)
    assert found is not None
    assert found.edition == edition
    assert "2003" not in found.key and ":" not in found.key


def test_text_without_a_designation() -> None:
    assert parse_designation("The leaf load acts vertically on 5.2 of the roof.") is None
    assert parse_designation("") is None
    assert find_designations("no codes here, only 1991 leaves") == []


def test_find_designations_returns_every_one_with_its_span() -> None:
    text = "see EN 1990 and BS EN 1991-1-3:2003; ISO 4355 may be used"
    found = find_designations(text)
    assert [d.key for d, _, _ in found] == ["CEN_EN1990", "CEN_EN1991-1-3", "ISO_ISO4355"]
    for _, (start, end), raw in found:
        assert text[start:end] == raw
    assert found[1][2] == "BS EN 1991-1-3:2003"


def test_doc_id_from_user_code_with_publisher_override() -> None:
    assert doc_id(None, "EN 1991-1-3:2003") == DocId("CEN", "EN1991-1-3", "2003")
    assert doc_id("bsi", "EN 1991-1-3").key == "BSI_EN1991-1-3"
    assert doc_id(None, "MY CODE 12").key == "LOCAL_MYCODE12"
    with pytest.raises(ValueError, match="publisher"):
        doc_id("A_B", "EN 1990")
    with pytest.raises(ValueError, match="document code"):
        doc_id(None, "../etc/passwd")
    with pytest.raises(ValueError, match="document code"):
        doc_id(None, "  ")


def test_object_key_and_split_key_round_trip() -> None:
    doc = DocId("CEN", "EN1991-1-3", "2003")
    assert object_key(doc, "5.3.2") == "CEN_EN1991-1-3_5.3.2"
    assert object_key("CEN_EN1991-1-3", "table_5.2") == "CEN_EN1991-1-3_table_5.2"
    assert split_key("CEN_EN1991-1-3_5.3.2") == ("CEN", "EN1991-1-3", "5.3.2")
    assert split_key("CEN_EN1991-1-3_table_5.2") == ("CEN", "EN1991-1-3", "table_5.2")
    assert split_key("CEN_EN1991-1-3_annex_A") == ("CEN", "EN1991-1-3", "annex_A")
    assert split_key("CEN_EN1991-1-3") == ("CEN", "EN1991-1-3", "")
    with pytest.raises(ValueError, match="not a store key"):
        split_key("CEN")


@pytest.mark.parametrize(
    "key",
    [
        "CEN_EN1991-1-3_5.3.2",
        "CEN_EN1991-1-3_table_5.2",
        "CEN_EN1991-1-3_annex_A",
        "CEN_EN-ISO12944-2",
        "CEN_EN1991-1-3_5.2(3)",
        "BSI_NA-EN1991-1-3",
    ],
)
def test_is_safe_key_accepts_store_keys(key: str) -> None:
    assert is_safe_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "",
        "../x",
        "a/b",
        "a\\b",
        "CEN_EN1991-1-3_5..2",
        "..",
        ".hidden",
        "a b",
        "CEN_EN1990 6.4",
        "a;b",
        "x;rm -rf",
        "a\nb",
        "-x",
        "key\x00",
        "/etc/passwd",
        "$(rm)",
    ],
)
def test_is_safe_key_rejects_path_and_shell_characters(key: str) -> None:
    assert not is_safe_key(key)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [("A.I", "A.1"), ("5. 2", "5.2"), ("6.l", "6.1"), ("B1", "B.1"), ("0.1", "D.1"), ("5.3.2", "5.3.2")],
)
def test_clean_number_fixes_ocr_slips(raw: str, clean: str) -> None:
    assert clean_number(raw) == clean


# ---------------------------------------------------------------- property
_numbers = st.one_of(st.integers(1990, 1999), st.integers(100, 99999))
_parts = st.lists(st.integers(1, 99), min_size=0, max_size=3)


@st.composite
def _spelling(draw: st.DrawFn) -> tuple[str, str, str | None]:
    """(canonical spelling, variant spelling, edition in the variant)."""
    number = draw(_numbers)
    parts = draw(_parts)
    canonical = f"EN {number}" + "".join(f"-{p}" for p in parts)
    prefix = draw(st.sampled_from(["EN ", "EN", "BS EN ", "prEN ", "DIN EN "]))
    hyphen = draw(st.sampled_from(["-", "\u2013", " - "]))
    body = str(number)
    if len(body) == 4 and draw(st.booleans()):
        body = f"{body[:3]} {body[3]}"  # OCR: "199 1"
    tail = "".join(f"{hyphen}{p}" for p in parts)
    if len(parts) >= 2 and len(str(number)) >= 4 and draw(st.booleans()):
        # "EN 100 1-1" would be ambiguous with the split-number slip ("EN 100 1" = EN 1001)
        tail = f" {parts[0]}" + "".join(f"-{p}" for p in parts[1:])  # OCR: "1991 1-3"
    year = draw(st.sampled_from([None, "2003", "1999", "2015"]))
    year_text = "" if year is None else draw(st.sampled_from([f":{year}", f" : {year}", f":{year}+A1:2019"]))
    context = draw(st.sampled_from(["{}", "see {}.", "in accordance with {}, the", "({})"]))
    return canonical, context.format(prefix + body + tail + year_text), year


@settings(max_examples=300, deadline=None, database=None)
@given(_spelling())
def test_property_every_spelling_gives_the_canonical_key(case: tuple[str, str, str | None]) -> None:
    canonical, variant, year = case
    expected = parse_designation(canonical)
    found = parse_designation(variant)
    assert expected is not None and found is not None
    assert found.key == expected.key, (canonical, variant)
    assert found.edition == year
    # the display form parses back to the same key, and the key is a safe file name
    again = parse_designation(found.display)
    assert again is not None and again.key == found.key
    assert is_safe_key(found.key)


# ---------------------------------------------------------------- other families
@pytest.mark.parametrize(
    ("text", "key", "display", "edition"),
    [
        ("IS 875 (Part 3) : 2015", "BIS_IS875-3", "IS 875 (Part 3)", "2015"),
        ("IS 875(Part 3):2015", "BIS_IS875-3", "IS 875 (Part 3)", "2015"),
        ("IS 1893 (Part 1):2016", "BIS_IS1893-1", "IS 1893 (Part 1)", "2016"),
        ("IS 875 (Part 3/Sec 1)", "BIS_IS875-3-1", "IS 875 (Part 3/Sec 1)", None),
        ("IS : 456 - 1978", "BIS_IS456", "IS 456", "1978"),
        ("IS 800:2007", "BIS_IS800", "IS 800", "2007"),
        ("ASCE 7-22", "ASCE_ASCE7", "ASCE 7", "2022"),
        ("ASCE/SEI 7-16", "ASCE_ASCE7", "ASCE 7", "2016"),
        ("SEI/ASCE 7-02", "ASCE_ASCE7", "ASCE 7", "2002"),
        ("ACI 318-19", "ACI_ACI318", "ACI 318", "2019"),
        ("ACI 318M-14", "ACI_ACI318M", "ACI 318M", "2014"),
        ("ACI 350.3-06", "ACI_ACI350.3", "ACI 350.3", "2006"),
        ("ANSI/AISC 360-16", "AISC_AISC360", "AISC 360", "2016"),
        ("AS 1170.4-2007", "SA_AS1170.4", "AS 1170.4", "2007"),
        ("AS 3600\u20142018", "SA_AS3600", "AS 3600", "2018"),
        ("AS/NZS 1170.0:2002", "SA-SNZ_AS-NZS1170.0", "AS/NZS 1170.0", "2002"),
        ("NZS 3101:2006", "SNZ_NZS3101", "NZS 3101", "2006"),
        ("DIN 1045-1:2008-08", "DIN_DIN1045-1", "DIN 1045-1", "2008"),
        ("DIN 4149", "DIN_DIN4149", "DIN 4149", None),
        ("UFC 3-301-01", "DOD_UFC3-301-01", "UFC 3-301-01", None),
        ("UFC 3-220-04FA", "DOD_UFC3-220-04FA", "UFC 3-220-04FA", None),
        ("FEMA P-58-6", "FEMA_FEMA-P-58-6", "FEMA P-58-6", None),
        ("FEMA P-750", "FEMA_FEMA-P-750", "FEMA P-750", None),
        ("FEMA 356", "FEMA_FEMA356", "FEMA 356", None),
        ("HSG150", "HSE_HSG150", "HSG150", None),
        ("HSG 48", "HSE_HSG48", "HSG48", None),
        ("INDG163", "HSE_INDG163", "INDG163", None),
        ("CSA A23.3-14", "CSA_CSA-A23.3", "CSA A23.3", "2014"),
        ("CAN/CSA-S16-01", "CSA_CSA-S16", "CSA S16", "2001"),
        ("PD 6688-1-4:2009", "BSI_PD6688-1-4", "PD 6688-1-4", "2009"),
    ],
)
def test_other_families(text: str, key: str, display: str, edition: str | None) -> None:
    found = parse_designation(text)
    assert found is not None
    assert (found.key, found.display, found.edition) == (key, display, edition)
    assert is_safe_key(found.key) and found.key.count("_") == 1
    again = parse_designation(found.display)  # the display form reads back to the same key
    assert again is not None and again.key == found.key
    assert doc_id(None, text) == found  # a user may type any printed form
    assert doc_id(None, found.code).key == found.key  # ... or the key's form


@pytest.mark.parametrize(
    "text",
    [
        "as shown in Figure 2",
        "AS 2 m above the ground",
        "AS 300 mm",
        "SUCH AS 2005 OR LATER",
        "THIS IS 300 MM WIDE",
        "IT IS 450 mm",
        "the IS 15 value",
        "ENV 1991-2-4:1995",
        "ACI 31",
    ],
)
def test_body_text_is_not_a_designation(text: str) -> None:
    assert find_designations(text) == []


def test_references_to_other_families_in_body_text() -> None:
    text = "wind loads to IS 875 and AS/NZS 1170.2, with NZS 3604 and ASCE 7-22 Table 12.2-1; see EN 1990."
    assert [d.key for d, _, _ in find_designations(text)] == [
        "BIS_IS875",
        "SA-SNZ_AS-NZS1170.2",
        "SNZ_NZS3604",
        "ASCE_ASCE7",
        "CEN_EN1990",
    ]
    for _, (start, end), raw in find_designations(text):
        assert text[start:end] == raw


@pytest.mark.parametrize(
    ("code", "key", "edition"),
    [
        ("IS 875 (Part 3):2015", "BIS_IS875-3", "2015"),
        ("UFC 3-301-01", "DOD_UFC3-301-01", None),
        ("FEMA P-58-6", "FEMA_FEMA-P-58-6", None),
        ("FEMA P-58-6 December 2018", "FEMA_FEMA-P-58-6", "2018"),
        ("HSG150", "HSE_HSG150", None),
        ("NA-EN1991-1-3", "BSI_NA-EN1991-1-3", None),
        ("UK NA to BS EN 1991-1-3:2003", "BSI_NA-EN1991-1-3", "2003"),
        ("XYZ 12:2015", "LOCAL_XYZ12", "2015"),
    ],
)
def test_doc_id_accepts_printed_and_key_forms(code: str, key: str, edition: str | None) -> None:
    found = doc_id(None, code)
    assert (found.key, found.edition) == (key, edition)


@pytest.mark.parametrize("code", ["..", "", " ", "../etc/passwd", "a/b", "../EN 1990", ".x", "A..B", "x\ny", "a\\b"])
def test_doc_id_rejects_garbage_with_one_line(code: str) -> None:
    with pytest.raises(ValueError, match="not a document code") as err:
        doc_id(None, code)
    assert "\n" not in str(err.value)


def test_doc_id_rejects_two_documents_and_bad_publishers() -> None:
    with pytest.raises(ValueError, match="more than one document"):
        doc_id(None, "EN 1990 and EN 1991")
    for publisher in ("..", "A_B", "-x", "a b", "a/b", "X" * 30):
        with pytest.raises(ValueError, match="not a publisher name"):
            doc_id(publisher, "EN 1990")
    assert doc_id("sa-snz", "AS/NZS 1170.0").key == "SA-SNZ_AS-NZS1170.0"
    assert publisher_name(" bis ") == "BIS"


def test_given_identity_validates_what_users_type() -> None:
    assert given_identity(None, None) is None
    assert given_identity("BSI", None) is None
    assert given_identity(None, "IS 875 (Part 3):2015") == DocId("BIS", "IS875-3", "2015")
    for publisher, code in ((None, ".."), (None, "  "), ("..", None), ("A_B", "EN 1990")):
        with pytest.raises(ValueError):
            given_identity(publisher, code)


@pytest.mark.parametrize(
    ("code", "label"),
    [
        ("annex_D", "Annex D"),
        ("table_5.2", "Table 5.2"),
        ("figure_7.28", "Figure 7.28"),
        ("expression_6.1", "Expression (6.1)"),
        ("5.3.2", "5.3.2"),
        ("2-1.1", "2-1.1"),
        ("excavations-2", "excavations-2"),
    ],
)
def test_a_section_code_is_labelled_as_an_engineer_reads_it(code: str, label: str) -> None:
    assert code_label(code) == label


@pytest.mark.parametrize(
    ("section", "title", "name"),
    [
        ("excavations-2", "Excavations", "HSG150 Excavations"),
        ("collapse-of-the-sides-or-roof", "Collapse of the  sides or roof", "HSG150 Collapse of the sides or roof"),
        ("345", "Collapse of the sides or roof", "HSG150 345"),
        ("Annex D", "Adjustment of the ground snow load", "HSG150 Annex D"),
        ("excavations", None, "HSG150 excavations"),  # no heading to name it by
        ("scope-2", "Excavations", "HSG150 scope-2"),  # another heading's code
    ],
)
def test_a_section_is_cited_by_its_number_or_else_by_its_heading(section: str, title: str | None, name: str) -> None:
    assert cited("HSG150", section, title) == name
