"""compose: the answer contract (passages, images, precedence, conflicts, references followed and
not, trace) and the engineer's brief in markdown."""

from __future__ import annotations

import base64
import time
from collections import defaultdict
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import QueryDeps, deps_of
from clausewise.tools.parallel import map_ordered

MARKDOWN_QUOTES = 40  # quotes per part of the brief; every passage stays in the contract's list


def compose(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    """The answer contract (docs/DESIGN.md), with an engineer's brief as markdown."""
    ctx, deps = runtime.context, deps_of(runtime)
    passages = [dict(p) for p in state.get("passages") or []]
    images: list[dict[str, Any]] = []
    for p in passages:
        if (
            p["kind"] in ("figure", "table")
            and len(images) < ctx.max_images
            and p["key"] not in {i["id"] for i in images}
        ):
            obj = deps.stores.lookup("objects", p["key"]) or {}
            png = deps.stores.object_image(p["key"]) if obj.get("image") else None
            if png:
                images.append(
                    {
                        "id": p["key"],
                        "path": obj["image"],
                        "base64": base64.b64encode(png).decode(),
                        "caption": obj.get("caption"),
                        "page": obj.get("page"),
                        "bbox": obj.get("bbox"),
                        "kind": p["kind"],
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
    markdown = render_markdown(state, passages, images, summary)
    trace = {
        **usage_since(deps, state),
        "widenings": state.get("widenings", 0),
        "hops": state.get("hops", 0),
        "elapsed_s": round(time.perf_counter() - state["started"], 3),
        "candidates": len(state.get("candidates") or {}),
        "notes": state.get("notes", []),
        "rejected_references": state.get("rejected_references") or [],
    }
    for p in passages:
        p.pop("score", None)
        p.pop("title", None)
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
    state: QueryState, passages: list[dict[str, Any]], images: list[dict[str, Any]], summary: str
) -> str:
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
    lines += ["### Summary", summary, "", "### Findings"]
    direct = [p for p in passages if p["hop"] == 0]
    for p in direct[:MARKDOWN_QUOTES]:
        lines += _passage_md(p)
    referenced = [p for p in passages if p["hop"] > 0]
    if referenced:
        lines += ["", "### Followed references"]
        for p in referenced[:MARKDOWN_QUOTES]:
            lines += _passage_md(p, via=f"{p['via']} from {p['from_key']} (order {p['hop'] + 1})")
    rest = direct[MARKDOWN_QUOTES:] + referenced[MARKDOWN_QUOTES:]
    if rest:
        lines += ["", f"### {len(rest)} more passages (quoted in full in the JSON answer)"]
        lines.append(", ".join(dict.fromkeys(f"{p['document']} {p['section']} (p. {p['page']})" for p in rest)))
    if images:
        lines += ["", "### Figures and tables"]
        for img in images:
            lines.append(
                f"![{img.get('caption') or img['id']}]({img['path']})  \n*{img.get('caption') or img['id']}*, "
                f"page {img['page']}"
            )
            if img.get("description"):  # model mode: what the figure shows that bears on the question
                lines.append(f"> {img['description']}")
    if state.get("precedence"):
        lines += ["", "### Precedence"]
        for r in state["precedence"][:40]:
            lines.append(f"- **{r['key']}**: {r['rule']} (from {r['source_key']})")
    if state.get("conflicts"):
        lines += ["", "### Conflicts (highlighted, not resolved)"]
        for c in state["conflicts"]:
            lines.append(f"- **{c['topic']}**: {c['note']}")
    if state.get("unresolved_references"):
        lines += ["", "### Unresolved references"]
        for r in state["unresolved_references"][:40]:
            lines.append(f"- {r['ref']} (from {r['from_key']}): {r['reason']}")
    if state.get("unfollowed_references"):
        lines += ["", "### References listed, not followed (beyond the 3rd order)"]
        for r in state["unfollowed_references"][:40]:
            lines.append(f"- {r['ref']} -> {r['target']} (from {r['from_key']})")
    lines += ["", "### Sources"]
    for doc, pages in _sources(passages).items():
        lines.append(f"- {doc}: pages {', '.join(map(str, pages))}")
    return "\n".join(lines)


def _passage_md(p: dict[str, Any], via: str | None = None) -> list[str]:
    head = f"**{p['document']} {p['section']}**" + (f" {p['title']}" if p.get("title") else "")
    head += f" (page {', '.join(map(str, p['pages']))})" + (f" via {via}" if via else "")
    lines = p["text"].split("\n")
    if any(ln.startswith("|") for ln in lines):  # a table: caption as a quote, rows as a markdown table
        rows = [ln for ln in lines if ln.startswith("|")]
        body = "\n".join(["> " + ln + "  " for ln in lines if not ln.startswith("|")] + [""] + rows)
    else:
        body = "\n".join("> " + ln + "  " for ln in lines)
    return [head, body, ""]


def _sources(passages: list[dict[str, Any]]) -> dict[str, list[int]]:
    out: dict[str, set[int]] = defaultdict(set)
    for p in passages:
        out[p["document"]].update(p["pages"])
    return {d: sorted(v) for d, v in sorted(out.items())}
