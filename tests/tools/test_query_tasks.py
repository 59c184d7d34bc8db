"""Offline query rules (tools/query_tasks.py): stemming, paragraph units, triage and decomposition."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest

from clausewise.tools.query_tasks import OfflineQueryTasks, Vocabulary, search_prefixes, spelled, stem, units


def test_offline_reasoner_parts() -> None:
    assert stem("reinforced") == stem("reinforcing")
    text = "5.2 Load arrangements\n(1) First paragraph.\nNOTE: a note.\n(2) Second paragraph."
    spans = units(text)
    assert [text[a:b].split("\n")[0] for a, b in spans][:3] == [
        "5.2 Load arrangements",
        "(1) First paragraph.",
        "NOTE: a note.",
    ]
    tasks = OfflineQueryTasks()
    assert tasks.triage("Good morning!", [])["route"] == "chat"
    assert tasks.decompose("What is sk? And which Ce applies to a sheltered site?") == [
        "What is sk?",
        "And which Ce applies to a sheltered site?",
    ]


def test_stems_come_from_the_compiled_snowball_stemmer() -> None:
    """snowballstemmer hands out PyStemmer's C stemmers when that is installed (the same Snowball
    algorithms, 25 times faster: 0.1 s of each cold ask); the dependency must not go missing unseen."""
    import snowballstemmer

    assert type(snowballstemmer.stemmer("english")).__module__ == "Stemmer"
    assert [stem(w) for w in ("loading", "loads", "densities", "generally")] == ["load", "load", "densiti", "general"]


def test_stemming_is_safe_from_parallel_relevance_batches() -> None:
    """Relevance batches run in threads; a shared Snowball stemmer corrupted its state under load."""
    from concurrent.futures import ThreadPoolExecutor

    from clausewise.tools.query_tasks import stem

    words = [f"reinforc{'e' * (i % 7)}ments{i}ing" for i in range(20_000)]
    stem.cache_clear()
    with ThreadPoolExecutor(max_workers=8) as pool:
        parallel = list(pool.map(stem, words))
    stem.cache_clear()
    assert parallel == [stem(w) for w in words]


def test_slips_of_the_keys_are_put_right_against_the_words_the_codes_print() -> None:
    printed = [
        "The density of reinforced concrete is given in Table A.1.",
        "Girts behind a brick veneer; a rooflight in the roof.",
        "Structural design of the imposed load.",
    ]
    vocab = Vocabulary.of_sections([{"text": text} for text in printed])  # type: ignore[misc]
    words = {w.lower() for text in printed for w in re.findall(r"[A-Za-z]+", text)}

    def known(asked: Iterable[str]) -> set[str]:
        return set(asked) & words

    question = "What densty for reinforced concret? Structual girts, a rainscreen and an unclad rooflight."
    assert spelled(question, vocab, known) == (
        "What density for reinforced concrete? Structural girts, a rainscreen and an unclad rooflight.",
        {"densty": "density", "concret": "concrete", "Structual": "Structural"},
    )
    # a word one edit from a common word the codes do not print stays as typed ("desgin": "design" is printed;
    # "calcualte": "calculate" is not)
    assert spelled("How do I calcualte the desgin load?", vocab, known) == (
        "How do I calcualte the design load?",
        {"desgin": "design"},
    )
    assert spelled("What density for concrete?", vocab, known) == ("What density for concrete?", {})
    assert spelled("DENSTY OF CONCRETE", vocab, known) == ("DENSITY OF CONCRETE", {"DENSTY": "DENSITY"})
    # a letter too many at the end is a slip; a plural printed singular is none (English knows it)
    assert spelled("Imposed loads on reinforced concretee", vocab, known) == (
        "Imposed loads on reinforced concrete",
        {"concretee": "concrete"},
    )
    # a word English knows is no slip, whatever the codes print one edit from it ("designer" beside a
    # printed "designed", "mullion" beside a printed "million")
    words.update(("designed", "million"))
    assert spelled("Must the designer check a mullion?", vocab, known) == ("Must the designer check a mullion?", {})


def test_offline_decomposition_gives_standalone_parts() -> None:
    tasks = OfflineQueryTasks()
    enumerated = (
        "For a 30 m steel chimney, does the code give (a) thermal actions from hot gases and (b) a vortex check?"
    )
    assert tasks.decompose(enumerated) == [
        "For a 30 m steel chimney, does the code give thermal actions from hot gases",
        "For a 30 m steel chimney, does the code give a vortex check?",
    ]
    # parts enumerated over sentences: each part is its own sentence, not run on from the scene
    assert tasks.decompose(
        "A vaulted hall 30 m wide. (a) Which snow shape coefficients apply? (b) Where do wind coefficients come from?"
    ) == [
        "A vaulted hall 30 m wide.",
        "(a) Which snow shape coefficients apply?",
        "(b) Where do wind coefficients come from?",
    ]
    assert tasks.decompose(
        "How do I calculate wind pressure on walls, and which inputs come from the National Annex?"
    ) == [
        "How do I calculate wind pressure on walls",
        "which inputs come from the National Annex?",
    ]
    # a part that leans on another carries the nearest self-contained one
    assert tasks.decompose("Do I need snow loading on my shed? What steps should I take to check this?") == [
        "Do I need snow loading on my shed?",
        "What steps should I take to check this (Do I need snow loading on my shed)",
    ]
    assert tasks.decompose("Our river is 4 m deep. What force acts on the pier? What about debris?")[-1] == (
        "What about debris (What force acts on the pier)"
    )
    # a list after a colon that semicolons part: each item with the words that ask for it
    assert tasks.decompose("What does the code require for: the slab thickness; the mat; and the frost depth?") == [
        "What does the code require for the slab thickness",
        "What does the code require for the mat",
        "What does the code require for the frost depth?",
    ]
    assert tasks.decompose("Note: the roof is flat; what snow load applies?") == [
        "Note: the roof is flat",
        "what snow load applies?",
    ]
    assert tasks.decompose("What density for reinforced concrete?") == ["What density for reinforced concrete?"]
    assert tasks.decompose("What is sk? What is Ce?") == ["What is sk?", "What is Ce?"]  # a symbol is content


def test_a_relative_clause_after_a_comma_stays_with_its_sentence() -> None:
    """ "..., which are a week old" and "..., where the table gives a range" say more about what comes
    before them; "..., which load applies?" and "..., where do I find it?" ask."""
    tasks = OfflineQueryTasks()
    assert tasks.decompose(
        "What unit weight do I take for sandstone, where the table only gives a range? "
        "The floors are timber panels, which aren't in the tables; how do I settle a density for those?"
    ) == [
        "What unit weight do I take for sandstone, where the table only gives a range?",
        "The floors are timber panels, which aren't in the tables",
        "how do I settle a density for those (The floors are timber panels, which aren't in the tables)",
    ]
    assert tasks.decompose("The slabs are propped on the floors below, which are only a week old.") == [
        "The slabs are propped on the floors below, which are only a week old."
    ]
    assert tasks.decompose("My shed has a flat roof, where do I find the snow load shape coefficient?") == [
        "My shed has a flat roof",
        "where do I find the snow load shape coefficient?",
    ]
    assert tasks.decompose("For a flat roof over a store, which snow load shape coefficient applies?") == [
        "For a flat roof over a store",
        "which snow load shape coefficient applies?",
    ]


def test_a_contraction_gives_no_term_of_its_own() -> None:
    """ "aren't" is "are not" and "we're" is "we": no "aren", "t" or "re" to weigh or to search for,
    whatever a scan's text prints of them; "slope's pitch" is the slope's pitch."""
    from clausewise.tools.query_tasks import question_terms, uncontracted

    vocab = Vocabulary([{"sections": 100, "df": {"aren": 1, "re": 1, "t": 1, "slope": 20, "pitch": 10, "tabl": 50}}])
    terms = question_terms("We're told the slope's pitch isn't in the tables and they aren't", vocab, {})
    assert {"aren", "re", "t", "isn", "they"}.isdisjoint(w for t in terms.weights for w in t.split())
    assert "slope pitch" in terms.weights and "slope" in terms.weights
    assert "aren" not in search_prefixes("Which of these aren't in the tables?")
    assert uncontracted("We're sure it can't, and they don't") == "We sure it can not, and they do not"
    assert question_terms("Isn't it? Aren't they?", vocab, {}).weights == {}  # nothing left to search for
    assert search_prefixes("Isn't it? Aren't they?") == []


