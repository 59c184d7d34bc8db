"""compose (nodes/query/compose.py): the answer's images, and its figures described for the question by
the model, which gets the figure's image with the prompt; the offline reasoner describes none."""

from __future__ import annotations

import base64
import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers import ScriptedChatModel, query_runtime

from clausewise.nodes.query.collect_passages import collect_passages
from clausewise.nodes.query.compose import compose
from clausewise.system import System
from clausewise.tools.model_tasks import FigureOut, ModelQueryTasks, SummaryOut
from clausewise.tools.query_tasks import OfflineQueryTasks

QUESTION = "What shape coefficient for a flat shed roof?"


def _compose(sample_store: SimpleNamespace, embedder: Any, tasks: Any, cache: Path, key: str) -> dict[str, Any]:
    """collect-passages then compose, for one extract of ``key``, as the graph would run them."""
    stores = sample_store.stores
    runtime = query_runtime(System(stores=stores, embedder=embedder, query_tasks=tasks, cache_dir=cache))
    section = stores.lookup("sections", key)
    state = {
        "question": QUESTION,
        "search_question": QUESTION,
        "extracts": {key: [{"text": section["text"][:200], "start": 0, "pages": section["pages"], "score": 1.0}]},
        "candidates": {},
        "started": time.perf_counter(),
    }
    state |= collect_passages(state, runtime)  # type: ignore[arg-type]
    return compose(state, runtime)  # type: ignore[arg-type]


def _figure(sample_store: SimpleNamespace) -> tuple[str, dict[str, Any]]:
    objects = sample_store.stores.doc_table(sample_store.doc_key, "objects")
    return next((k, o) for k, o in objects.items() if o["kind"] == "figure")


def describes(schema: str, human: str) -> Any:
    """Figures described with the caption the prompt gave; a short summary."""
    if schema == "FigureOut":
        caption = re.search(r'caption="([^"]*)"', human)
        return FigureOut(description=f"For the question, {caption and caption.group(1)} shows mu = 0,8")
    assert schema == "SummaryOut", schema
    return SummaryOut(summary="Scripted summary.")


def test_answer_figures_are_described_for_the_question(
    sample_store: SimpleNamespace, embedder: Any, tmp_path: Path
) -> None:
    figure, obj = _figure(sample_store)
    model = ScriptedChatModel(script=describes)
    out = _compose(sample_store, embedder, ModelQueryTasks(model, retry_wait=False), tmp_path, figure)

    [image] = out["images"]
    assert image["id"] == figure and set(image) >= {"base64", "caption", "page", "description"}
    assert "png" not in image and "kind" not in image
    assert image["description"] == f"For the question, {obj['caption']} shows mu = 0,8"
    [messages] = [m for schema, m in model.prompts if schema == "FigureOut"]
    text, picture = messages[-1].content  # the human message: its text, then the image
    assert QUESTION in text["text"] and f'caption="{obj["caption"]}"' in text["text"]  # type: ignore[index]
    assert picture["image_url"]["url"] == "data:image/png;base64," + image["base64"]  # type: ignore[index]
    assert base64.b64decode(image["base64"]) == sample_store.stores.object_image(figure)
    assert out["trace"]["llm_calls"] == 2  # the figure and the summary
    assert out["trace"]["degraded"] == []


def test_a_failing_figure_call_leaves_the_image_undescribed(
    sample_store: SimpleNamespace, embedder: Any, tmp_path: Path
) -> None:
    figure, _ = _figure(sample_store)

    def script(schema: str, human: str) -> Any:
        return RuntimeError("vision down") if schema == "FigureOut" else describes(schema, human)

    out = _compose(
        sample_store, embedder, ModelQueryTasks(ScriptedChatModel(script=script), retry_wait=False), tmp_path, figure
    )

    [image] = out["images"]
    assert image["id"] == figure and "description" not in image
    assert [d.split(":")[0] for d in out["trace"]["degraded"]] == ["figure"]
    assert "Scripted summary." in out["answer_markdown"]


def test_offline_describes_no_figure(sample_store: SimpleNamespace, embedder: Any, tmp_path: Path) -> None:
    figure, _ = _figure(sample_store)
    out = _compose(sample_store, embedder, OfflineQueryTasks(), tmp_path, figure)
    [image] = out["images"]
    assert image["id"] == figure
    assert "description" not in image and "png" not in image and "kind" not in image
    assert out["trace"]["llm_calls"] == 0


def test_precedence_in_the_brief_gives_each_rule_once_in_its_sources_words() -> None:
    """A clause's National Annex note that also governs the table it cites is one line, in the words of
    the note's sentence; a foreword's list of nationally determined parameters is one line."""
    from clausewise.nodes.query.compose import _precedence_lines

    clause, table, foreword = "CEN_EN1991-9-9_5.2", "CEN_EN1991-9-9_table_5.1", "CEN_EN1991-9-9_foreword"
    other = "CEN_EN1991-9-9_6.1"
    passages = [
        {
            "key": clause,
            "document": "EN 1991-9-9",
            "section": "5.2",
            "text": "(7) Ce should be taken from Table 5.1.\nNOTE The values of Ce may be given in the\n"
            "National Annex.",
        },
        {"key": table, "document": "EN 1991-9-9", "section": "Table 5.1", "text": "| Windswept | 0,8 |"},
        {"key": other, "document": "EN 1991-9-9", "section": "6.1", "text": "(1) The load is 1,0 kN."},
    ]
    note = "may be given in the National Annex."
    sentence = "NOTE The values of Ce may be given in the National Annex."  # precedence gives each rule's sentence
    listed = "national choice is allowed in {} (listed in the foreword)"
    rules = [
        {"key": clause, "rule": note, "sentence": sentence, "source_key": clause},
        {"key": table, "rule": note, "sentence": sentence, "source_key": clause},
        {"key": clause, "rule": listed.format("5.2(2)"), "source_key": foreword},
        {"key": clause, "rule": listed.format("5.2(7)"), "source_key": foreword},
        {"key": table, "rule": listed.format("5.2(7)"), "source_key": foreword},  # the table 5.2(7) cites
        {"key": other, "rule": listed.format("6.1 (1)"), "source_key": foreword},  # OCR's space before "("
    ]
    # the foreword's list is one line whatever each item governs; a passage an item names is not repeated
    assert _precedence_lines(rules, passages) == [
        "- **EN 1991-9-9 5.2**: NOTE The values of Ce may be given in the National Annex. "
        "(governs EN 1991-9-9 Table 5.1)",
        "- **EN 1991-9-9 foreword**: national choice is allowed in 5.2(2), 5.2(7), 6.1 (1) (listed in the foreword) "
        "(governs EN 1991-9-9 Table 5.1)",
    ]


