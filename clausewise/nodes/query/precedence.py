"""precedence: the rules that govern each contributing section (National Annex choices, NDPs,
informative annexes, superseded editions), from the section itself and its ancestors."""

from __future__ import annotations

import re
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.nodes.query.deps import deps_of

_SENTENCE_START = re.compile(r"(?:(?<=[.;])\s+|(?=NOTE\b)|(?=\(\d+\)))")
_SENTENCE_STOP = re.compile(r"[.;](?=\s|$)")


def precedence(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    """Rules governing each contributing section, its ancestors and its document; each with the
    ``sentence`` of its source that states it ("NOTE 1 The values of Cpe,10 and Cpe,1 may be given in
    the National Annex." where the rule reads "may be given in the National Annex.")."""
    read = deps_of(runtime).reader()
    keys = [k for k, v in (state.get("extracts") or {}).items() if v]
    rules, seen = [], set()
    sentences: dict[tuple[str, str], str] = {}
    for key in keys:
        chain, cursor = [], key
        for _ in range(8):
            section = read.section(cursor)
            if section is None:
                break
            chain.append(cursor)
            cursor = section.get("parent") or ""
        for governed in chain:
            for rule in read.lookup("precedence", governed) or []:
                # an annex's status is one rule however its section and the annex each word it
                status = rule.get("type") in ("informative", "normative")
                marker = (key, rule["type"], rule["source_key"]) if status else (key, rule["rule"])
                if marker not in seen:
                    seen.add(marker)
                    said = (rule["source_key"], rule["rule"])
                    if said not in sentences:  # one rule governs many sections: find its sentence once
                        source = read.section(rule["source_key"])
                        sentences[said] = sentence_of(source["text"], rule["rule"]) if source else rule["rule"]
                    rules.append(
                        {
                            "key": key,
                            "rule": rule["rule"],
                            "sentence": sentences[said],
                            "source_key": rule["source_key"],
                            "type": rule.get("type"),
                            "via": governed if governed != key else None,
                        }
                    )
    return {"precedence": rules}


def sentence_of(text: str, fragment: str) -> str:
    """The sentence of ``text`` that holds ``fragment``, white space collapsed; the fragment when it
    is not there."""
    flat, piece = " ".join(text.split()), " ".join(fragment.split())
    at = flat.find(piece)
    if at < 0:
        return fragment
    starts = [m.end() for m in _SENTENCE_START.finditer(flat, 0, at + 1)]
    stop = _SENTENCE_STOP.search(flat, max(at, at + len(piece) - 1))  # "(Figure 7." ran on to "7.14)."
    return flat[starts[-1] if starts else 0 : stop.end() if stop else len(flat)].strip()