# ---------------------------------------------------------------- conflicts
def _passage(key: str, text: str) -> dict[str, str]:
    return {"key": key, "document": key.split("_")[1], "text": text}


def test_a_symbol_given_two_values_for_the_same_case_is_a_conflict() -> None:
    from clausewise.tools.query_tasks import find_conflicts

    found = find_conflicts(
        [
            _passage("CEN_EN1991-9-9_5.2", "(7) Ce = 1,0 for normal topography.\n(8) Ct = 1,0."),
            _passage("CEN_EN1991-9-9_A.1", "(2) For normal topography Ce = 0,9 should be used."),
        ],
        [],
        {},
    )
    assert [(c["topic"], c["passages"]) for c in found] == [
        ("Ce is given different values", ["CEN_EN1991-9-9_5.2", "CEN_EN1991-9-9_A.1"])
    ]
    assert "Ce = 0,9 in CEN_EN1991-9-9_A.1" in found[0]["note"]


def test_recommended_values_the_national_annex_may_change_are_one_flag_in_answer_order() -> None:
    """One flag names every passage whose value is a recommendation under a national choice, in the
    answer's order; a recommendation with no national choice over it is not flagged."""
    from clausewise.tools.query_tasks import find_conflicts

    passages = [
        _passage("CEN_EN1991-9-9_table_7.1", "| zone A | cpe = -1,2 |"),
        _passage("CEN_EN1991-9-9_4.2", "(1) The recommended value is 1,0."),
        _passage("CEN_EN1991-9-9_5.1", "(2) The recommended value is 2,0."),
    ]
    rules = [
        {"key": "CEN_EN1991-9-9_4.2", "type": "recommended-value"},
        {"key": "CEN_EN1991-9-9_4.2", "type": "ndp"},
        {"key": "CEN_EN1991-9-9_table_7.1", "type": "recommended-value"},
        {"key": "CEN_EN1991-9-9_table_7.1", "type": "national-annex"},
        {"key": "CEN_EN1991-9-9_5.1", "type": "recommended-value"},
    ]
    flags = [c for c in find_conflicts(passages, rules, {}) if c["topic"] == "recommended value vs national choice"]
    assert [c["passages"] for c in flags] == [["CEN_EN1991-9-9_table_7.1", "CEN_EN1991-9-9_4.2"]]