def test_the_briefs_unresolved_references_are_one_line_of_documents_most_cited_first() -> None:
    from clausewise.nodes.query.compose import MARKDOWN_UNRESOLVED, _unresolved_lines

    def ref(document: str | None, n: int) -> list[dict[str, Any]]:
        return [{"from_key": f"CEN_EN1991-9-9_{i}.1", "ref": "x", "document": document} for i in range(n)]

    unresolved = ref("CEN_EN1990", 1) + ref("CEN_EN1991-2", 3) + ref(None, 2) + ref("CEN_EN1990", 1)
    assert _unresolved_lines(unresolved) == [
        "- Not ingested (references to each): EN 1991-2 (3), EN 1990 (2)",
        "- 2 reference(s) whose target was not found in its document",
        "- Each with the passage that makes it, in the JSON answer.",
    ]
    many = [r for i in range(MARKDOWN_UNRESOLVED + 2) for r in ref(f"CEN_EN{100 + i}", 1)]
    assert _unresolved_lines(many)[0].endswith("EN 111 and 2 more")


def test_the_briefs_sources_are_the_pages_of_the_passages_it_asks_you_to_read() -> None:
    from clausewise.nodes.query.compose import render_markdown

    def passage(section: str, page: int, tier: str, document: str = "EN 1991-9-9") -> dict[str, Any]:
        key = f"CEN_{document.replace(' ', '')}_{section}"
        return {"key": key, "document": document, "section": section, "title": "", "page": page, "pages": [page],
                "text": f"{section} text", "hop": 0, "via": "vector", "tier": tier, "rank": 1}  # fmt: skip

    passages = [passage("5.2", 20, "key"), passage("6.1", 30, "supporting"), passage("1.1", 4, "background", "EN 9")]
    brief = render_markdown({"search_question": "What is Ce?"}, passages, [], "summary")  # type: ignore[typeddict-item]
    sources = brief.split("### Sources", 1)[1]
    assert "EN 1991-9-9: pages 20, 30" in sources and "EN 9" not in sources


def test_a_flag_raised_on_several_quoted_passages_is_one_line_of_the_brief() -> None:
    from clausewise.nodes.query.compose import render_markdown

    def passage(section: str) -> dict[str, Any]:
        key = f"CEN_EN1991-9-9_{section}"
        return {"key": key, "document": "EN 1991-9-9", "section": section, "title": "", "page": 5,
                "pages": [5], "text": f"{section} text", "hop": 0, "via": "vector", "tier": "key"}  # fmt: skip

    flag = {"topic": "recommended value vs national choice", "note": "the National Annex may set another"}
    state = {
        "search_question": "What is Ce?",
        "conflicts": [{**flag, "passages": ["CEN_EN1991-9-9_5.2"]}, {**flag, "passages": ["CEN_EN1991-9-9_Table 5.1"]}],
    }
    brief = render_markdown(state, [passage("5.2"), passage("Table 5.1")], [], "summary")  # type: ignore[arg-type]
    assert brief.count("recommended value vs national choice") == 1
    assert "(EN 1991-9-9 5.2, EN 1991-9-9 Table 5.1)" in brief


def test_a_flag_on_many_passages_names_the_quoted_ones_and_counts_the_rest() -> None:
    """One flag over 20 passages of the answer: the brief names those it quotes; a conflict between two
    passages names both, quoted or not."""
    from clausewise.nodes.query.compose import render_markdown

    def passage(section: str, tier: str) -> dict[str, Any]:
        key = f"CEN_EN1991-9-9_{section}"
        return {"key": key, "document": "EN 1991-9-9", "section": section, "title": "", "page": 5,
                "pages": [5], "text": f"{section} text", "hop": 0, "via": "vector", "tier": tier}  # fmt: skip

    passages = [passage("5.2", "key")] + [passage(f"7.{i}", "background") for i in range(1, 20)]
    keys = [p["key"] for p in passages]
    state = {
        "search_question": "What is Ce?",
        "conflicts": [
            {"topic": "recommended value vs national choice", "passages": keys, "note": "the NA may set another"},
            {"topic": "Ce is given different values", "passages": keys[:2], "note": "Ce = 1,0 in 5.2; 0,9 in 7.1"},
        ],
    }
    brief = render_markdown(state, passages, [], "summary")  # type: ignore[arg-type]
    assert "- **recommended value vs national choice** (EN 1991-9-9 5.2 and 19 more in the answer)" in brief
    assert "- **Ce is given different values** (EN 1991-9-9 5.2, EN 1991-9-9 7.1)" in brief


