"""compose: the answer contract (passages, images, precedence, conflicts, references followed and
not, trace) and the engineer's brief in markdown."""

from __future__ import annotations

import base64
import re
import time
from collections import Counter, defaultdict
from collections.abc import Set as AbstractSet
from itertools import groupby
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.keys import OBJECT_KINDS, cited, code_label, document_of, heading_coded, split_key
from clausewise.nodes.query.deps import QueryDeps, deps_of
from clausewise.references import doc_display
from clausewise.tools.parallel import map_ordered
from clausewise.tools.query_tasks import Terms, continued_lines, legible, score_text, units

MARKDOWN_QUOTE_CHARS = 7_000  # quoted text of the key passages in the brief (the JSON has all of it)
MARKDOWN_PASSAGE_CHARS = 1_200  # longest quote of one passage in the brief
MARKDOWN_PASSAGE_MIN = 300  # shortest quote of a key passage, once the brief's quote budget is spent
TABLE_ROW_CONTEXT = 1  # rows quoted either side of a table row that bears on the question
MARKDOWN_FIGURES = 8  # figures and tables not quoted in the brief, listed there with their files
MARKDOWN_UNRESOLVED = 12  # documents not ingested, listed in the brief
MARKDOWN_RULES = 12  # precedence rules of the quoted passages in the brief
FLAG_NAMES = 3  # a conflict flag on more passages names only the quoted ones in the brief
# "national choice is allowed in 5.2(7) (listed in the foreword)": one of a list
_NUMBER_CELL = re.compile(r"^[-+±]?\d[\d\s,.]*$")  # a cell that is a number alone: "0,8", "-1,2", "1 500"
_LISTED = re.compile(r"^(.*\ballowed in )((?:Table|Figure|Expression) \S+|\S+(?: \(\w+\))?)( .*)?$", re.S)


def _beside(passage: dict[str, Any]) -> list[str]:
    """The figures and expressions a passage cites that were moved out of the key passages."""
    return [*passage.get("figures", []), *passage.get("expressions", [])]