def test_values_for_different_cases_or_written_differently_are_not_conflicts() -> None:
    """The rows of a table, a coefficient for two situations, another code's symbol of the same name and
    "2" against "2,0" disagree about nothing."""
    from clausewise.tools.query_tasks import find_conflicts

    passages = [
        _passage("CEN_EN1991-9-9_table_7.1", "| zone A | cpe = -1,2 |\n| zone B | cpe = -0,8 |"),
        _passage(
            "CEN_EN1991-9-9_3.1",
            "(5) On the unexposed side of separating members the net heat flux is found with ac = 4 [W/m2K].",
        ),
        _passage(
            "CEN_EN1991-9-9_3.3",
            "(3) For the hydrocarbon curve the coefficient of heat transfer by convection is ac = 35 [W/m2K].",
        ),
        _passage("CEN_EN1991-9-8_5.2", "(8) The thermal coefficient Ct = 1,0 for roofs."),
        _passage("CEN_EN1991-9-7_7.2", "(2) The drop Ct = 5 for the fence."),
        _passage("CEN_EN1991-9-9_table_E.1", "| rectangular section | b = 2 |"),
        _passage("CEN_EN1991-9-9_table_E.2", "| rectangular section | b = 2,0 |"),
    ]
    kv = {
        "ct": {
            "term": "Ct",
            "values": [
                {"value": "1,0", "source": "CEN_EN1991-9-8_5.2"},
                {"value": "5", "source": "CEN_EN1991-9-7_7.2"},
            ],
            "equivalents": [],
            "conflict": True,
        }
    }
    assert find_conflicts(passages, [], kv) == []