def test_the_brief_shows_the_image_of_an_expression_a_quoted_passage_restates() -> None:
    """5.2 quotes Expression (5.1), which went to the back of the answer: its image is shown with the
    key passages' figures; the images of passages the brief does not quote are not."""
    from clausewise.nodes.query.compose import MARKDOWN_FIGURES, render_markdown

    def passage(section: str, tier: str, **extra: Any) -> dict[str, Any]:
        key = f"CEN_EN1991-9-9_{section}"
        return {"key": key, "document": "EN 1991-9-9", "section": section, "title": "", "page": 5,
                "pages": [5], "text": f"{section} text", "hop": 0, "via": "vector", "tier": tier, **extra}  # fmt: skip

    expression = "CEN_EN1991-9-9_expression_5.1"
    others = [passage(f"figure_7.{i}", "background") for i in range(MARKDOWN_FIGURES + 1)]
    passages = [passage("5.2", "key", restates=[expression]), *others, passage("expression_5.1", "background")]
    images = [
        {"id": p["key"], "path": f"/store/{p['section']}.png", "caption": p["section"], "page": 5}
        for p in [*others, passages[-1]]
    ]
    brief = render_markdown({"search_question": "What is w?"}, passages, images, "summary")  # type: ignore[typeddict-item]
    figures = brief.split("### Figures and tables", 1)[1].split("###", 1)[0]
    assert "[/store/expression_5.1.png](file:///store/expression_5.1.png)" in figures
    assert "figure_7.0" not in figures


def test_the_brief_names_where_a_quoted_passage_is_stated_again_without_quoting_it_twice() -> None:
    """4.4 states what 2.4 states, which went to the back: the brief quotes 4.4 and says where the same
    words are, with 2.4's page, and does not quote 2.4."""
    from clausewise.nodes.query.compose import render_markdown

    def passage(section: str, tier: str, page: int, **extra: Any) -> dict[str, Any]:
        key = f"HSE_HSG9_{section}"
        return {"key": key, "document": "HSG9", "section": section, "title": "Reports", "page": page,
                "pages": [page], "text": f"{section} Keep the report for three months.", "hop": 0,
                "via": "vector", "tier": tier, **extra}  # fmt: skip

    passages = [passage("4.4", "key", 74, same_text=["HSE_HSG9_2.4"]), passage("2.4", "background", 27)]
    brief = render_markdown({"search_question": "How long is a report kept?"}, passages, [], "summary")  # type: ignore[typeddict-item]
    assert "The same text is also at HSG9 2.4, page 27." in brief
    assert "2.4 Keep the report" not in brief


def test_a_quoted_figure_shows_its_caption_and_image_not_the_labels_read_off_the_drawing() -> None:
    """A key figure's text is its caption and the OCR'd labels of the drawing ("~ ____ ~~ ~1 ~I"): the
    brief quotes the caption, links the image right under it and leaves the debris to the JSON answer; a
    quoted table's image comes with it too, and neither is listed again under figures and tables."""
    from clausewise.nodes.query.compose import render_markdown

    def passage(section: str, kind: str, text: str) -> dict[str, Any]:
        key = f"CEN_EN1991-9-9_{section.lower().replace(' ', '_')}"
        return {"key": key, "document": "EN 1991-9-9", "section": section, "title": "", "page": 5, "kind": kind,
                "pages": [5], "text": text, "hop": 0, "via": "vector", "tier": "key"}  # fmt: skip

    drawing = "Figure 5.7: Snow load shape coefficients\nCase (i) ~ ____ ~~ ___ ~1 ~I\n2.0 1.6 IJ 1.0 0.8 L-__ 60°"
    figure = passage("Figure 5.7", "figure", drawing)
    table = passage("Table 5.1", "table", "Table 5.1 Values of Ce\n| Windswept | 0,8 |")
    images = [
        {"id": p["key"], "path": f"/store/{p['key']}.png", "caption": p["section"], "page": 5} for p in (figure, table)
    ]
    brief = render_markdown({"search_question": "What is mu?"}, [figure, table], images, "summary")  # type: ignore[typeddict-item]
    quoted = brief.split("### Key passages", 1)[1]
    assert "> Figure 5.7: Snow load shape coefficients" in quoted
    assert "~1 ~I" not in quoted and "IJ 1.0" not in quoted
    assert "labels, as read from it, are in the JSON answer" in quoted
    link = "Image: [/store/CEN_EN1991-9-9_figure_5.7.png](file:///store/CEN_EN1991-9-9_figure_5.7.png)"
    assert link in quoted and quoted.index(link) < quoted.index("Table 5.1 Values of Ce")
    assert "Image: [/store/CEN_EN1991-9-9_table_5.1.png]" in quoted
    assert "\n\nImage: " in quoted  # its own paragraph, not a line of the quote above it
    assert "### Figures and tables" not in brief


@pytest.mark.parametrize(
    ("field", "kind", "section", "title"),
    [
        ("figures", "figure", "Figure 6.2", "Overhang at the eaves"),
        ("expressions", "expression", "Expression (6.2)", ""),
    ],
)
def test_a_figure_a_quoted_clause_cites_is_shown_under_that_clause(
    field: str, kind: str, section: str, title: str
) -> None:
    """Figure 6.2 (or Expression (6.2)) was moved out of the key passages (its passage is a caption, or a
    formula as the text layer reads it) and 6.2, which cites it, names it in ``figures`` (or
    ``expressions``): the brief shows its name and title (not the caption as OCR read it, "Figure 62")
    and its image under 6.2's quote, before the next passage, and not again under figures and tables."""
    from clausewise.nodes.query.compose import render_markdown

    def passage(section: str, tier: str, kind: str, **extra: Any) -> dict[str, Any]:
        key = f"CEN_EN1991-9-9_{section}"
        return {"key": key, "document": "EN 1991-9-9", "section": section, "title": "", "page": 7, "kind": kind,
                "pages": [7], "text": f"{section} text", "hop": 0, "via": "vector", "tier": tier, **extra}  # fmt: skip

    figure = passage(section, "supporting", kind, title=title)
    passages = [passage("6.2", "key", "clause", **{field: [figure["key"]]}), passage("7.1", "key", "clause"), figure]
    images = [{"id": figure["key"], "path": "/store/object_6.2.png", "caption": "Figure 62: Overhang", "page": 7}]
    brief = render_markdown({"search_question": "What overhang?"}, passages, images, "summary")  # type: ignore[typeddict-item]
    quoted = brief.split("### Key passages", 1)[1]
    line = f"**{section}** {title}".rstrip() + " (page 7): [/store/object_6.2.png](file:///store/object_6.2.png)"
    assert line in quoted
    assert quoted.index("> 6.2 text") < quoted.index(line) < quoted.index("> 7.1 text")
    assert "\n\n" + line in quoted  # its own paragraph, not a line of the quote above it
    assert "### Figures and tables" not in brief