def compose(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    """The answer contract (docs/DESIGN.md), with an engineer's brief as markdown."""
    ctx, deps = runtime.context, deps_of(runtime)
    passages = [dict(p) for p in state.get("passages") or []]
    kinds = {p["key"]: p["kind"] for p in passages}
    # each object's image in reading order; an expression a passage restates, and a figure or an
    # expression it cites that was moved out of the key passages, come with that passage
    shown = [
        k
        for p in passages
        for k in ([p["key"]] if p["kind"] in OBJECT_KINDS else []) + p.get("restates", []) + _beside(p)
    ]
    images: list[dict[str, Any]] = []
    for key in dict.fromkeys(shown):
        if len(images) >= ctx.max_images:
            break
        obj = deps.stores.lookup("objects", key) or {}
        png = deps.stores.object_image(key) if obj.get("image") else None
        if png:
            images.append(
                {
                    "id": key,
                    "path": obj["image"],
                    "base64": base64.b64encode(png).decode(),
                    "caption": obj.get("caption"),
                    "page": obj.get("page"),
                    "bbox": obj.get("bbox"),
                    "kind": kinds[key],
                    "png": png,
                }
            )
    # The model looks at the answer's first figures for this question (the offline reasoner cannot).
    figures = [i for i in images if i["kind"] == "figure"][: deps.tasks.max_figures]
    described = map_ordered(
        deps.tasks.concurrency,
        lambda i: deps.tasks.describe_figure(state["search_question"], i.get("caption"), i["png"]),
        figures,
    )
    for image, text in zip(figures, described, strict=True):
        if text:
            image["description"] = text
    for image in images:
        image.pop("kind")
        image.pop("png")
    summary = deps.tasks.summarise(state["search_question"], passages)
    terms = deps.terms(state["search_question"])
    markdown = render_markdown(state, passages, images, summary, deps.system.local_path, terms=terms)
    trace = {
        **usage_since(deps, state),
        "widenings": state.get("widenings", 0),
        "hops": state.get("hops", 0),
        "elapsed_s": round(time.perf_counter() - state["started"], 3),
        "candidates": len(state.get("candidates") or {}),
        "notes": state.get("notes", []),
        "rejected_references": state.get("rejected_references") or [],
    }
    return {
        "passages": passages,
        "images": images,
        "answer_markdown": markdown,
        "trace": trace,
        "history": [{"question": state["question"], "answer": markdown}],
    }


def usage_since(deps: QueryDeps, state: QueryState) -> dict[str, Any]:
    """Model calls, tokens and degraded tasks of this question (the reasoner's counters less the
    snapshot triage took); the offline reasoner makes none."""
    now, before = deps.tasks.usage(), state.get("usage_before") or {}
    return {
        "mode": now["mode"],
        "llm_calls": now["llm_calls"] - before.get("llm_calls", 0),
        "tokens": now["tokens"] - before.get("tokens", 0),
        "degraded": now["degraded"][len(before.get("degraded", [])) :],
    }


def render_markdown(
    state: QueryState,
    passages: list[dict[str, Any]],
    images: list[dict[str, Any]],
    summary: str,
    local_path: Any = None,
    terms: Terms | None = None,
) -> str:
    """The engineer's brief: the question, a short summary, the key passages quoted, one compact table of
    the rest, figures with their files, and the precedence rules and conflicts of the quoted passages.
    Every passage, quoted here or not, is in the JSON answer. A clause too long to quote whole is quoted
    by its heading and the paragraphs that hold most of the question's ``terms``."""
    q = state["search_question"]
    lines = [f"## {q}", ""]
    for note in state.get("notes") or []:
        lines.append(f"> {note}")
    if not passages:
        lines += [
            "Nothing in the ingested codes bears on this question.",
            "",
            "Try naming the action or element (for example *imposed load*, *snow load on roofs*, "
            "*density of concrete*), the code part if you know it (*EN 1991-1-3*), or a symbol (*sk*, *Ce*).",
        ]
        return "\n".join(lines)
    key = [p for p in passages if p.get("tier") == "key"] or passages[:1]
    rest = [p for p in passages if p not in key]
    # A title two passages share ("Inspections and reports" of the scaffold and of the excavation
    # chapter) is shown with the headings above it, which tell them apart.
    titles = Counter(_plain(p.get("title")) for p in passages if p.get("title"))
    shared = {t for t, n in titles.items() if n > 1}
    lines += ["### Summary", summary, "", f"### Key passages ({len(key)} of {len(passages)})"]
    image_of = {img["id"]: img for img in images}
    by_key = {p["key"]: p for p in passages}

    def link(img: dict[str, Any]) -> str:
        where = local_path(img["path"]) if local_path else img["path"]
        return f"[{where}]({f'file://{where}' if where.startswith('/') else where})"

    budget = MARKDOWN_QUOTE_CHARS
    for p in key:
        lines += _passage_md(p, min(MARKDOWN_PASSAGE_CHARS, max(budget, MARKDOWN_PASSAGE_MIN)), terms, shared)
        budget -= len(p["text"])
        img = image_of.get(p["key"])
        if img:  # a quoted figure, table or expression: its image with it, a click away
            lines[-1:-1] = ["", f"Image: {link(img)}"] + _described(img)
        for figure in _beside(p):  # a figure or expression it cites, not quoted: its name, title and image
            img, fig = image_of.get(figure), by_key.get(figure)
            if img and fig:
                label = f"**{fig['section']}** {fig.get('title') or ''}".rstrip()
                lines[-1:-1] = ["", f"{label} (page {img['page']}): {link(img)}"] + _described(img)
        twins = [by_key[t] for t in p.get("same_text", []) if t in by_key]
        if twins:  # the same words elsewhere in the document: where, not quoted again
            where = "; ".join(f"{cited(t['document'], t['section'], t.get('title'))}, page {t['page']}" for t in twins)
            lines[-1:-1] = ["", f"The same text is also at {where}."]
    quoted = {p["key"] for p in key}
    beside = {f for p in key for f in _beside(p)}
    restated = {r for p in key for r in p.get("restates", [])}
    shown = [
        img
        for img in images
        if img["id"] not in beside
        and (img["id"] in restated or (len(images) <= MARKDOWN_FIGURES and img["id"] not in quoted))
    ]
    if shown:
        lines += ["", "### Figures and tables"]
        for img in shown[:MARKDOWN_FIGURES]:
            label = img.get("caption") or img["id"]
            lines.append(f"- **{label}** (page {img['page']}): {link(img)}")
            if img.get("description"):  # model mode: what the figure shows that bears on the question
                lines.append(f"  > {img['description']}")
    rules = [r for r in state.get("precedence") or [] if r["key"] in quoted]
    if rules:
        lines += ["", "### Precedence (quoted passages)"]
        lines += _precedence_lines(rules, passages)
    conflicts = [c for c in state.get("conflicts") or [] if quoted & set(c.get("passages") or [])]
    if conflicts:
        lines += ["", "### Conflicts (highlighted, not resolved)"]
        said: dict[tuple[str, str], list[str]] = {}  # one line for a flag raised on several passages
        for c in conflicts:
            said.setdefault((c["topic"], c["note"]), []).extend(c.get("passages") or [])
        for (topic, note), keys in said.items():
            keys = list(dict.fromkeys(keys))
            # a flag on many passages names the quoted ones and counts the rest (they are in the JSON)
            named = keys if len(keys) <= FLAG_NAMES else [k for k in keys if k in quoted]
            more = len(keys) - len(named)
            where = ", ".join(_name(k, by_key) for k in named) + (f" and {more} more in the answer" if more else "")
            lines.append(f"- **{topic}** ({where}): {note}")
    if rest:
        lines += _rest_table(rest, shared)
    unresolved = state.get("unresolved_references") or []
    if unresolved:
        lines += ["", f"### Unresolved references ({len(unresolved)})"]
        lines += _unresolved_lines(unresolved)
    if state.get("unfollowed_references"):
        n = len(state["unfollowed_references"])
        lines += ["", "### References listed, not followed (beyond the 3rd order)", f"{n}, in the JSON answer."]
    lines += ["", "### Sources (key and supporting passages)"]
    for doc, pages in _sources([p for p in passages if p.get("tier") in ("key", "supporting")] or passages).items():
        lines.append(f"- {doc}: pages {', '.join(map(str, pages))}")
    return "\n".join(lines)


def _plain(title: str | None) -> str:
    return " ".join((title or "").split()).lower()


def _rest_table(rest: list[dict[str, Any]], shared: AbstractSet[str] = frozenset()) -> list[str]:
    """Supporting passages as one row each; background ones counted by document."""
    supporting = [p for p in rest if p.get("tier") == "supporting"]
    background = [p for p in rest if p.get("tier") != "supporting"]
    lines = ["", f"### Also relevant ({len(rest)} more passages, quoted in full in the JSON answer)"]
    if supporting:
        lines += ["", "| # | document | section | title | page |", "|---|---|---|---|---|"]
        for p in supporting:
            title = " ".join((p.get("title") or "").split())
            if p.get("within") and _plain(title) in shared:  # the nearest heading above tells two alike apart
                title += f" ({p['within'][-1]})"
            title = title[:70].replace("|", "/")
            section = "" if heading_coded(p["section"], p.get("title")) else p["section"]  # its title names it
            lines.append(f"| {p.get('rank', '')} | {p['document']} | {section} | {title} | {p['page']} |")
    if background:
        by_doc: dict[str, int] = defaultdict(int)
        for p in background:
            by_doc[p["document"]] += 1
        lines += ["", "Background: " + ", ".join(f"{d} ({n})" for d, n in sorted(by_doc.items()))]
    return lines


def _unresolved_lines(unresolved: list[dict[str, Any]]) -> list[str]:
    """References the answer could not follow, in two lines: the documents not ingested, most cited
    first, with how many references name each; and how many targets were not found."""
    missing = Counter(doc_display(r["document"]) for r in unresolved if r.get("document"))
    lines = []
    if missing:
        ranked = missing.most_common()  # among equals, the first cited first
        named = [f"{doc} ({n})" if n > 1 else doc for doc, n in ranked[:MARKDOWN_UNRESOLVED]]
        more = f" and {len(ranked) - MARKDOWN_UNRESOLVED} more" if len(ranked) > MARKDOWN_UNRESOLVED else ""
        lines.append(f"- Not ingested (references to each): {', '.join(named)}{more}")
    not_found = len(unresolved) - sum(missing.values())
    if not_found:
        lines.append(f"- {not_found} reference(s) whose target was not found in its document")
    return lines + ["- Each with the passage that makes it, in the JSON answer."]


def _precedence_lines(rules: list[dict[str, Any]], passages: list[dict[str, Any]]) -> list[str]:
    """Each rule once, in its source's words (its ``sentence``), with the quoted passages it governs (a
    table cited by a clause shares the clause's National Annex note); a foreword's list of nationally
    determined parameters as one line naming the listed clauses, and only the governed passages those
    clauses do not already name (a table, a subclause of another clause)."""
    by_key = {p["key"]: p for p in passages}
    lines_of: dict[tuple[str, str, str], tuple[list[str], list[str]]] = {}  # -> (listed items, governed keys)
    for r in rules:
        source, words = r.get("source_key") or r["key"], r.get("sentence") or r["rule"]
        m = _LISTED.match(words)
        head, item, tail = (m.group(1), m.group(2), m.group(3) or "") if m else (words, "", "")
        items, keys = lines_of.setdefault((source, head, tail), ([], []))
        if item and item not in items:
            items.append(item)
        if r["key"] not in keys:
            keys.append(r["key"])
    lines = []
    for (source, head, tail), (items, keys) in list(lines_of.items())[:MARKDOWN_RULES]:
        clauses = {item.split("(")[0].strip() for item in items}  # "4.2 (1)" lists 4.2
        others = [
            _name(k, by_key) for k in keys if k != source and (k not in by_key or by_key[k]["section"] not in clauses)
        ]
        governs = f" (governs {', '.join(others)})" if others else ""
        words = " ".join(f"{head}{', '.join(items)}{tail}".split())
        lines.append(f"- **{_name(source, by_key)}**: {words}{governs}")
    if len(lines_of) > MARKDOWN_RULES:
        lines.append(f"- {len(lines_of) - MARKDOWN_RULES} more, in the JSON answer")
    return lines


def _described(img: dict[str, Any]) -> list[str]:
    """Model mode: what the figure shows that bears on the question, as a quote under its image."""
    return [f"> {img['description']}"] if img.get("description") else []


def _name(key: str, by_key: dict[str, dict[str, Any]]) -> str:
    """A key as the brief names it: "EN 1991-1-3 Table 5.1" (a section not in the answer by its code)."""
    if key in by_key:
        p = by_key[key]
        return cited(p["document"], p["section"], p.get("title"))
    try:
        return f"{doc_display(document_of(key))} {code_label(split_key(key)[2])}".strip()
    except KeyError:
        return key


def _passage_md(
    p: dict[str, Any], limit: int, terms: Terms | None = None, shared: AbstractSet[str] = frozenset()
) -> list[str]:
    """A passage quoted, cut at a line end after ``limit`` characters (the JSON answer has it whole); a
    longer clause by its paragraphs that bear most on the question (:func:`_bearing`), a longer table by
    its rows that do (:func:`_bearing_rows`), what they choose quoted whole up to twice ``limit``."""
    head = f"**{cited(p['document'], p['section'], p.get('title'))}**"
    if p.get("title") and not heading_coded(p["section"], p["title"]):  # a shared title with the headings above
        head += " " + " › ".join([*(p.get("within", []) if _plain(p["title"]) in shared else []), p["title"]])
    head += f" (page {', '.join(map(str, p['pages']))})"
    if p.get("hop"):
        head += f" via {p['via']} from {p['from_key']}"
    text, after = p["text"].split("\n"), []
    if p.get("kind") == "figure":  # a drawing's labels, read by OCR, are debris to a reader: its image shows them
        legible_lines = [text[0], *(ln for ln in text[1:] if legible(ln))]
        if len(legible_lines) < len(text):
            text, after = legible_lines, ["[the drawing's labels, as read from it, are in the JSON answer]"]
    picked = None
    if terms is not None and p.get("kind") not in OBJECT_KINDS and len(p["text"]) > limit:
        picked = _bearing(p["text"], limit, terms)
    elif terms is not None and p.get("kind") == "table" and len(p["text"]) > limit:
        picked = _bearing_rows(p["text"], limit, terms)
    if picked:
        text, left_out = picked
        limit *= 2  # a paragraph or row chosen to fit is quoted whole, short of twice the limit
        if left_out:
            after = [f"[... {left_out} more characters of {p['key']} in the JSON answer]"]
    lines, size = [], 0
    for line in text:
        if size >= limit:
            after = [f"[... {len(p['text']) - size} more characters of {p['key']} in the JSON answer]"]
            break
        lines.append(line)
        size += len(line) + 1
    # The page's line ends inside a sentence are the page's, not the reader's: the quote runs them on, so
    # that the terminal wraps it once. A table: its caption as a quote, its rows as a markdown table, the
    # notes printed under it as a quote under it, in the order they are printed.
    parts = []
    for is_row, run in groupby(lines, key=lambda ln: ln.startswith("|")):
        block = list(run)
        if is_row:
            parts.append("\n".join(_without_empty_columns(block)))
        else:
            parts.append("\n".join("> " + ln + "  " for ln in continued_lines("\n".join(block))))
    if after:
        parts.append("\n".join("> " + ln + "  " for ln in after))
    return [head, "\n\n".join(part for part in parts if part), ""]


def _bearing(text: str, limit: int, terms: Terms) -> tuple[list[str], int] | None:
    """The lines of a long clause to quote within about ``limit`` characters: its heading line and, in
    text order, the paragraphs that bear most on the question (the weight of the question's terms they
    hold over the square root of their length, so that a long paragraph does not win by length alone;
    the earlier of two alike), a NOTE with the paragraph it qualifies, "…" where paragraphs are left
    out between them, and how many characters are left out. A cut at the limit would drop the rule the
    question is about when it is printed low in the clause ("(8) ... movable partitions" under six
    paragraphs on floors)."""
    spans = units(text)
    if len(spans) < 2:
        return None

    def bearing(i: int) -> float:
        a, b = spans[i]
        return _bearing_weight(text[a:b], terms)

    def qualified(i: int) -> int:  # a NOTE is quoted with the paragraph it qualifies
        while i > 1 and text[spans[i][0] : spans[i][1]].lstrip().startswith("NOTE"):
            i -= 1
        return i

    chosen, size = {0}, spans[0][1] - spans[0][0]
    for i in sorted(range(1, len(spans)), key=lambda i: (-bearing(i), i)):
        group = {i, qualified(i)} - chosen
        more = sum(spans[j][1] - spans[j][0] for j in group)
        if not group or (size + more > limit and len(chosen) > 1):
            continue
        chosen |= group
        size += more
        if size >= limit:
            break
    picked = [spans[i] for i in sorted(chosen)]
    lines: list[str] = []
    end = None
    for a, b in picked:
        if end is not None and text[end:a].strip():
            lines.append("…")
        lines += text[a:b].strip("\n").split("\n")
        end = b
    return lines, len(text) - size


def _bearing_weight(text: str, terms: Terms) -> float:
    """How much a paragraph or a table row bears on the question: its terms' weight over the square root
    of its length, so that a long one does not win by length alone."""
    return score_text(text, terms) / max(len(text), 80) ** 0.5


def _bearing_rows(text: str, limit: int, terms: Terms) -> tuple[list[str], int] | None:
    """The lines of a long table to quote within about ``limit`` characters: its caption, its column
    heads (the rows down to the rule under them, and those below it before the first row with a number
    in a cell of its own, as a scan may print them) and, in printed order, the rows that bear most on the
    question (as :func:`_bearing` weighs paragraphs; a row whose first cell is empty continues the row
    above, as a cell's second printed line does), a row of "…" where rows are left out, then the lines
    printed under it while room is left. Rows from the top would show a terrain table's first category,
    not the one asked about."""
    lines = text.split("\n")
    first = next((i for i, ln in enumerate(lines) if ln.startswith("|")), len(lines))
    last = max((i for i, ln in enumerate(lines) if ln.startswith("|")), default=first - 1) + 1
    rows = lines[first:last]
    if not rows or any(not ln.startswith("|") for ln in rows):
        return None
    split = [row.strip().strip("|").split("|") for row in rows]
    cells = len(split[0])
    rule = next((i for i, ln in enumerate(rows[:4]) if set(ln) <= set("|-: ")), 0)
    # A scan's table may have its column heads below the rule: the rows above the first with a number
    # in a cell of its own (at most three) are kept with it, when numbers follow.
    numeric = [any(_NUMBER_CELL.match(c.strip()) for c in row) for row in split]
    heads = next((i for i in range(rule + 1, len(rows)) if numeric[i]), len(rows))
    if heads < len(rows) and heads - rule - 1 <= 3:
        rule = heads - 1
    body = split[rule + 1 :]
    lead = next((j for j in range(cells) if any(len(c) > j and c[j].strip() for c in body)), 0)
    groups: list[list[str]] = []
    for row, cut in zip(rows[rule + 1 :], body, strict=True):
        if groups and not (len(cut) > lead and cut[lead].strip()):
            groups[-1].append(row)
        else:
            groups.append([row])
    if len(groups) < 2:
        return None

    def bearing(i: int) -> float:
        return _bearing_weight(" ".join(groups[i]), terms)

    size = sum(len(ln) + 1 for ln in lines[:first] + rows[: rule + 1])
    chosen: set[int] = set()
    for i in sorted(range(len(groups)), key=lambda i: (-bearing(i), i)):
        near = {j for j in range(i - TABLE_ROW_CONTEXT, i + TABLE_ROW_CONTEXT + 1) if 0 <= j < len(groups)} - chosen
        more = sum(len(ln) + 1 for j in near for ln in groups[j])
        if bearing(i) <= 0 or not near or (size + more > limit and chosen):
            continue
        chosen |= near
        size += more
    if not chosen:
        return None
    gap = "|" + "|".join([" … "] + [""] * (cells - 1)) + "|"
    out = lines[:first] + rows[: rule + 1]
    for i, lines_of_row in enumerate(groups):
        if i in chosen:
            out += lines_of_row
        elif out[-1] != gap:
            out.append(gap)
    for ln in lines[last:]:
        if size + len(ln) + 1 > limit:
            break
        out.append(ln)
        size += len(ln) + 1
    return out, len(text) - size


def _without_empty_columns(rows: list[str]) -> list[str]:
    """A markdown table's rows without the columns that are empty in every row (layout's spacer
    columns: they hold no text and widen the table past the screen). Rows of unequal width are left."""
    cells = [row.strip().strip("|").split("|") for row in rows]
    if len({len(c) for c in cells}) != 1:
        return rows
    rule = [i for i, c in enumerate(cells) if all(set(cell.strip()) <= set("-:") for cell in c)]
    keep = [j for j in range(len(cells[0])) if any(cells[i][j].strip() for i in range(len(cells)) if i not in rule)]
    if not keep or len(keep) == len(cells[0]):
        return rows
    return ["|" + "|".join(c[j] for j in keep) + "|" for c in cells]


def _sources(passages: list[dict[str, Any]]) -> dict[str, list[int]]:
    out: dict[str, set[int]] = defaultdict(set)
    for p in passages:
        out[p["document"]].update(p["pages"])
    return {d: sorted(v) for d, v in sorted(out.items())}