def test_a_value_recorded_differently_by_two_documents_shows_when_they_state_it_for_the_same_case() -> None:
    from clausewise.kv import merge_terms
    from clausewise.tools.query_tasks import find_conflicts

    a, b = "CEN_EN1991-9-9_5.2", "BSI_NA-EN1991-9-9_NA.2"
    kv = merge_terms({}, [{"term": "Ce", "value": "1,0", "source": a}, {"term": "Ce", "value": "0,9", "source": b}])
    alike = [_passage(a, "(7) Ce = 1,0 for normal topography."), _passage(b, "NA.2 Ce = 0,9 for normal topography.")]
    assert {c["topic"] for c in find_conflicts(alike, [], kv)} == {
        "Ce is given different values",
        "Ce has differing recorded values",
    }
    other_cases = [
        _passage(a, "(7) Ce = 1,0 for normal topography."),
        _passage(b, "NA.2 Ce = 0,9 for windswept sites."),
    ]
    assert find_conflicts(other_cases, [], kv) == []


def test_the_summarys_value_sentences_run_over_their_printed_lines() -> None:
    from clausewise.tools.query_tasks import value_statements

    text = (
        "1.1 Scope\n(1) This Part gives guidance.\n"
        "(2) This Part does not apply for sites at altitudes above 1 500 m, unless\n"
        "otherwise specified.\ny is the weight density of snow, taken as 2 kN/m3\nk is a coefficient\n"
        "(3) The values should be used for the wind directions 0°,\n90° and 180° within 45 m of the\n"
        "NA boundary.\n(4) A width of 2 m,\n(5) A depth of 3 m.\n"
        "c) For frames with walls less than 100 m high and whose\nwidth is at least 10 m, no check is needed.\n"
        "| Category A | qk = 2,0 | 2,0 kN/m2 |\n| Category B | 3,0 kN/m2 |\n"
        "(6) Sum the i=1 to n factors over the measures in place.\n(7) Take k = 1,0 and j = 2.5 here.\n"
        "(8) Where the line speed is less than 50 km/h.\n"
        "Figure 4.2 - Illustrations of the exposure factor ce(z) for co = 1,0, kl = 1,0\n"
        "Table 2-1 Deflection Limits for Framing Supporting Walls of 10 m\n"
        "FIG. 1 BASIC WIND SPEED IN m/s FOR 50 years\n"
        "Table 4.1 gives the force for lorries: 1000 kN on motorways."
    )
    assert value_statements(text) == [
        "(2) This Part does not apply for sites at altitudes above 1 500 m, unless otherwise specified.",
        "y is the weight density of snow, taken as 2 kN/m3",  # a symbol's line does not run on into the next
        # a line ending in a comma or "the" carries on; a new paragraph does not join the one before
        "(3) The values should be used for the wind directions 0°, 90° and 180° within 45 m of the NA boundary.",
        "(4) A width of 2 m,",
        "(5) A depth of 3 m.",
        # a line ending in a word no sentence ends in carries on, into what reads like a symbol's line too
        "c) For frames with walls less than 100 m high and whose width is at least 10 m, no check is needed.",
        "Category A | qk = 2,0 | 2,0 kN/m2",
        "Category B | 3,0 kN/m2",
        # a sum's running index read into the line ("i=1" under the sign) states no value; a symbol does
        "(7) Take k = 1,0 and j = 2.5 here.",
        "(8) Where the line speed is less than 50 km/h.",
        # a caption is not a statement (its numbers are the case drawn); a sentence opening with one is
        "Table 4.1 gives the force for lorries: 1000 kN on motorways.",
    ]