def test_a_quoted_table_drops_the_columns_empty_in_every_row() -> None:
    """Layout leaves spacer columns in a table's rows; the brief shows the table without them, every
    cell with text kept in its row and column order (the JSON answer keeps the rows as read)."""
    from clausewise.nodes.query.compose import _passage_md

    rows = ["|  | Topography |  | Ce |", "|---|---|---|---|", "|  | Windswept |  | 0,8 |", "|  | Normal |  |  |"]
    text = "\n".join(["Table 5.1: Exposure", *rows])
    passage = {"key": "CEN_EN1991-9-9_table_5.1", "document": "EN 1991-9-9", "section": "Table 5.1",
               "title": "Exposure", "pages": [3], "text": text, "kind": "table"}  # fmt: skip
    _, body, _ = _passage_md(passage, 1000)
    assert body.split("\n")[-4:] == ["| Topography | Ce |", "|---|---|", "| Windswept | 0,8 |", "| Normal |  |"]
    ragged = text + "\n| one | more | cell | here | too |"
    _, body, _ = _passage_md({**passage, "text": ragged}, 1000)
    assert "|  | Windswept |  | 0,8 |" in body  # rows of unequal width are shown as read


def test_a_quote_is_reflowed_into_paragraphs_and_keeps_its_items_notes_and_symbols() -> None:
    """The page's line ends are not the reader's: a paragraph's lines become one line of the quote (the
    terminal wraps it), also where a full line ends in a name that goes on ("the National" / "Annex")
    or inside brackets, while each item, NOTE, heading, symbol under "where:" and a word hyphenated
    across lines keep what the page shows. Every word is kept, in order."""
    from clausewise.nodes.query.compose import _passage_md

    page = [
        "5.2 Load arrangements",
        "(1) The following two primary load arrangements shall be taken into account for the roof",
        "when the snow is not prevented from sliding off it, and where the roof is non-",
        "structural at its eaves.",
        "NOTE: The National Annex may specify the use of Annex B for the roof shapes given",
        "in 5.3.4 and 6.2.",
        "NOTE 2 The value of the directional factor for the various wind directions may be found in the National",
        "Annex. The recommended value is 1,0 unless the wind climate of the site is given otherwise (see informative",
        "Annex A).",
        "■ Is the excavation regularly inspected by a competent person in charge of the site?",
        "Manual handling",
        "■ Are there heavy materials which could cause problems if they have to be moved by",
        "hand? If so, can you:",
        "– choose lighter materials;",
        "where:",
        "μi is the snow load shape coefficient given in Table 5.2 for the roof of the building",
        "sk is the characteristic value of snow load on the ground at the relevant site (see 4.1)",
    ]
    passage = {"key": "CEN_EN1991-9-9_5.2", "document": "EN 1991-9-9", "section": "5.2", "title": "Load",
               "pages": [3], "text": "\n".join(page), "kind": "clause"}  # fmt: skip
    _, body, _ = _passage_md(passage, 10_000)
    quoted = [ln.removeprefix("> ").removesuffix("  ") for ln in body.split("\n")]
    assert quoted == [
        "5.2 Load arrangements",
        "(1) The following two primary load arrangements shall be taken into account for the roof when the "
        "snow is not prevented from sliding off it, and where the roof is non-structural at its eaves.",
        "NOTE: The National Annex may specify the use of Annex B for the roof shapes given in 5.3.4 and 6.2.",
        "NOTE 2 The value of the directional factor for the various wind directions may be found in the National "
        "Annex. The recommended value is 1,0 unless the wind climate of the site is given otherwise (see informative "
        "Annex A).",
        "■ Is the excavation regularly inspected by a competent person in charge of the site?",
        "Manual handling",
        "■ Are there heavy materials which could cause problems if they have to be moved by hand? If so, can you:",
        "– choose lighter materials;",
        "where:",
        page[-2],
        page[-1],
    ]
    assert "".join(quoted).replace(" ", "") == "".join(page).replace(" ", "")


