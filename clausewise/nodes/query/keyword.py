"""keyword: a few rare keywords, expanded with the kv store; every section holding any of them, in any
of their forms (FTS5, each word searched as the prefix its stem leaves);
and the sections the question names by number ("Table 6.2", "5.2(7)", "Section 5 of EN 1991-1-5")."""

from __future__ import annotations

from collections import Counter
from typing import Any

from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.keys import document_of
from clausewise.nodes.query.deps import QueryDeps, bare, deps_of, first_subclause
from clausewise.references import Resolver, named_sections
from clausewise.tools.query_tasks import fts_prefix


def keyword(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    ctx, deps = runtime.context, deps_of(runtime)
    terms = deps.terms(state["search_question"])
    words = deps.tasks.keywords(state["search_question"], terms)
    hits = deps.keyword_index.search(searched_forms(words), limit=ctx.max_keyword_sections, prefixes=True)
    candidates = {
        key: {"via": "keyword", "hop": 0, "from_key": None, "score": round(score, 3), "keywords": words}
        for key, score in hits
    }
    resolver = Resolver(deps.stores)
    named: dict[str, str] = {}
    for n in named_sections(state["search_question"], resolver):
        key = n["keys"][0]
        if len(n["keys"]) > 1:  # a number several documents hold, asked without a document
            key = in_asked_document(deps, state["search_question"], n["keys"])
        section = deps.section(key) or {}
        if bare(section.get("text", ""), section.get("title")):  # a bare heading stands for its first subclause
            key = first_subclause(key, resolver.sections(section["doc_key"])) or key
        named.setdefault(key, n["focus"])
        candidates[key] = {"via": "named", "hop": 0, "from_key": None, "ref": n["raw"], "focus": n["focus"]}
    return {"candidates": candidates, "named": named}


def searched_forms(keywords: list[str]) -> list[str]:
    """Each keyword as the FTS5 prefixes of its words' forms (:func:`fts_prefix`): the index does not
    stem, and the offline keywords are stems ("confer hall" -> "confer* hall*"). A star a model wrote is
    no operator ("l*" is the word "l"): only the cut where a stem leaves a word makes a prefix, of at
    least 3 letters."""
    return [" ".join(fts_prefix(w.replace("*", "")) for w in word.split()) for word in keywords]


ASKED_NEAREST = 10  # the chunks nearest the question that say which document it asks about


def in_asked_document(deps: QueryDeps, question: str, keys: list[str]) -> str:
    """Of one number's sections in several documents ("Annex B" of each part), the one in the document
    that holds most of the ``ASKED_NEAREST`` chunks nearest the question (the one the question is
    about), then the one nearest the question: an annex's opening lines can be nearer a question on
    another part's topic than its own part's."""
    vector = deps.query_vector(question)
    votes = Counter(document_of(hit.key) for hit in deps.vector_index.search(vector, k=ASKED_NEAREST))
    near = deps.vector_index.similarity(vector, keys)
    return max(keys, key=lambda k: (votes[document_of(k)], near[k].score if k in near else -1.0))