def test_the_summary_quotes_legible_sentences_once_and_not_a_drawings_labels() -> None:
    from clausewise.tools.query_tasks import OfflineQueryTasks

    def passage(section: str, kind: str, text: str) -> dict[str, object]:
        return {"key": f"CEN_EN1991-9-9_{section}", "document": "EN 1991-9-9", "section": section, "kind": kind,
                "page": 22, "text": text, "tier": "key"}  # fmt: skip

    sentence = "For steel girders the maximum temperature may be reduced by 3 °C."
    passages = [
        passage("6.1", "clause", f"6.1 Temperature\n(1) {sentence}\n(2) ~T, ~ T I ..,-----'--y-----. 24 °C steel"),
        passage("Figure 6.1", "figure", f"Figure 6.1 Temperature\n{sentence}\nsteel 40mm ~T,= 14 °C"),
    ]
    summary = OfflineQueryTasks().summarise("What steel temperature?", passages)
    assert summary.count(sentence) == 1 and "(EN 1991-9-9 6.1, p. 22)" in summary
    assert "~T" not in summary and "Figure 6.1," not in summary


def test_the_summary_names_the_documents_in_the_order_the_answer_reads_them() -> None:
    """The first line names the documents as the ranked passages come, each with its count: the key
    passages' document first, though another holds more of the background."""
    from clausewise.tools.query_tasks import OfflineQueryTasks

    def passage(document: str, section: str, tier: str) -> dict[str, object]:
        return {"key": f"CEN_{document}_{section}", "document": document, "section": section, "kind": "clause",
                "page": 3, "text": f"{section} Title\n(1) Text.", "tier": tier}  # fmt: skip

    passages = [passage("EN 1991-1-7", "4.3.2", "key"), passage("EN 1991-1-7", "4.3.1", "key")]
    passages += [passage("EN 1991-1-4", f"7.{i}", "background") for i in range(1, 6)]
    passages += [passage(f"EN 199{i}", "1.1", "background") for i in range(2, 6)]
    head = OfflineQueryTasks().summarise("What impact force on a bridge deck?", passages).split("\n")[0]
    assert head.startswith(
        "11 passages from EN 1991-1-7 (2), EN 1991-1-4 (5), EN 1992 (1), EN 1993 (1) and others bear on this question"
    )
    assert head.endswith("read first: EN 1991-1-7 4.3.2, EN 1991-1-7 4.3.1.")


def test_the_summary_quotes_the_first_passages_values_in_their_own_words() -> None:
    """A value in one of the first key passages is part of the answer though it repeats no word of the
    question ("Ct = 1,0" for a question on snow); further down, a value must share a word with it."""
    from clausewise.tools.query_tasks import SUMMARY_OPEN_PASSAGES, OfflineQueryTasks

    def passage(section: str, text: str) -> dict[str, object]:
        return {"key": f"CEN_EN1991-9-9_{section}", "document": "EN 1991-9-9", "section": section,
                "kind": "clause", "page": 20, "text": text, "tier": "key"}  # fmt: skip

    first = passage("5.2", "5.2 Load arrangements\n(8) The thermal coefficient should be taken as Ct = 1,0.")
    middle = [passage(f"5.{i}", f"5.{i} Other\n(1) Nothing stated here.") for i in range(3, 2 + SUMMARY_OPEN_PASSAGES)]
    late = passage("6.1", "6.1 Ice\n(1) The ice density may be taken as 9 kN/m3.")
    summary = OfflineQueryTasks().summarise("Do I need snow loading on my roof?", [first, *middle, late])
    assert "Ct = 1,0. (EN 1991-9-9 5.2, p. 20)" in summary
    assert "9 kN/m3" not in summary  # past the first passages, and no word of the question