def test_a_section_without_a_number_is_named_by_its_heading_not_its_stored_code() -> None:
    """A section of a document without numbered clauses has a code made of its heading's words
    ("excavations-2"): the brief names it by its heading, in the head of its quote, the rest's table and
    the list of what to read first; a numbered clause keeps its number."""
    from clausewise.nodes.query.compose import render_markdown
    from clausewise.tools.query_tasks import OfflineQueryTasks

    def passage(section: str, title: str, tier: str, rank: int) -> dict[str, Any]:
        return {"key": f"HSE_HSG150_{section}", "document": "HSG150", "section": section, "title": title,
                "page": 70 + rank, "pages": [70 + rank], "text": f"{title} text", "hop": 0, "via": "vector",
                "tier": tier, "rank": rank, "kind": "clause"}  # fmt: skip

    passages = [passage("excavations-2", "Excavations", "key", 1), passage("345", "Collapse of the sides", "key", 2),
                passage("manual-handling", "Manual handling", "supporting", 3)]  # fmt: skip
    summary = OfflineQueryTasks.summarise(None, "When is shoring needed?", passages)  # type: ignore[arg-type]
    assert "read first: HSG150 Excavations, HSG150 345." in summary
    brief = render_markdown({"search_question": "When is shoring needed?"}, passages, [], summary)  # type: ignore[typeddict-item]
    assert "**HSG150 Excavations** (page 71)" in brief and "**HSG150 345** Collapse of the sides (page 72)" in brief
    assert "| 3 | HSG150 |  | Manual handling | 73 |" in brief
    assert "excavations-2" not in brief and "manual-handling" not in brief
    # a title two passages share is shown with the headings above each, which tell them apart; one
    # the answer has once is shown alone
    passages[1]["within"] = ["Groundwork", "Excavations"]
    passages[2]["within"] = ["Moving goods safely"]
    passages.append(passage("131", "Collapse of the sides", "supporting", 4) | {"within": ["Working at height"]})
    brief = render_markdown({"search_question": "When is shoring needed?"}, passages, [], summary)  # type: ignore[typeddict-item]
    assert "**HSG150 345** Groundwork › Excavations › Collapse of the sides (page 72)" in brief
    assert "| 4 | HSG150 | 131 | Collapse of the sides (Working at height) | 74 |" in brief
    assert "| 3 | HSG150 |  | Manual handling | 73 |" in brief and "Moving goods" not in brief


def test_a_value_stated_in_a_bulleted_item_is_listed_once_bulleted_in_the_summary() -> None:
    from clausewise.tools.query_tasks import OfflineQueryTasks

    text = "1903.4 Anchors\n• Anchors must be site tested to 150% of the design load.\n■ Bolts need 25 mm of cover."
    passage = {"key": "DOD_UFC3-301-01_1903.4", "document": "UFC 3-301-01", "section": "1903.4", "title": "Anchors",
               "page": 51, "pages": [51], "text": text, "tier": "key", "rank": 1, "kind": "clause"}  # fmt: skip
    summary = OfflineQueryTasks.summarise(None, "How are anchors tested?", [passage])  # type: ignore[arg-type]
    assert "\n- Anchors must be site tested to 150% of the design load. (UFC 3-301-01 1903.4, p. 51)" in summary
    assert "\n- Bolts need 25 mm of cover. (UFC 3-301-01 1903.4, p. 51)" in summary


def test_the_summary_gives_first_the_table_rows_the_question_names_with_their_column_heads() -> None:
    """A table's row whose label names what the question asks about ("urban" road) comes first among the
    values, each value with its column's head; rows for other cases, a row of column heads ("Angle of
    pitch ... | 0° < a < 30°") and a label word that is the table's own subject (in its column heads:
    "road") are not; the row is not given again as printed."""
    from clausewise.tools.query_tasks import OfflineQueryTasks, asked_rows, stem

    table = "\n".join(
        [
            "Table 4.1 - Design forces due to impact on members beside traffic",
            "|  | Category of road | Force Fdx | Force Fdy |",
            "|---|---|---|---|",
            "|  |  | [kN] | [kN] |",
            "|  | Motorways and main roads | 1000 | 500 |",
            "|  | Roads in urban area | 500 | 250 |",
            "|  | - Parking garages, lorries | 150 | 75 |",
        ]
    )
    clause = "4.3.1 Impact from road traffic\n(1) The recommended application height is 1,25 m above the road."
    passages = [
        {"key": "CEN_EN1991-1-7_4.3.1", "document": "EN 1991-1-7", "section": "4.3.1", "title": "Impact",
         "page": 22, "pages": [22], "text": clause, "tier": "key", "rank": 1, "kind": "clause"},
        {"key": "CEN_EN1991-1-7_table_4.1", "document": "EN 1991-1-7", "section": "Table 4.1", "title": "Forces",
         "page": 23, "pages": [23], "text": table, "tier": "key", "rank": 2, "kind": "table"},
    ]  # fmt: skip
    question = "What impact force from lorries on an urban road should I use?"
    summary = OfflineQueryTasks.summarise(None, question, passages)  # type: ignore[arg-type]
    values = summary.split("Values stated in them:\n")[1].split("\n")
    assert values[0] == "- Roads in urban area: Force Fdx [kN] 500; Force Fdy [kN] 250 (EN 1991-1-7 Table 4.1, p. 23)"
    assert (
        values[1] == "- Parking garages, lorries: Force Fdx [kN] 150; Force Fdy [kN] 75 (EN 1991-1-7 Table 4.1, p. 23)"
    )
    assert values[2].startswith("- (1) The recommended application height is 1,25 m")
    assert "Motorways" not in summary and "| 500 | 250" not in summary
    item = "\n".join(["Table 6.1 Temperature differences", "| Type of deck | Heating |", "|---|---|",
                      "| - Steel box girder deck | 18 °C |"])  # fmt: skip
    summary = OfflineQueryTasks.summarise(None, "Steel deck heating?", [{**passages[1], "text": item}])  # type: ignore[arg-type]
    assert summary.count("girder deck") == 1 and "- Steel box girder deck: Heating 18 °C (" in summary
    heads = "\n".join(["Table 5.2 Shape coefficients", "| Angle of pitch of roof a | 0° < a < 30° | a > 60° |",
                       "| mu1 | 0,8 | 0 |"])  # fmt: skip
    assert asked_rows(heads, {stem("roof"), stem("pitch")}) == []


