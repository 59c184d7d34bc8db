"""Query nodes that shape the answer: precedence, conflict-check, compose (the answer contract)."""

from __future__ import annotations

import base64
import time
from collections import defaultdict
from typing import Any

from langchain_core.runnables.config import ContextThreadPoolExecutor

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import QueryDeps

MARKDOWN_QUOTES = 40  # quotes per part of the brief; every passage stays in the contract's list
_VIA_ORDER = {"vector": 0, "keyword": 0, "reference": 1, "neighbour": 2}


def build_passages(deps: QueryDeps, state: QueryState) -> list[dict[str, Any]]:
    cands = state.get("candidates") or {}
    passages = []
    for key, parts in (state.get("extracts") or {}).items():
        section = deps.section(key)
        if not parts or section is None:
            continue
        c = cands.get(key, {"via": "vector", "hop": 0, "from_key": None})
        for part in parts:
            passages.append(
                {
                    "key": key,
                    "document": section["document"],
                    "section": section["section"],
                    "kind": section["kind"],
                    "title": section.get("title"),
                    "page": part["pages"][0],
                    "pages": part["pages"],
                    "text": part["text"],
                    "hop": c["hop"],
                    "via": c["via"],
                    "from_key": c.get("from_key"),
                    "score": part["score"],
                }
            )
    passages.sort(key=lambda p: (p["hop"], _VIA_ORDER.get(p["via"], 3), -p["score"], p["document"], p["page"]))
    return passages


def precedence(deps: QueryDeps, state: QueryState) -> dict[str, Any]:
    """Rules governing each contributing section, its ancestors and its document."""
    keys = [k for k, v in (state.get("extracts") or {}).items() if v]
    rules, seen = [], set()
    for key in keys:
        chain, cursor = [], key
        for _ in range(8):
            section = deps.section(cursor)
            if section is None:
                break
            chain.append(cursor)
            cursor = section.get("parent") or ""
        for governed in chain:
            for rule in deps.stores.lookup("precedence", governed) or []:
                marker = (key, rule["rule"])
                if marker not in seen:
                    seen.add(marker)
                    rules.append(
                        {
                            "key": key,
                            "rule": rule["rule"],
                            "source_key": rule["source_key"],
                            "type": rule.get("type"),
                            "via": governed if governed != key else None,
                        }
                    )
    return {"precedence": rules}


def conflict_check(deps: QueryDeps, state: QueryState) -> dict[str, Any]:
    """Passages that disagree, highlighted and never resolved (the reasoner decides what disagrees)."""
    passages = build_passages(deps, state)
    return {"conflicts": deps.tasks.find_conflicts(passages, state.get("precedence") or [], deps.stores.kv())[:20]}


def compose(deps: QueryDeps, state: QueryState, ctx: QueryContext) -> dict[str, Any]:
    """The answer contract of DESIGN.md, with an engineer's brief as markdown."""
    passages = build_passages(deps, state)
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
    describe_figure = getattr(deps.tasks, "describe_figure", None)
    figures = [i for i in images if i["kind"] == "figure"][: getattr(deps.tasks, "max_figures", 4)]
    if describe_figure is not None and figures:
        workers = min(len(figures), max(1, int(getattr(deps.tasks, "concurrency", 1) or 1)))
        with ContextThreadPoolExecutor(max_workers=workers) as pool:
            described = list(
                pool.map(lambda i: describe_figure(state["search_question"], i.get("caption"), i["png"]), figures)
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
    usage = getattr(deps.tasks, "usage", None)
    if usage is None:
        return {"mode": "offline", "llm_calls": 0, "tokens": 0, "degraded": []}
    now, before = usage(), state.get("usage_before") or {}
    return {
        "mode": now["mode"],
        "llm_calls": now["llm_calls"] - before.get("llm_calls", 0),
        "tokens": now["tokens"] - before.get("tokens", 0),
        "degraded": now["degraded"][len(before.get("degraded", [])) :],
    }


def reply(deps: QueryDeps, state: QueryState) -> dict[str, Any]:
    """Greeting or a repeat: a short answer, no search."""
    text = state.get("reply") or ""
    return {
        "passages": [],
        "images": [],
        "precedence": [],
        "conflicts": [],
        "unfollowed_references": [],
        "unresolved_references": [],
        "answer_markdown": text,
        "trace": {
            **usage_since(deps, state),
            "widenings": 0,
            "hops": 0,
            "elapsed_s": round(time.perf_counter() - state["started"], 3),
            "route": state["route"],
        },
        "history": [{"question": state["question"], "answer": text}] if state["route"] == "chat" else [],
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