def test_keywords_leave_out_terms_no_section_has_and_search_a_phrases_rare_word_alone() -> None:
    """The rarest terms are the question's own words no code uses ("mill", "warehouse"): they would
    take every keyword place and find nothing. A phrase the question makes ("bagged flour") may occur
    nowhere while its rare word does ("flour ... bagged" in a table): the word is searched too."""
    from clausewise.tools.query_tasks import Vocabulary, question_terms

    vocab = Vocabulary(
        [
            {
                "sections": 40,
                "df": {
                    stem(w): n for w, n in [("flour", 1), ("bagged", 2), ("stacked", 3), ("floor", 20), ("load", 30)]
                },
            }
        ]
    )
    terms = question_terms("What floor load for bagged flour stacked in a flour mill warehouse?", vocab, {})
    assert {"mill", "warehous", "flour mill", "mill warehous"} <= terms.unseen
    picked = OfflineQueryTasks().keywords("", terms)
    assert not set(picked) & terms.unseen
    assert "flour" in picked and "bag flour" in picked  # the phrase and its rare word
    assert len(picked) <= 6


def test_a_hyphenated_word_counts_whole_and_by_its_parts() -> None:
    """Asked "shade-air-temperature range", printed "shade air temperature": the parts and their phrases
    are terms too; "self-weight", printed so, still counts whole."""
    from clausewise.tools.query_tasks import Vocabulary, question_terms

    vocab = Vocabulary(
        [{"sections": 40, "df": {stem(w): 3 for w in ["shade", "air", "temperature", "range", "self-weight"]}}]
    )
    terms = question_terms("A narrower shade-air-temperature range and the self-weight?", vocab, {})
    assert {"shade", "air", "temperatur", "shade air", "air temperatur", "temperatur rang"} <= set(terms.weights)
    assert "self-weight" in terms.weights and "self-weight" not in terms.unseen
    assert "shade-air-temperatur" in terms.unseen  # the whole, which no section prints, matches nothing
    terms = question_terms("It is going to stand for 10 years", vocab, {})
    assert "go" not in terms.weights  # "going to" says when, not what


def test_a_negated_word_also_searches_its_positive_as_the_code_states_it() -> None:
    """Asked "can the walls be unreinforced", printed "masonry must be designed as reinforced unless
    ...": the positive is a term too, weighted as an equivalent, and the extractor keeps that sentence.
    Only a printed positive of a real word counts: "uniform" is no negation of "iform", "unless" none of
    "less"."""
    from clausewise.tools.query_tasks import NEGATED_WEIGHT, OfflineQueryTasks, Vocabulary, question_terms

    printed = {"reinforced": 20, "design": 150, "masonry": 30, "wall": 40, "uniform": 10, "less": 10, "form": 10}
    vocab = Vocabulary([{"sections": 200, "df": {stem(w): n for w, n in printed.items()}}])
    terms = question_terms("Can I design the walls unreinforced, unless uniformly loaded?", vocab, {})
    assert terms.weights["reinforc"] == pytest.approx(NEGATED_WEIGHT * vocab.idf("reinforc"))
    assert terms.source["reinforc"] == "negated:unreinforced"
    assert not {"less", "iform", "form"} & set(terms.weights)
    rule = "2101.2.1 - Allowable Stress Design\nMasonry must be designed as reinforced if the element is not isolated."
    section = {"key": "X_2101.2.1", "kind": "clause", "text": rule}
    assert OfflineQueryTasks().relevance("", terms, [section], {})
    without = question_terms("Can I design the walls, unless uniformly loaded?", vocab, {})
    assert not OfflineQueryTasks().relevance("", without, [section], {})  # "design" alone is too common