def test_a_head_printed_over_several_columns_names_their_values_and_the_labels_head_does_not() -> None:
    """A head over two columns stands over the first ("Top warmer than bottom" over the columns whose
    values a scan sets further right); a lone head set off to the right of the labels, or the first
    head where none is over the labels, is theirs ("Material", "Products"), not a value's; a scan's
    debris before a label (":;;.;" for a sign it could not read) is not part of it."""
    from clausewise.tools.query_tasks import asked_rows, stem

    halves = "\n".join(["Table 6.1 Temperature differences",
                        "|  | Top warmer than bottom |  |  | Bottom warmer than top |  |  |",
                        "|---|---|---|---|---|---|---|",
                        "| Type of Deck |  |  |  |  |  |  |", "|  |  | dT heat (C) |  |  | dT cool (C) |  |",
                        "| Steel deck |  |  | 18 |  |  | 13 |",
                        "| Composite deck |  |  | 15 |  |  | 18 |"])  # fmt: skip
    assert asked_rows(halves, {stem("steel")}) == [
        "Steel deck: Top warmer than bottom dT heat (C) 18; Bottom warmer than top dT cool (C) 13"
    ]
    lone = "\n".join(["Table C.1 Coefficients", "|  | Material |  |  |", "|---|---|---|---|",
                      "| Stainless steel |  |  | 16 |", "| Concrete |  |  | 10 |"])  # fmt: skip
    assert asked_rows(lone, {stem("steel")}) == ["Stainless steel: 16"]
    noted = lone + "\n| Structural steel, wrought or cast iron |  | 12 (see Note 6) |  |"
    assert asked_rows(noted, {stem("steel")})[-1] == "Structural steel, wrought or cast iron: 12 (see Note 6)"
    shifted = "\n".join(["Table A.9 Foodstuffs", "|  | Products |  | Density |  | Angle |",
                         "|---|---|---|---|---|---|", "| eggs, in stands |  |  | 4,0 to 5,0 |  | - |",
                         "| loose, piled |  | 7,5 to 10,0 |  |  | 35 |"])  # fmt: skip
    assert asked_rows(shifted, {stem("piled")}) == ["loose, piled: 7,5 to 10,0; Angle 35"]
    debris = "\n".join(["Table 3.1 Return periods", "|  | Duration | Return period (years) |", "|---|---|---|",
                        "| :;;.; 3 months (but > 3 days) |  | 5 |"])  # fmt: skip
    assert asked_rows(debris, {stem("months")}) == ["3 months (but > 3 days): Return period (years) 5"]
    assert asked_rows(debris.replace(":;;.;", "≤"), {stem("months")})[0].startswith("≤ 3 months")


def test_a_table_notes_mark_in_a_row_is_not_part_of_its_label_nor_a_value() -> None:
    """A row a note under the table speaks of ("a Windswept topography ...") carries the note's mark, as
    the scan reads it, closing its label ("Sheltered e") or in a cell under no head ("| Windswept | 8 |"):
    neither is given as the row's label or value. A row no note speaks of keeps its last letter ("Zone
    b")."""
    from clausewise.tools.query_tasks import asked_rows, stem

    table = "\n".join(["Table 5.1 Recommended values of Ce", "|  | Topography |  | Ce |", "|---|---|---|---|",
                       "|  | Windswept | 8 | 0,8 |", "|  | Normal D |  | 1,0 |", "|  | Sheltered e |  | 1,2 |",
                       "|  | Zone b |  | 1,4 |",
                       "a Windswept topography: flat unobstructed areas exposed on all sides.",
                       "b Normal topography: areas with no significant removal of snow by wind.",
                       "e Sheltered topography: areas lower than the surrounding terrain."])  # fmt: skip
    wanted = {stem(w) for w in ("windswept", "normal", "sheltered", "zone")}
    assert asked_rows(table, wanted) == ["Windswept: Ce 0,8", "Normal: Ce 1,0", "Sheltered: Ce 1,2", "Zone b: Ce 1,4"]


def test_a_row_given_with_its_heads_is_not_given_again_as_printed_with_its_notes_mark() -> None:
    """A row that states a value with its unit is given once, with its column's head, whether or not
    it carries a note's mark: the row as printed ("Sheltered open site e | 1,2 kN/m2") is that row."""
    from clausewise.tools.query_tasks import OfflineQueryTasks

    text = "\n".join(["Table 5.1 Snow loads", "| Topography | Load |", "|---|---|",
                      "| Windswept open site | 0,8 kN/m2 |", "| Sheltered open site e | 1,2 kN/m2 |",
                      "e Sheltered topography: areas lower than the surrounding terrain."])  # fmt: skip
    table = {"key": "E_t5.1", "document": "EN 1", "section": "Table 5.1", "title": "T", "page": 9, "pages": [9],
             "text": text, "tier": "key", "rank": 1, "kind": "table"}  # fmt: skip
    summary = OfflineQueryTasks.summarise(None, "What snow load on a sheltered or windswept site?", [table])  # type: ignore[arg-type]
    assert summary.split("Values stated in them:\n")[1].split("\n") == [
        "- Windswept open site: Load 0,8 kN/m2 (EN 1 Table 5.1, p. 9)",
        "- Sheltered open site: Load 1,2 kN/m2 (EN 1 Table 5.1, p. 9)",
    ]


def test_a_statement_pointing_to_a_short_key_table_is_followed_by_its_rows() -> None:
    """ "The recommended values are given in Table 5.1" says nothing by itself: the table's rows follow
    it when the table is a key passage of the same document with few rows; a long table is quoted in
    the key passages, not in the summary."""
    from clausewise.tools.query_tasks import SUMMARY_TABLE_ROWS, OfflineQueryTasks

    def passage(key: str, section: str, kind: str, text: str) -> dict[str, Any]:
        return {"key": key, "document": "EN 1", "section": section, "title": "T", "page": 9, "pages": [9],
                "text": text, "tier": "key", "rank": 1, "kind": kind}  # fmt: skip

    clause = passage("E_5.2", "5.2", "clause", "5.2 Exposure\n(7) The recommended values are given in Table 5.1.")
    rows = ["| Windswept | 0,8 |", "| Normal | 1,0 |", "| Sheltered | 1,2 |"]
    short = passage(
        "E_t5.1", "Table 5.1", "table", "\n".join(["Table 5.1 Ce", "| Topography | Ce |", "|---|---|", *rows])
    )
    summary = OfflineQueryTasks.summarise(None, "Which exposure coefficient?", [clause, short])  # type: ignore[arg-type]
    values = summary.split("Values stated in them:\n")[1].split("\n")
    assert values[0].startswith("- (7) The recommended values are given in Table 5.1.")
    assert values[1] == "- Windswept: Ce 0,8 / Normal: Ce 1,0 / Sheltered: Ce 1,2 (EN 1 Table 5.1, p. 9)"
    long_rows = [f"| Case {n} | {n},5 |" for n in range(SUMMARY_TABLE_ROWS + 1)]
    long = {**short, "text": "\n".join(["Table 5.1 Ce", "| Topography | Ce |", "|---|---|", *long_rows])}
    summary = OfflineQueryTasks.summarise(None, "Which exposure coefficient?", [clause, long])  # type: ignore[arg-type]
    assert "Case 1" not in summary


def test_the_summary_takes_at_most_three_values_from_one_later_passage() -> None:
    """Past the first passages a statement needs only share a word with the question; a later passage
    listing many (a guide's tolerances for bricks, for a question on the deflection of girts behind brick
    veneer) gives three, and the next passage's value gets a line."""
    from clausewise.tools.query_tasks import SUMMARY_PER_PASSAGE, OfflineQueryTasks

    def passage(n: int, text: str) -> dict[str, Any]:
        return {"key": f"NZ_G_{n}", "document": "G", "section": str(n), "title": "T", "page": n, "pages": [n],
                "text": text, "tier": "key", "rank": n, "kind": "clause"}  # fmt: skip

    opening = [passage(n, f"{n} Scope\nText without values, long enough to be read as a clause.") for n in (1, 2, 3)]
    bricks = "\n".join(f"({i}) Brick chips are no longer than {i} mm from the edges of the wall." for i in range(1, 7))
    later = [
        passage(4, f"4 Bricks\n{bricks}"),
        passage(5, "5 Girts\n(1) Girts behind brick veneer deflect L/600 at 5 mm."),
    ]
    summary = OfflineQueryTasks.summarise(None, "What deflection for girts behind brick veneer?", opening + later)  # type: ignore[arg-type]
    values = summary.split("Values stated in them:\n")[1].split("\n")
    assert sum("(G 4, p. 4)" in v for v in values) == SUMMARY_PER_PASSAGE == 3
    assert values[-1].endswith("(G 5, p. 5)")