def test_a_word_a_scan_misread_is_read_as_the_word_it_stands_for() -> None:
    """A scan's text layer reads "m" as "ln", "nl" or "n1" ("alulninium", "tinlber", "tin1ber"), "l" as
    "1" ("c1ass"): a word rare in English that one such misreading turns into a common word is read as
    that word, in its printed case; real words ("fail", "clip"), symbols and names no reading makes a
    word ("eilnp", "komltee") and short words stay as printed. A section printing a misreading holds
    the question's word, for coverage and extracts alike, and counts it once."""
    from clausewise.tools.query_tasks import (
        Terms,
        Vocabulary,
        question_terms,
        read_as,
        scan_readings,
        score_text,
        terms_in,
    )

    scanned = "| metals | | |\n| Alulninium | | 27,0 |\n| tinlber strength c1ass C 14 | | 3,5 |\n| TIN1BER |"
    other = "A fail-safe clip for e_ilnp after the komltee; a fied line"
    readings = scan_readings([scanned, other])
    assert readings == {"alulninium": "aluminium", "tinlber": "timber", "c1ass": "class", "tin1ber": "timber"}
    assert read_as(scanned, readings).splitlines()[1:] == [
        "| Aluminium | | 27,0 |",
        "| timber strength class C 14 | | 3,5 |",
        "| TIMBER |",
    ]
    assert read_as(other, readings) == other and read_as(other, {}) == other
    printed = "| aluminium | | 27,0 |\n| timber strength class C 14 | | 3,5 |"
    vocab = Vocabulary(
        [{"sections": 40, "df": {stem(w): 3 for w in ("aluminium", "timber", "glass")}, "readings": readings}]
    )
    terms = question_terms("What unit weight for aluminium, timber and glass?", vocab, {})
    assert terms.readings == readings
    assert {"aluminium", "timber"} <= terms_in(scanned, terms) and "glass" not in terms_in(scanned, terms)
    assert score_text(scanned, terms) == score_text(printed, terms) > 0
    unread = Terms(weights=terms.weights)  # a store ingested before readings were kept reads it as printed
    assert "timber" not in terms_in(scanned, unread)


def test_a_long_unnumbered_paragraph_run_is_cut_at_printed_paragraphs_and_bullets_and_read_in_part() -> None:
    """A guide that does not number its paragraphs: the body is cut where a printed paragraph ends (a
    sentence ending on a short line) and before each bullet, so that the question's paragraph is quoted
    with its heading and the unit after it, not three pages; a short run, or a sentence ending on a
    full line, is not cut."""
    from clausewise.tools.query_tasks import Terms

    full = "Words of a paragraph that runs across the full width of the printed page here"
    para = [full, full, "and it ends here."]
    lines = ["1903.4 - Printed Concrete [Addition]", *para, *para, "The slab must be cured for seven days at least",
             "before it is loaded.", "• First item of the list", "• Second item", *para, *para]  # fmt: skip
    text = "\n".join(lines)
    assert len(text) > 800
    pieces = [text[a:b] for a, b in units(text)]
    assert pieces[0] == lines[0]
    assert "\n".join(lines[7:9]) in pieces and "• First item of the list" in pieces
    assert all(len(p) < 300 for p in pieces)
    short = "2.1 General\n" + "\n".join(para)
    assert [short[a:b] for a, b in units(short)] == ["2.1 General", "\n".join(para)]
    section = {"key": "DOD_UFC3-301-01_1903.4", "kind": "clause", "text": text}
    terms = Terms(weights={"cure": 2.0, "slab": 2.0})
    extracts = OfflineQueryTasks().relevance("How long is the slab cured?", terms, [section], {})  # type: ignore[list-item]
    quoted = [e.text for e in extracts["DOD_UFC3-301-01_1903.4"]]
    assert quoted[0].startswith(lines[0]) and "seven days" in quoted[-1]  # its heading, then its paragraph
    assert sum(map(len, quoted)) < len(text) / 2


def test_search_prefixes_cut_each_content_word_where_its_stem_leaves_it() -> None:
    """The ranking's BM25 reads the question's words in an index that does not stem: "loads" and
    "loading" meet at "load*", "density" at "densit*"; stop words and numbers are left out, a
    hyphenated word gives each part, a word too short to cut is searched as it is."""
    prefixes = search_prefixes("What density for self-weight loads of reinforced concrete in EN 1991-1-1?")
    assert prefixes == ["densit*", "self*", "weight*", "load*", "reinforc*", "concret*", "en"]
    assert search_prefixes("What is the?") == []