def test_the_screen_lines_script_counts_a_brief_as_the_terminal_shows_it(tmp_path: Path, monkeypatch: Any) -> None:
    """scripts/brief_lines.py: a quote runs on at the screen's width, so a narrower terminal shows the
    same brief in more lines; a folder without answers is an error, not a median of nothing."""
    import importlib.util

    import pytest

    path = Path(__file__).resolve().parents[3] / "scripts" / "brief_lines.py"
    spec = importlib.util.spec_from_file_location("brief_lines", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    brief = "## Q\n\n**EN 1 5.2** Title (page 3)\n> " + "word " * 60 + " \n"
    assert script.screen_lines(brief, 40) > script.screen_lines(brief, 100) >= 4
    monkeypatch.setattr("sys.argv", ["brief_lines.py", str(tmp_path)])
    with pytest.raises(SystemExit, match="no JSON answers"):
        script.main()
    # --questions: the essential phrases a brief shows, read through its line runs and table pipes
    evidence = [{"must_contain": "exposure coefficient, ce"}, {"must_contain": "0,8 windswept"},
                {"must_contain": "not in it"}, {"must_contain": "thermal", "essential": False}]  # fmt: skip
    questions = [{"id": "q1", "evidence": evidence}]
    briefs = {"q1": "> the exposure\n> coefficient, Ce\n| 0,8 | Windswept |", "q2": "exposure"}
    assert script.shown(briefs, questions) == (2, 3)


def test_a_tables_notes_are_quoted_under_its_rows_as_printed_not_run_into_its_caption() -> None:
    """Caption, rows, the notes printed under them: the brief keeps that order. The caption, which
    ends without a full stop, does not run on into a note that starts in lower case ("a Windswept ...")."""
    from clausewise.nodes.query.compose import _passage_md

    text = (
        "Table 5.1 Recommended values of Ce\n| Topography | Ce |\n|---|---|\n| Windswept a | 0,8 |\n"
        "a Windswept topography: flat unobstructed areas exposed on all sides\nwithout shelter.\nNOTE See 5.2."
    )
    passage = {"key": "CEN_EN1991-9-9_table_5.1", "document": "EN 1991-9-9", "section": "Table 5.1",
               "title": "Recommended values of Ce", "pages": [3], "text": text, "kind": "table"}  # fmt: skip
    _, body, _ = _passage_md(passage, 1000)
    assert body == (
        "> Table 5.1 Recommended values of Ce  \n\n| Topography | Ce |\n|---|---|\n| Windswept a | 0,8 |\n\n"
        "> a Windswept topography: flat unobstructed areas exposed on all sides without shelter.  \n> NOTE See 5.2.  "
    )


def test_a_table_of_rows_alone_is_shown_as_its_rows_without_an_empty_quote() -> None:
    from clausewise.nodes.query.compose import _passage_md

    rows = "| Windswept | 0,8 |\n| Normal | 1,0 |"
    passage = {"key": "CEN_EN1991-9-9_table_5.1", "document": "EN 1991-9-9", "section": "Table 5.1",
               "title": "Exposure", "pages": [3], "text": rows, "kind": "table"}  # fmt: skip
    _, body, _ = _passage_md(passage, 1000)
    assert body == rows


def test_a_long_clause_is_quoted_by_the_paragraphs_that_bear_on_the_question() -> None:
    """A key clause too long to quote whole: the brief quotes its heading and the paragraphs with the
    question's terms, in text order, "…" where paragraphs are left out, not its first lines, which may
    stop above the rule asked about, a NOTE with the paragraph it qualifies; the JSON answer keeps it
    whole. Without terms, its first lines."""
    from clausewise.nodes.query.compose import MARKDOWN_PASSAGE_CHARS, render_markdown
    from clausewise.tools.query_tasks import Terms, stem

    filler = " ".join(["The floor is designed for the loads of its category of use as the table gives."] * 4)
    paragraphs = [f"({i}) {filler}" for i in range(1, 9)]
    paragraphs[6] = "(7) Movable partitions may be taken into account by a uniformly distributed load qk = 0,8 kN/m2."
    paragraphs[3] += "\nNOTE Heavier movable partitions are taken as line loads."  # a NOTE, read with its (4)
    text = "6.3.1.2 Values of actions\n" + "\n".join(paragraphs)
    assert text.index("(7) Movable") > MARKDOWN_PASSAGE_CHARS
    p = {"key": "CEN_EN1991-9-9_6.3.1.2", "document": "EN 1991-9-9", "section": "6.3.1.2", "kind": "clause",
         "title": "Values of actions", "page": 5, "pages": [5], "text": text, "hop": 0, "via": "vector",
         "tier": "key"}  # fmt: skip
    movable, partitions = stem("movable"), stem("partitions")
    terms = Terms(weights={movable: 4.0, partitions: 4.0, f"{movable} {partitions}": 5.0})
    state = {"search_question": "What load for movable partitions?"}
    brief = render_markdown(state, [p], [], "summary", terms=terms)  # type: ignore[arg-type]
    quote = brief.split("### Key passages", 1)[1]
    assert "6.3.1.2 Values of actions" in quote and "(7) Movable partitions" in quote and "qk = 0,8" in quote
    assert quote.index("6.3.1.2 Values of actions") < quote.index("…") < quote.index("(7) Movable")
    assert quote.index("(4) The floor") < quote.index("NOTE Heavier") < quote.index("(7) Movable")
    assert "more characters of CEN_EN1991-9-9_6.3.1.2 in the JSON answer" in quote
    plain = render_markdown(state, [p], [], "summary").split("### Key passages", 1)[1]  # type: ignore[arg-type]
    assert "(1) The floor" in plain and "(7) Movable" not in plain


def test_a_long_table_is_quoted_by_its_column_heads_and_the_rows_that_bear_on_the_question() -> None:
    """A key table too long to quote whole: its caption, its column heads, the rows with the question's
    terms and the row either side, a row of "…" where rows are left out; a row whose leading cell is
    empty is the line of the row above it. Not its first rows, which hold other cases."""
    from clausewise.nodes.query.compose import _passage_md
    from clausewise.tools.query_tasks import Terms, stem

    rows = [f"| {n} | Area of kind {n} with low vegetation and isolated obstacles | 0,0{n} |" for n in range(1, 9)]
    rows[6] = "| 7 | Area with regular cover of buildings |  |\n|  | (such as villages, suburban terrain) | 0,3 |"
    text = "Table 4.1 - Terrain categories\n| Category | Description | z0 |\n|---|---|---|\n" + "\n".join(rows)
    passage = {"key": "CEN_EN1991-9-9_table_4.1", "document": "EN 1991-9-9", "section": "Table 4.1",
               "title": "Terrain categories", "pages": [3], "text": text, "kind": "table"}  # fmt: skip
    terms = Terms(weights={stem("suburban"): 4.0, stem("villages"): 3.0})
    _, body, after = _passage_md(passage, 300, terms)[:3]
    assert "| Category | Description | z0 |" in body and "suburban terrain) | 0,3 |" in body
    assert "| 6 |" in body and "| 8 |" in body  # the rows either side
    assert "| 1 |" not in body and "| … |" in body
    assert body.index("| … |") < body.index("| 6 |") < body.index("suburban")
    assert "more characters of CEN_EN1991-9-9_table_4.1 in the JSON answer" in body
    _, plain, _ = _passage_md(passage, 300)
    assert "| 1 |" in plain and "suburban" not in plain  # without the question's terms: from the top


def test_a_scanned_tables_column_heads_below_its_rule_are_kept_with_the_rows_that_bear() -> None:
    """OCR may put a caption's last line above the rule and the column heads below it: the rows before
    the first with a number in a cell of its own are the heads, quoted with the rows chosen."""
    from clausewise.nodes.query.compose import _passage_md
    from clausewise.tools.query_tasks import Terms, stem

    rows = [f"| Road category {n} of many kinds with long names |  | {n}00 | {n}50 |" for n in range(1, 9)]
    rows[6] = "| Roads in urban area |  | 500 | 250 |"
    text = (
        "Table 4.1 - Design forces\n| on members | over roadways |  |  |\n|---|---|---|---|\n"
        "| Category of traffic |  | Force Fdx | Force Fdy |\n|  |  | [kN] | [kN] |\n" + "\n".join(rows)
    )
    passage = {"key": "CEN_EN1991-9-9_table_4.1", "document": "EN 1991-9-9", "section": "Table 4.1",
               "title": "Design forces", "pages": [3], "text": text, "kind": "table"}  # fmt: skip
    _, body, _ = _passage_md(passage, 300, Terms(weights={stem("urban"): 4.0}))
    assert "| Category of traffic |  | Force Fdx | Force Fdy |" in body and "| [kN] | [kN] |" in body
    assert "| Roads in urban area |  | 500 | 250 |" in body and "Road category 1 " not in body
    assert body.index("Force Fdx") < body.index("| … |") < body.index("urban")
