"""collect-passages: the answer's passages, one per relevant section, ranked by how much each bears on
the question, computed once and read by conflict-check and compose.

A passage quotes its section's extracts in text order, the lines of its chunk nearest the question
(what the vector search matched, though it may share no word with the question), the short gaps
between them too (a NOTE that qualifies a paragraph), the paragraph a quoted NOTE is a note to, and
a short section (up to ``WHOLE_SECTION_CHARS``) whole.

One ranking for the whole answer, whatever route found a section. A section's score fuses what is known
about it: its best chunk's vector similarity to the question (or any sub-question), how much of the
question's terms (and their kv equivalents) its extract covers, how much of what is nearest the question
or one of its sub-questions its document holds, the kind of section (contents pages and cover matter
last, a bare heading and a list of symbols after the sections with text) and what the passage costs to
read (a little less for each e-fold of quoted text beyond ``LENGTH_FROM``: of two passages that bear
alike, the shorter is read first); a section the question names by number ("Table 6.2", "5.2(7)",
"Section 5 of EN 1991-1-5") comes first. Support from the reference graph then lifts a section that a
better one cites (a clause or table a relevant clause points to inherits much of that clause's score; a
range, "paragraphs 432-448", lifts only its first member in the answer, which opens the topic it points
to), and each passage's cited tables, figures and expressions follow it in reading order. The first
``SOFT_MATCH_PASSAGES`` are then read again word by word: the embedder's soft match (each content word of
the question against the passage's words in context) moves those that say what was asked, in whatever
words, up among them, and, a little, those that say what one sub-question asks. Where the learned
ranker is installed, its order (each passage's signals read by it, beside its place in the fused order;
among them how many of the fused order's first passages are printed within ``PAGE_REACH`` pages of it:
a document prints a topic's rules together, whatever headings its text layer kept) replaces the fused
one, and its first ``CROSS_PASSAGES`` are read again by the cross-encoder, the question and each passage
together: each moves by ``CROSS_SHARE`` x its place by it. A guide's numbered
paragraphs under one heading that follow one another are read together, each its own passage, at the
place of the first of them (up to ``RUN_CHARS`` of text a piece). The first passages,
up to ``KEY_PASSAGES`` or ``KEY_CHARS`` of text, are the key tier; the next ones up to
``SUPPORTING_PASSAGES`` are supporting; the rest background. Figures, expressions and front matter among
the key passages go right after them (their passages are a caption and a formula as the text layer reads
it, or a cover or foreword; the passage citing a figure or expression names it in ``figures`` or
``expressions``, and the brief shows its image there).
An expression a passage before it already quotes goes to the back; that passage names it in
``restates``. Of two passages in (nearly) the same words (a rule a document states in two chapters),
the one printed among the key passages keeps the earlier place, the other goes to the back, and the one
kept names it in ``same_text``."""

from __future__ import annotations

import logging
import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

import numpy as np
from langgraph.runtime import Runtime

from clausewise.graph.state import QueryContext, QueryState
from clausewise.keys import OBJECT_KINDS, code_label, split_key
from clausewise.nodes.query.deps import QueryDeps, Reader, bare, deps_of, first_subclause, lineage
from clausewise.page_map import pages_between
from clausewise.stores.index import Hit
from clausewise.tools.models import soft_text
from clausewise.tools.query_tasks import (
    OfflineQueryTasks,
    Terms,
    headings_above,
    is_definition,
    legible,
    read_as,
    search_prefixes,
    stem,
    terms_in,
    units,
    value_statements,
)

KEY_PASSAGES = 10
KEY_CHARS = 10_000
SUPPORTING_PASSAGES = 40
GAP = "\n…\n"  # between two verbatim pieces of one section's text
CITED_DECAY = 0.9  # a cited clause keeps this share of its citing section's score, per hop
OBJECT_DECAY = 0.75  # a cited table, figure, expression or definition keeps this share: a clause names many
REPEATED_DECAY = 0.9  # ... or this share, where the clause names it more than once: the rule reads its values
RANGE_MEMBERS = 2  # a reference naming more sections than this is a range: it lifts its first one only
RUN_CHARS = 1500  # numbered paragraphs read together under one heading, at most this much quoted text
MAX_FOLLOWERS = 1  # cited objects placed right after a passage (more crowd out the next clauses)
FOLLOWER_KINDS = ("table", "expression")  # a figure's passage is its caption: its drawing is an image
COVERAGE_WEIGHT = 0.5
LENGTH_WEIGHT = 0.05  # per e-fold of a passage's quoted text beyond LENGTH_FROM: the cost of reading it
LENGTH_FROM = 500
PART_COVERAGE_WEIGHT = 0.3  # a sub-question's coverage, beside the whole question's
PART_SPECIFIC = 12.0  # the weight of its terms the answer holds at which a sub-question counts in full
KEYWORD_WEIGHT = 0.1  # BM25 over the whole section, as a share of the answer's best
DOCUMENT_WEIGHT = 0.2
SHARE_OF = 15  # a document's share is of this many passages nearest the question or a sub-question
SHARE_KEPT = 3  # the passages this near the question or a sub-question count their document's share as the largest
FRONT_PENALTY = 0.1
HEADING_PENALTY = 0.3  # a heading with (almost) no text under it: nothing to read there
GLOSSARY_PENALTY = 0.3  # a list of symbols or abbreviations: looked up when needed, not read first
CONTENTS_PENALTY = 1.0
INFORMATIVE_PENALTY = 0.06  # guidance in an informative annex, after the normative rule of the same standing
SOFT_MATCH_PASSAGES = 30  # the head of the list read again word by word (about 0.75 s on 2 cores)
SOFT_MATCH_WEIGHT = 1.0
SOFT_PART_WEIGHT = 0.3  # the best sub-question's soft match, beside the whole question's
ASPECT_WEIGHT = 0.05  # a part of the question none of the passages before answers lifts the next that does
ASPECT_HEAD = 10  # the places so filled: the first an engineer reads
ASPECT_DEPTH = 10  # a passage answers a part as far as it is nearer the part than the part's 11th nearest
ASPECT_POOL = 30  # the passages next in score order a place is filled from
TWIN_SHARE = 0.9  # a passage whose word sequence another one repeats this far is its twin (the same rule twice)
TWIN_MIN_WORDS = 20  # ... where the shorter has at least this many words: a line of boilerplate is no rule
TWIN_PAGES = 3  # a twin is read in the chapter where more of the key passages are printed, this many pages either side
WHOLE_SECTION_CHARS = 2000  # a section this short is quoted whole: one clause, read as one
BRIDGE_CHARS = 300  # a gap this short between two extracts (a NOTE, a line) is quoted with them
LEAD_REACH = 1500  # a list's item this near the sentence that opens it is quoted with the items between
PARAGRAPH_REACH = 500  # a quoted chunk is widened to its paragraphs' bounds when they are this near
CROSS_PASSAGES = 30  # the first passages of the blended order the cross-encoder reads again (judged)
CROSS_SHARE = 0.8  # ... and each one's place by it, beside its place in that order
FUSED_SHARE = 0.5  # the fused order's place beside the learned ranker's (blended)
LENGTH_PLACES = 4.0  # places a passage loses per e-fold of its quoted text beyond LENGTH_FROM (blended)
PAGE_REACH = 1  # the pages either side of a passage the first ones are counted on (head_pages)
RANKER = Path(__file__).with_name("ranker.onnx")  # the learned ranker (rerank_states.py train); none: fused order
FEATURES = (  # the signals the learned ranker reads, in its input's column order
    "similarity", "coverage", "part_coverage", "document_share", "keyword", "contents", "front", "glossary",
    "heading_only", "informative", "length", "table", "figure", "expression", "annex", "hop", "neighbour",
    "keyword_only", "definition", "parts", "fused", "soft_match", "soft_part", "read_again", "lift", "lifted",
    "similarity_gap", "fused_gap", "similarity_place", "fused_place", "parent_share", "chapter_share",
    "head_parent", "head_chapter", "query_place", "numbers", "head_pages",
)  # fmt: skip
_GLOSSARY_WORDS = ("symbols", "notation", "abbreviations", "nomenclature", "acronyms")
_REFERENCE_LIST_WORDS = ("references", "bibliography")
_CHANGE_WORDS = frozenset(("revision", "amendment", "change", "corrigendum", "corrigenda", "errata"))
_RECORD_WORDS = frozenset(("summary", "sheet", "record", "history", "log", "list", "no", "date", "table"))
_log = logging.getLogger(__name__)
_NOTE = re.compile(r"\s*NOTE\b")
_LIST_ITEM = re.compile(r"\s*(?:[a-h]\)|[ivx]{1,4}\)|\d\)|[-–•▪■●◦])\s")  # "a) 2,5 kN ...", "■ after installation"
_NUMBER = re.compile(r"(?<![\w.,(])\d+(?:[.,]\d+)?(?![\w.,]*\d)")  # a value: "2,5", "30"; not "6.3.1.2", "(1)"
_LEADER = re.compile(r"(?:\.\s?){4,}|…{2,}")
_ENDS_IN_PAGE = re.compile(r"(?<![\d,.])\b\d{1,3}\s*$")  # a page number, not a value ("beer 10,0")


def collect_passages(state: QueryState, runtime: Runtime[QueryContext]) -> dict[str, Any]:
    deps = deps_of(runtime)
    read = deps.reader()
    passages, by_query = gather(deps, state, read)
    return {"passages": rank(deps, state, passages, by_query, read)}


def gather(deps: QueryDeps, state: QueryState, read: Reader) -> tuple[list[dict[str, Any]], list[dict[str, float]]]:
    """The answer's passages, unranked, one per section relevance found bearing on the question (or
    among the nearest), and each section's similarity to the question and to each sub-question."""
    cands = state.get("candidates") or {}
    read_parts = state.get("extracts") or {}
    extracts = {key: parts for key, parts in read_parts.items() if parts}
    # The sections the search found are kept though no paragraph of theirs has the question's words: the
    # vector matched what they say ("inspect the excavation" for "check the trench"), or a relevant one
    # cites them or stands beside them ("use a substitute substance" beside "poorly ventilated"). The term
    # rules' threshold dropped them; they go to the back of the answer unless their signals say more (a
    # missing rule is worse than a passage more). A model reads the meaning, and what it drops stays
    # dropped. Beside what relevance found only: when nothing bears on the question, nothing is kept.
    unworded = extracts and deps.tasks.name == OfflineQueryTasks.name
    hits = query_hits(deps, state, list(dict.fromkeys([*extracts, *(found_directly(cands) if unworded else [])])))
    if unworded:
        for key in (k for k in cands if k in read_parts and not read_parts[k]):
            section = read.section(key)
            if section is not None and not bare(section["text"], section.get("title")):  # a heading says nothing
                extracts[key] = []
    nearest, by_query = nearest_chunks(hits, set(extracts))
    passages = []
    for key, parts in extracts.items():
        section = read.section(key)
        if section is None:
            continue
        text = section["text"]
        if len(text) <= WHOLE_SECTION_CHARS:
            spans = [(0, len(text))]
        else:
            spans = [(p["start"], p["start"] + len(p["text"])) for p in parts]
            # the lines that brought the section nearest the question are quoted too, whatever their words
            where = chunk_span(text, nearest[key].chunk.get("text", "")) if key in nearest else None
            if not spans and where is None:
                where = (0, WHOLE_SECTION_CHARS)
            spans = merge_spans(qualified(text, spans + ([where] if where else [])), bridge=BRIDGE_CHARS)
        pages = sorted({page for a, b in spans for page in pages_between(section, a, b)})
        c = cands.get(key, {"via": "vector", "hop": 0, "from_key": None})
        passages.append(
            {
                "key": key,
                "document": section["document"],
                # "Annex D", not the store's "annex_D"; "Table 7.4a" as printed also from a store that
                # labelled it "Table 7.4A"
                "section": code_label(split_key(key)[2]),
                "kind": section["kind"],
                "title": section.get("title"),
                "within": headings_above(read.section, key),
                "page": pages[0],
                "pages": pages,
                "text": GAP.join(text[a:b].strip() for a, b in spans),
                "spans": [list(s) for s in spans],
                "hop": c["hop"],
                "via": c["via"],
                "from_key": c.get("from_key"),
                "score": max((p["score"] for p in parts), default=0.0),
            }
        )
    return passages, by_query


def found_directly(cands: dict[str, dict[str, Any]]) -> list[str]:
    """The candidates the vector search found itself (not through a reference or a neighbour)."""
    return [k for k, c in cands.items() if c.get("via") == "vector" and not c.get("hop")]


def query_hits(deps: QueryDeps, state: QueryState, keys: list[str]) -> list[dict[str, Hit]]:
    """Each query's (the question's, then each sub-question's) nearest chunk of each of ``keys``."""
    queries = dict.fromkeys([state["search_question"], *(state.get("sub_questions") or [])])
    return [deps.vector_index.similarity(deps.query_vector(q), keys) for q in queries]


def nearest_chunks(hits: list[dict[str, Hit]], keys: set[str]) -> tuple[dict[str, Hit], list[dict[str, float]]]:
    """Of ``keys``, each section's chunk nearest the question or any of its sub-questions (``hits``, by
    query: :func:`query_hits`); also each section's similarity to each of them (the question first)."""
    nearest: dict[str, Hit] = {}
    by_query = []
    for found in hits:
        by_query.append({key: hit.score for key, hit in found.items() if key in keys})
        for key, hit in found.items():
            if key in keys and (key not in nearest or hit.score > nearest[key].score):
                nearest[key] = hit
    return nearest, by_query


def chunk_span(text: str, chunk: str) -> tuple[int, int] | None:
    """Where a chunk's lines (those after its heading line) lie in the section's text, widened to the
    paragraphs they begin and end in (by at most ``PARAGRAPH_REACH`` characters each way): a chunk is
    cut at lines, a quote should not start or stop in mid-sentence."""
    body = chunk.partition("\n")[2].strip()
    start = text.find(body) if body else -1
    if start < 0:
        return None
    end = start + len(body)
    touched = [(a, b) for a, b in units(text) if a < end and start < b]
    if touched:
        start = touched[0][0] if start - touched[0][0] <= PARAGRAPH_REACH else start
        end = touched[-1][1] if touched[-1][1] - end <= PARAGRAPH_REACH else end
    return start, end


def qualified(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans that begin at a NOTE widened back to the paragraph the NOTE qualifies (over the NOTEs
    between): a note on return periods is read with the rule it is a note to. Spans that begin at a
    list's item are read with what the list is of: the sentence that opens it and, when that is a NOTE,
    the paragraph the NOTE qualifies ("(3) ... a human impact load should be taken into account" /
    "NOTE ... Examples of values are:" / "a) 2,5 kN ..."), widened back to them when they are near,
    else quoted beside the span."""
    paragraphs = units(text)

    def opens(n: int, pattern: re.Pattern[str]) -> bool:
        return pattern.match(text[paragraphs[n][0] : paragraphs[n][1]]) is not None

    out = []
    for a, b in spans:
        i = next((n for n, (start, end) in enumerate(paragraphs) if start <= a < end), 0)
        j = i
        while j > 0 and opens(j, _LIST_ITEM):
            j -= 1
        lead = j  # the sentence the list's items go on from
        while j > 0 and opens(j, _NOTE):
            j -= 1
        if not 0 < j < i:
            out.append((a, b))
        elif lead == i or a - paragraphs[j][0] <= LEAD_REACH:
            out.append((paragraphs[j][0], b))
        else:  # a long list: its opening and the span, the items between left out
            out += [(paragraphs[j][0], paragraphs[lead][1]), (a, b)]
    return out


def merge_spans(spans: list[tuple[int, int]], bridge: int = 0) -> list[tuple[int, int]]:
    """Extract spans of one section in text order, overlapping or contained ones merged, and so are
    two with at most ``bridge`` characters between them."""
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1] + bridge:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def contents_like(passage: dict[str, Any]) -> bool:
    """A contents page or a cover, or a fragment of a contents page (dot leaders, lines ending in page numbers)."""
    if passage["kind"] in ("contents", "cover"):
        return True
    lines = [ln for ln in passage["text"].split("\n") if ln.strip()]
    if len(lines) < 3:
        return False
    numbered = sum(1 for ln in lines if _ENDS_IN_PAGE.search(ln)) / len(lines)
    return numbered > 0.5 or (numbered > 0.3 and _LEADER.search(passage["text"]) is not None)


def glossary(passage: dict[str, Any]) -> bool:
    """A list of symbols, notation or abbreviations, known by its short title (OCR's "Synlbols" too), or
    of the standards and publications the document refers to ("Normative references", "Bibliography"):
    it matches many of a question's terms and runs to pages, but it is where a symbol or a standard is
    looked up."""
    words = _title_words(passage)
    if _reference_list(words):
        return True
    return 0 < len(words) <= 4 and any(_glossary_word(word) for word in words)


def _reference_list(words: list[str]) -> bool:
    """A title that names a list of publications: "Normative references", "Bibliography", "References
    for Appendix G"."""
    return 0 < len(words) <= 4 and (words[-1] in _REFERENCE_LIST_WORDS or words[0] in _REFERENCE_LIST_WORDS)


def _under_reference_list(read: Reader, key: str) -> bool:
    """A part of a list of publications ("Government", "Non-Government" under "References for Appendix G")."""
    parent = read.section((read.section(key) or {}).get("parent") or "")
    return parent is not None and _reference_list(_title_words(parent))


def change_record(passage: dict[str, Any]) -> bool:
    """A record of the document's own revisions, outside its numbered text ("Revision Summary Sheet",
    "Record of amendments", "Change No. Date Location"): like a contents page it lists clauses (those a
    revision touched) in the question's words, but what they say is in those clauses."""
    if passage["kind"] not in ("front", "annex") and _numbered(passage["section"]):
        return False
    words = _title_words(passage)
    return (
        0 < len(words) <= 5
        and any(w.rstrip("s") in _CHANGE_WORDS for w in words)
        and (len(words) == 1 or any(w.rstrip("s") in _RECORD_WORDS for w in words))
    )


def _title_words(passage: dict[str, Any]) -> list[str]:
    return re.findall(r"[a-z]+", (passage.get("title") or "").lower())


def _numbered(section: str) -> bool:
    return bool(re.match(r"[A-Z]?\d", section))


@lru_cache(maxsize=4096)
def _glossary_word(word: str) -> bool:
    """Within one letter of the length of a glossary's name and 0.8 alike ("notification" is not "notation").
    Cached: titles share most of their words, and a question ranks hundreds of passages."""
    return any(
        abs(len(word) - len(name)) <= 1 and SequenceMatcher(None, word, name).ratio() >= 0.8 for name in _GLOSSARY_WORDS
    )


def rank(
    deps: QueryDeps,
    state: QueryState,
    passages: list[dict[str, Any]],
    by_query: list[dict[str, float]],
    read: Reader | None = None,
    features: dict[str, dict[str, float]] | None = None,
) -> list[dict[str, Any]]:
    """The passages in reading order, each with its ``rank`` (1-based), ``tier`` and ``score``;
    ``by_query``: each section's best chunk similarity to the question and to each sub-question (the
    question first), levelled (:func:`leveled`) into the similarity the score uses. The signals are
    fused by hand into a score, then, where the learned ranker is installed, each passage's signals
    (``features``, filled when given: what `scripts/rerank_states.py train` learns from) are read by it and
    its order is the answer's (:func:`learned_order`)."""
    features = {} if features is None else features
    if not passages:
        return []
    read = read or deps.reader()
    keys = [p["key"] for p in passages]
    vocabulary = deps.vocabulary()
    texts = {p["key"]: read_as(_titled(p), vocabulary.readings) for p in passages}  # as embedded at ingest
    coverage = coverage_shares(texts, deps.terms(state["search_question"]))
    # A passage that answers one part of the question covers that part's terms, few of the whole's
    # ("the fire design of the roof steelwork" in a question mostly on roof snow): it also gains by
    # its best sub-question's coverage.
    parts = [part_coverage(texts, deps.terms(q)) for q in dict.fromkeys(state.get("sub_questions") or [])]
    aspects = part_aspects(state, passages, by_query, parts)
    similarity = leveled(by_query)
    share = document_share(passages, by_query)
    # ... and its heading's and chapter's share: a question on a topic one chapter treats has its
    # nearest sections there, and the paragraphs under the same heading answer it with them
    family = {p["key"]: _family(read, p["key"]) for p in passages}
    parent_share = document_share(passages, by_query, lambda p: family[p["key"]][0])
    chapter_share = document_share(passages, by_query, lambda p: family[p["key"]][1])
    query_place = best_place(keys, by_query)
    # A question across two parts can need a part whose sections are few among the nearest to every
    # one of its queries (the execution part beside the snow part): the passages nearest a query are
    # not held back by their document's small share.
    kept = nearest_each(passages, by_query, SHARE_KEPT)
    most = max(share.values(), default=0.0)
    contents = {p["key"] for p in passages if contents_like(p) or change_record(p)}
    keyword = keyword_scores(deps, state["search_question"], keys)
    score: dict[str, float] = {}
    for p in passages:
        key = p["key"]
        f = features[key] = {  # each signal once: the fused score is made of them, the learned ranker reads them
            "similarity": similarity.get(key, 0.0),
            "coverage": coverage[key],
            "part_coverage": max((part[key] for part in parts), default=0.0),
            "document_share": most if key in kept else share.get(p["document"], 0),
            "keyword": keyword.get(key, 0.0),
            "contents": float(key in contents),
            "front": float(p["kind"] == "front"),
            "glossary": float(glossary(p) or _under_reference_list(read, key)),
            "heading_only": float(p["kind"] not in OBJECT_KINDS and bare(p["text"], p.get("title"))),
            "informative": float(_informative(read, key)),
            "length": math.log(max(1.0, len(p["text"]) / LENGTH_FROM)),
            **{kind: float(p["kind"] == kind) for kind in ("table", "figure", "expression", "annex")},
            "hop": float(p.get("hop") or 0),
            "neighbour": float(p.get("via") == "neighbour"),
            "keyword_only": float(p.get("via") == "keyword"),
            "definition": float(is_definition(read.section(key) or {})),
            "parts": float(len(parts)),
            "parent_share": parent_share[family[key][0]],
            "chapter_share": chapter_share[family[key][1]],
            "query_place": math.log1p(query_place[key]),
            "numbers": len(_NUMBER.findall(p["text"])) / max(1, len(p["text"].split())),
        }
        covers = f["coverage"] + PART_COVERAGE_WEIGHT * f["part_coverage"]
        s = f["similarity"] + COVERAGE_WEIGHT * covers + DOCUMENT_WEIGHT * f["document_share"]
        s += KEYWORD_WEIGHT * f["keyword"]
        if f["contents"]:
            s -= CONTENTS_PENALTY
        else:
            s -= FRONT_PENALTY * f["front"]
            s -= GLOSSARY_PENALTY * f["glossary"]
        s -= HEADING_PENALTY * f["heading_only"]
        s -= INFORMATIVE_PENALTY * f["informative"]
        s -= LENGTH_WEIGHT * f["length"]
        score[key] = f["fused"] = s
    among = set(keys)
    cites = {p["key"]: _cited(read, p["key"], among) for p in passages}
    for p in passages:  # a table, figure or expression lifts the clause it is printed in that names it
        parent = (read.section(p["key"]) or {}).get("parent") if p["kind"] in OBJECT_KINDS else None
        if isinstance(parent, str) and parent in cites and p["key"] in cites[parent] and parent not in cites[p["key"]]:
            cites[p["key"]].append(parent)  # the rule that says what it is for: "must not exceed ... Table 2-1"
    ordered, lifted = _order(read, passages, score, cites, aspects)
    # The head of the list read again, word by word: how well each passage covers the question's
    # content words in context (the embedder's soft match, each word counting by its idf: "snow"
    # more than "load"), against the head's average; and, a little, how well it covers its best
    # sub-question's (a passage that answers one part of a long question says few of the whole's words).
    head = [p for p in ordered if p["key"] not in contents][:SOFT_MATCH_PASSAGES]
    if head:
        head_texts = [texts[p["key"]] for p in head]
        stored = deps.stores.token_vectors([p["key"] for p in head])  # kept at ingest, for most of them

        def above_mean(query: str) -> list[float] | None:
            """Each head passage's soft match to ``query``, less the head's average; None without the model."""
            found = deps.embedder.soft_match(query, head_texts, weight=lambda w: vocabulary.idf(stem(w)), stored=stored)
            if not found:
                return None
            mean = sum(found) / len(found)
            return [m - mean for m in found]

        whole = above_mean(state["search_question"])
        if whole:
            asked = dict.fromkeys(q for q in state.get("sub_questions") or [] if q != state["search_question"])
            by_part = [m for q in asked if (m := above_mean(q))]
            for i, p in enumerate(head):
                part = max((m[i] for m in by_part), default=0.0)
                score[p["key"]] += SOFT_MATCH_WEIGHT * whole[i] + SOFT_PART_WEIGHT * part
                features[p["key"]] |= {"soft_match": whole[i], "soft_part": part, "read_again": 1.0}
            ordered, lifted = _order(read, passages, score, cites, aspects)
    head = [p for p in ordered if p["key"] not in contents][:KEY_PASSAGES]
    head_families = [family[p["key"]] for p in head]
    near = near_head(passages, head)
    for key, f in features.items():  # what the reference graph's support added
        f["head_pages"] = near[key]
        f["lift"] = lifted[key] - score[key]
        f["lifted"] = lifted[key]
        # how many of the passages the fused order reads first share its heading, its chapter
        f["head_parent"] = float(sum(h[0] == family[key][0] for h in head_families))
        f["head_chapter"] = float(sum(h[1] == family[key][1] for h in head_families))
    # each also against the answer's best and as a place among its passages: a similarity of 0.5 is
    # near in one answer and far in another
    for name in ("similarity", "fused"):
        values = np.array([features[k][name] for k in keys])
        places = np.argsort(np.argsort(-values, kind="stable"), kind="stable")
        for k, value, place in zip(keys, values, places, strict=True):
            features[k][f"{name}_gap"] = float(value - values.max())
            features[k][f"{name}_place"] = float(place)
    learned = learned_scores(keys, features)
    joinable: set[str] | None = None  # the passages a run or a clause's table may bring forward: all
    if learned is not None:
        question = state.get("question") or state["search_question"]
        learned = judged(deps, question, {p["key"]: p for p in passages}, blended(ordered, learned, features))
        # ... or, by the learned ranker, those it reads among the first KEY_PASSAGES on their own
        joinable = set(sorted(keys, key=lambda k: -learned[k])[:KEY_PASSAGES])
        ordered = learned_order(read, ordered, learned, lifted, cites, joinable)
        lifted = learned
    ordered = _drawn_after_key(_restated_last(_twins_apart(ordered)), cites)
    # The sections the question names by number come first (no lift to what they cite: the question
    # named them, not their references), but not a heading over subclauses the answer holds, with
    # (almost) no text of its own ("E.1 Vortex shedding", "APPENDIX B ..."): its subclauses are what
    # there is to read, so it stays where its signals put it.
    over = {up for key, (up, _) in family.items() if up != key}  # the sections the answer holds subclauses of
    named = {k for k in state.get("named") or {} if not (k in over and features.get(k, {}).get("heading_only"))}
    ordered = [p for p in ordered if p["key"] in named] + [p for p in ordered if p["key"] not in named]
    ordered = _paragraph_runs(read, ordered, joinable)
    chars = 0
    for i, p in enumerate(ordered):
        background = p["key"] in contents
        if i < KEY_PASSAGES and chars < KEY_CHARS and not background:
            p["tier"] = "key"
        elif i < SUPPORTING_PASSAGES and not background:
            p["tier"] = "supporting"
        else:
            p["tier"] = "background"
        chars += len(p["text"])
        p["rank"] = i + 1
        p["score"] = round(lifted[p["key"]], 4)
    return ordered


def coverage_shares(
    texts: dict[str, str], terms: Terms, covered: dict[str, set[str]] | None = None
) -> dict[str, float]:
    """Each passage's share (``texts``: its title and quoted text, by key) of the query's weighted terms
    that some passage of the answer has: a question's own words that no code uses ("freak", "ever")
    would otherwise dilute it, more in a wordy question than in a terse one."""
    covered = covered if covered is not None else {key: terms_in(text, terms) for key, text in texts.items()}
    total = sum(terms.weights[t] for t in set().union(*covered.values())) or 1.0
    return {key: sum(terms.weights[t] for t in found) / total for key, found in covered.items()}


def part_coverage(texts: dict[str, str], terms: Terms) -> dict[str, float]:
    """Each passage's coverage of a sub-question's terms, as :func:`coverage_shares`, times how much
    the sub-question says: the weight of its terms the answer holds, as a share of ``PART_SPECIFIC``
    (at most 1). A part of few and common words ("What does the guidance say?", "who has to look at
    it?") is covered whole by every passage with its one word; a part with several telling words is
    covered whole by the passages that answer it."""
    covered = {key: terms_in(text, terms) for key, text in texts.items()}
    said = min(1.0, sum(terms.weights[t] for t in set().union(*covered.values())) / PART_SPECIFIC)
    return {key: share * said for key, share in coverage_shares(texts, terms, covered).items()}


def part_aspects(
    state: QueryState,
    passages: list[dict[str, Any]],
    by_query: list[dict[str, float]],
    parts: list[dict[str, float]],
) -> list[dict[str, float]]:
    """How far each passage answers each part of the question (a sub-question other than the whole
    question; none for a question of one part), from 0 to 1: its similarity to the part plus
    ``COVERAGE_WEIGHT`` x its coverage of the part's terms (``parts``, by sub-question), 1 for the
    part's best passage and 0 for those past its ``ASPECT_DEPTH`` nearest. ``by_query``: the
    similarities to the question, then to each sub-question (:func:`query_hits`)."""
    subs = list(dict.fromkeys(state.get("sub_questions") or []))
    queries = list(dict.fromkeys([state["search_question"], *subs]))
    if len(by_query) != len(queries):
        return []
    asked = [
        (by_query[queries.index(q)], part) for q, part in zip(subs, parts, strict=True) if q != state["search_question"]
    ]
    if len(asked) < 2:
        return []
    aspects = []
    for similarity, coverage in asked:
        answers = {p["key"]: similarity.get(p["key"], 0.0) + COVERAGE_WEIGHT * coverage[p["key"]] for p in passages}
        ranked = sorted(answers.values(), reverse=True)
        best, floor = ranked[0], ranked[min(ASPECT_DEPTH, len(ranked) - 1)]
        spread = best - floor
        aspects.append({k: min(1.0, max(0.0, (v - floor) / spread)) if spread > 0 else 0.0 for k, v in answers.items()})
    return aspects


def keyword_scores(deps: QueryDeps, question: str, keys: list[str]) -> dict[str, float]:
    """Each section's BM25 against the question's words (FTS5 over its whole text and title, the
    words' other forms found by prefix), as a share of the best in the answer."""
    found = deps.keyword_index.scores(search_prefixes(question), keys)
    best = max(found.values(), default=0.0)
    return {key: value / best for key, value in found.items()} if best > 0 else {}


def leveled(by_query: list[dict[str, float]]) -> dict[str, float]:
    """Each section's similarity to the query it is nearest, once every query's similarities are raised
    by what its own nearest section falls short of the nearest to any query. A sub-question in plain
    words is less similar to every clause than the sentence that sets the scene in the codes' own
    terms, so on raw similarities the clauses that answer it lose every place to the scene's;
    levelled, each query's nearest passages compete as equals."""
    nearest = [(s, max(s.values())) for s in by_query if s]
    top = max((best for _, best in nearest), default=0.0)
    level: dict[str, float] = {}
    for s, best in nearest:
        for key, value in s.items():
            level[key] = max(level.get(key, -math.inf), value + top - best)
    return level


def document_share(
    passages: list[dict[str, Any]],
    by_query: list[dict[str, float]],
    group: Callable[[dict[str, Any]], str] = itemgetter("document"),
) -> defaultdict[str, float]:
    """Each document's largest share of the ``SHARE_OF`` passages most similar to the question or to
    one of its sub-questions: a question across two parts ("snow on a roof in the fire combination")
    has one part's sections nearest some of its sub-questions, however few of them the whole
    question's nearest hold. By another ``group`` of passages (their heading, their chapter), its share."""
    share: defaultdict[str, float] = defaultdict(float)
    for similarity in by_query:
        nearest = _nearest(passages, similarity, SHARE_OF)
        for name, n in Counter(group(p) for p in nearest).items():
            share[name] = max(share[name], n / len(nearest))
    return share


def best_place(keys: list[str], by_query: list[dict[str, float]]) -> dict[str, int]:
    """Each passage's best place (0: the nearest) by similarity to the question or to one of its
    sub-questions: the passage nearest one part of the question is near, however far from the whole."""
    best = dict.fromkeys(keys, len(keys))
    for similarity in by_query:
        for place, key in enumerate(sorted(keys, key=lambda k: -similarity.get(k, -math.inf))):
            best[key] = min(best[key], place)
    return best


def _family(read: Reader, key: str) -> tuple[str, str]:
    """The section ``key`` is printed under (itself at the top) and the chapter: its top section."""
    chain = [key] + [s["parent"] for s in lineage(read, read.section(key)) if s.get("parent")]
    return chain[min(1, len(chain) - 1)], chain[-1]


def nearest_each(passages: list[dict[str, Any]], by_query: list[dict[str, float]], n: int) -> set[str]:
    """The keys of the ``n`` passages most similar to the question, and of those to each sub-question."""
    return {p["key"] for similarity in by_query for p in _nearest(passages, similarity, n)}


def _nearest(passages: list[dict[str, Any]], similarity: dict[str, float], n: int) -> list[dict[str, Any]]:
    return sorted(passages, key=lambda p: -similarity.get(p["key"], 0.0))[:n]


def _order(
    read: Reader,
    passages: list[dict[str, Any]],
    score: dict[str, float],
    cites: dict[str, list[str]],
    aspects: list[dict[str, float]] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Reading order from the passages' own scores: each cited clause lifted to ``CITED_DECAY`` x its
    citing section's score, each cited table, figure, expression or definition (a term's wording, not a
    rule) to ``OBJECT_DECAY`` x, a table, figure or expression the section names more than once (its
    rule reads the values there: "the factors of Table E.2 ... Table E.2 may be taken as") to
    ``REPEATED_DECAY`` x (to the 3rd order), and each passage followed by a table, figure or expression
    it names whose standing comes from it. Sections lifted alike by one section come in the
    order it names them. The first ``ASPECT_HEAD`` places go each to the passage of the next
    ``ASPECT_POOL`` whose score plus ``ASPECT_WEIGHT`` x the most it answers of a part the passages
    before leave unanswered (``aspects``: :func:`part_aspects`) is highest: a question of four parts
    whose one part's passages score highest gets the others' best passages among the first it reads
    (explicit query-aspect diversification, xQuAD). Also the lifted scores."""
    by_key = {p["key"]: p for p in passages}
    share = {
        t: OBJECT_DECAY if by_key[t]["kind"] in OBJECT_KINDS or is_definition(read.section(t) or {}) else CITED_DECAY
        for t in {t for targets in cites.values() for t in targets}
    }
    mentions = {key: Counter(r.get("target") for r in read.lookup("references", key) or []) for key in cites}
    kept = {  # the share each cited section keeps of its citing section's score
        (key, t): REPEATED_DECAY if by_key[t]["kind"] in OBJECT_KINDS and mentions[key][t] > 1 else share[t]
        for key, targets in cites.items()
        for t in targets
    }
    named: dict[str, int] = {}  # a lifted section's place among those its lifting section cites
    for _ in range(3):
        lifted = dict(score)
        for key, targets in cites.items():
            for i, target in enumerate(targets):
                if score[key] * kept[key, target] > lifted[target]:
                    lifted[target] = score[key] * kept[key, target]
                    named[target] = i
        score = lifted
    ordered: list[dict[str, Any]] = []
    placed: set[str] = set()
    queue = sorted(passages, key=lambda p: (-round(score[p["key"]], 9), named.get(p["key"], -1), p["key"]))
    unanswered = [1.0] * len(aspects or [])  # of each part, the share no passage placed answers
    while queue:
        pool = [q for q in queue[:ASPECT_POOL] if q["key"] not in placed] if len(ordered) < ASPECT_HEAD else []
        if aspects and pool:
            p = max(pool, key=lambda q: score[q["key"]] + _answers(q["key"], aspects, unanswered))
            queue.remove(p)  # max keeps the first (higher-scored) of equals
            unanswered = [u * (1.0 - a[p["key"]]) for u, a in zip(unanswered, aspects, strict=True)]
        else:
            p = queue.pop(0)
            if p["key"] in placed:
                continue
        _place(read, p, ordered, placed, cites, by_key, score)
    return ordered, score


def learned_scores(keys: list[str], features: dict[str, dict[str, float]]) -> dict[str, float] | None:
    """The learned ranker's score of each passage from its signals (``features``, by key); None
    without the ranker, or when it gives no usable scores."""
    session = _ranker(str(RANKER))
    if session is None or not keys:
        return None
    try:
        (out, *_) = session.run(None, {session.get_inputs()[0].name: signal_rows(keys, features)})
    except Exception as exc:  # a model for other signals: the fused order stands
        _log.warning("the learned ranker %s failed (%s): passages in the fused order", RANKER, exc)
        return None
    scores = np.asarray(out, dtype=float).ravel()
    if scores.shape != (len(keys),) or not np.isfinite(scores).all():
        _log.warning("the learned ranker %s gave no usable scores: passages in the fused order", RANKER)
        return None
    return dict(zip(keys, scores.tolist(), strict=True))


def blended(
    ordered: list[dict[str, Any]], learned: dict[str, float], features: dict[str, dict[str, float]]
) -> dict[str, float]:
    """Each passage's place by the learned ranker, plus ``FUSED_SHARE`` x its place in the fused order
    (``ordered``) and ``LENGTH_PLACES`` x the log of its length (:data:`FEATURES` "length"), negated:
    higher reads first. Learned alone, the ranker reads the documents it learned from well and a new
    one worse than the fused order (measured leaving each document out of what it learns from); the
    two places together beat both. The length is the reading's cost: the ranker learned which
    passages hold the evidence, not what they cost to read."""
    fused = {p["key"]: i for i, p in enumerate(ordered)}
    by_learned = sorted(fused, key=lambda k: -learned[k])  # sorted() is stable: equals keep the fused order
    return {k: -(i + FUSED_SHARE * fused[k] + LENGTH_PLACES * features[k]["length"]) for i, k in enumerate(by_learned)}


def judged(
    deps: QueryDeps, question: str, passages: dict[str, dict[str, Any]], learned: dict[str, float]
) -> dict[str, float]:
    """The blended order (``learned``, higher first) with the first ``CROSS_PASSAGES`` read again by the
    cross-encoder, the question and each passage together: each moves by ``CROSS_SHARE`` x its place
    among them by the cross-encoder's score (the rest keep their order after them; front matter takes
    its last place). Unchanged without the cross-encoder or when it gives no usable scores."""
    model = deps.cross_encoder()
    places = sorted(learned, key=lambda k: -learned[k])  # sorted() is stable: equals keep their order
    head = places[:CROSS_PASSAGES]
    if model is None or not head:
        return learned
    try:
        scores = np.asarray(model.scores(question, [cross_text(passages[k]) for k in head]), dtype=float)
    except Exception as exc:  # the order without it stands
        _log.warning("the cross-encoder failed (%s): passages in the blended order", exc)
        return learned
    if scores.shape != (len(head),) or not np.isfinite(scores).all():
        _log.warning("the cross-encoder gave no usable scores: passages in the blended order")
        return learned
    # front matter is not lifted: the cross-encoder reads a title page's words ("Structural engineering",
    # the agencies) as on the question's topic
    scores = np.where([passages[k]["kind"] == "front" for k in head], -np.inf, scores)
    cross = np.argsort(np.argsort(-scores, kind="stable"), kind="stable")
    return {k: -(i + CROSS_SHARE * float(cross[i] if i < len(head) else len(head))) for i, k in enumerate(places)}


def cross_text(passage: dict[str, Any]) -> str:
    """What the cross-encoder reads of a passage (as it was trained): the headings above it and its own,
    then its quoted text."""
    label = f"{passage['section']} {passage.get('title') or ''}".strip()
    return " > ".join([*(passage.get("within") or []), label]) + "\n" + passage["text"]


def signal_rows(keys: list[str], features: dict[str, dict[str, float]]) -> np.ndarray:
    """The learned ranker's input: one row per passage (``keys``), its signals in ``FEATURES`` order
    (a signal a passage lacks, the soft match of one not read again, is 0)."""
    return np.array([[features[k].get(name, 0.0) for name in FEATURES] for k in keys], dtype=np.float32)


@lru_cache(maxsize=2)
def _ranker(path: str) -> Any:
    """The learned ranker's onnxruntime session, loaded once; None where it is not installed or unreadable."""
    if not Path(path).is_file():
        return None
    try:
        import onnxruntime as ort

        return ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    except Exception as exc:  # a damaged model file: the fused order stands
        _log.warning("the learned ranker %s could not be loaded (%s): passages in the fused order", path, exc)
        return None


def learned_order(
    read: Reader,
    ordered: list[dict[str, Any]],
    learned: dict[str, float],
    lifted: dict[str, float],
    cites: dict[str, list[str]],
    joinable: set[str],
) -> list[dict[str, Any]]:
    """The passages by the learned ranker's score (equals in their fused order), each followed by a
    table or expression it names whose standing comes from it (:func:`_place`) and that the ranker
    reads among the first (``joinable``): one it puts far down is not brought forward by the clause."""
    by_key = {p["key"]: p for p in ordered}
    queue = sorted(ordered, key=lambda p: -learned[p["key"]])  # sorted() is stable: equals keep the fused order
    out: list[dict[str, Any]] = []
    placed: set[str] = set()
    for p in queue:
        if p["key"] not in placed:
            _place(read, p, out, placed, cites, by_key, lifted, joinable)
    return out


def _place(
    read: Reader,
    p: dict[str, Any],
    ordered: list[dict[str, Any]],
    placed: set[str],
    cites: dict[str, list[str]],
    by_key: dict[str, dict[str, Any]],
    score: dict[str, float],
    joinable: set[str] | None = None,
) -> None:
    """Put the passage next in ``ordered``, followed by the tables and expressions (up to
    ``MAX_FOLLOWERS``) it names in its extract, not yet placed, whose standing comes from it (scored no
    higher than ``CITED_DECAY`` x its score), of those in ``joinable`` (None: any)."""
    followers = [
        t
        for t in _cited_in_text(read, p, cites[p["key"]])
        if t not in placed
        and by_key[t]["kind"] in FOLLOWER_KINDS
        and score[t] <= score[p["key"]] * CITED_DECAY + 1e-9
        and (joinable is None or t in joinable)
    ][:MAX_FOLLOWERS]
    for key in [p["key"], *followers]:
        placed.add(key)
        ordered.append(by_key[key])


def _answers(key: str, aspects: list[dict[str, float]], unanswered: list[float]) -> float:
    """``ASPECT_WEIGHT`` x the most the passage answers of one of the question's parts, each part's
    answer times the share of it the passages placed before leave unanswered (the most, not the mean:
    a question of five parts lifts the best passage of the part still unanswered as one of two does)."""
    return ASPECT_WEIGHT * max(u * a[key] for u, a in zip(unanswered, aspects, strict=True))


def near_head(passages: list[dict[str, Any]], head: list[dict[str, Any]]) -> dict[str, float]:
    """How many of the passages the fused order reads first (``head``) are printed in the same document
    within ``PAGE_REACH`` pages of each passage, itself left out."""

    def near(p: dict[str, Any], h: dict[str, Any]) -> bool:
        return (
            h["key"] != p["key"]
            and h["document"] == p["document"]
            and any(abs(a - b) <= PAGE_REACH for a in h["pages"] for b in p["pages"])
        )

    return {p["key"]: float(sum(near(p, h) for h in head)) for p in passages}


def _twins_apart(ordered: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A document that states one rule twice (a guide's paragraph on inspection reports in its chapter
    on scaffolds and again in its chapter on excavations) gives two passages of (nearly) the same words:
    the second says nothing new. Of two such twins among the first ``SUPPORTING_PASSAGES``, the one printed
    among the key passages (in the chapter the question is about) takes the earlier of their
    places; the other goes to the back, and the kept one names it in ``same_text``."""
    head = [p for p in ordered[:SUPPORTING_PASSAGES] if p["kind"] not in OBJECT_KINDS]
    grams = {p["key"]: _trigrams(p["text"], p["section"]) for p in head}

    def context(p: dict[str, Any], twin: dict[str, Any]) -> float:
        """How much of the key passages (the twins aside) is printed near the passage, within
        ``TWIN_PAGES`` pages of it in its document: each counts 1 / its place (the first 1, the
        second 1/2 ...)."""
        return sum(
            1 / n
            for n, q in enumerate(ordered[:KEY_PASSAGES], start=1)
            if q["key"] not in (p["key"], twin["key"])
            and q["document"] == p["document"]
            and abs((q.get("page") or 0) - (p.get("page") or 0)) <= TWIN_PAGES
        )

    moved: dict[str, dict[str, Any]] = {}  # the key of a twin moved away -> the twin kept
    for j, b in enumerate(head):
        for a in head[:j]:
            if a["key"] in moved or b["key"] in moved:
                continue
            ga, gb = grams[a["key"]], grams[b["key"]]
            small = min(len(ga), len(gb))
            if small < TWIN_MIN_WORDS or len(ga & gb) < TWIN_SHARE * small:
                continue
            keep, away = (b, a) if context(b, a) > context(a, b) else (a, b)
            moved[away["key"]] = keep
    order = list(ordered)
    for away_key, keep in moved.items():
        i = next(n for n, p in enumerate(order) if p["key"] == away_key)
        k = next(n for n, p in enumerate(order) if p["key"] == keep["key"])
        away = order[i]
        if i < k:  # the kept twin takes the earlier place
            order[i] = keep
            del order[k]
        else:
            del order[i]
        order.append(away)
        keep.setdefault("same_text", []).append(away_key)
    return order


def _trigrams(text: str, section: str) -> set[tuple[str, ...]]:
    """The passage's runs of three words, its own number left out ("137 The person receiving ...")."""
    words = re.findall(r"\w+", text.lower())
    own = re.findall(r"\w+", section.lower())
    if words[: len(own)] == own:
        words = words[len(own) :]
    return {tuple(words[i : i + 3]) for i in range(len(words) - 2)}


def _restated_last(ordered: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An expression whose text a passage before it already quotes (the clause that states it) goes to
    the back of the answer, and that passage lists it in ``restates``: the brief shows its image there."""
    flat: dict[str, str] = {}

    def text_of(p: dict[str, Any]) -> str:
        if p["key"] not in flat:
            flat[p["key"]] = " ".join(p["text"].split())
        return flat[p["key"]]

    kept: list[dict[str, Any]] = []
    restated: list[dict[str, Any]] = []
    for p in ordered:
        body = text_of(p) if p["kind"] == "expression" else ""
        holder = next((q for q in kept if body in text_of(q)), None) if body else None
        if holder is None:
            kept.append(p)
        else:
            holder.setdefault("restates", []).append(p["key"])
            restated.append(p)
    return kept + restated


def _drawn_after_key(ordered: list[dict[str, Any]], cites: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Figures, expressions and front matter among the first ``KEY_PASSAGES`` passages go right after
    them (to the end of a shorter answer), in their order: a figure's passage quotes its caption (its
    drawing is an image), an expression's its formula as a scan's text layer reads it ("FR J.l (4.2)",
    the clause citing it says what it is for), a cover or foreword says what the document is, so the
    first places go to text; not a figure whose key states a value in words ("The recommended value of
    h0 is 5,0 m"), which is read as text. The first passage before it that cites a moved figure names it
    in ``figures``, a moved expression in ``expressions``: the brief shows its image there."""
    head: list[dict[str, Any]] = []
    moved: list[dict[str, Any]] = []
    for p in ordered:
        if len(head) == KEY_PASSAGES:
            break
        drawn = p["kind"] in ("expression", "front") or (p["kind"] == "figure" and not _states_values(p))
        (moved if drawn else head).append(p)
    for obj in (m for m in moved if m["kind"] != "front"):
        holder = next((p for p in head if obj["key"] in cites.get(p["key"], [])), None)
        if holder is not None:
            holder.setdefault("figures" if obj["kind"] == "figure" else "expressions", []).append(obj["key"])
    return head + moved + ordered[len(head) + len(moved) :]


def _states_values(figure: dict[str, Any]) -> bool:
    """A figure's passage that quotes, past its caption's line, a legible sentence stating a value."""
    below = figure["text"].split("\n", 1)[1] if "\n" in figure["text"] else ""
    return any(legible(s) for s in value_statements(below))


def _paragraph_runs(
    read: Reader, ordered: list[dict[str, Any]], joinable: set[str] | None = None
) -> list[dict[str, Any]]:
    """Numbered paragraphs of the answer under one heading that follow one another (a guide that
    numbers its paragraphs through: "358", "359", "360" under "Inspections and reports") are read
    together: at the place of the first of them to be read, in number order, each its own passage
    (its own citation), the heading's part read as a clause is with its paragraphs. A run longer than
    ``RUN_CHARS`` of quoted text is read in pieces, each grown from the best placed paragraph left by
    its better placed neighbour while it fits (a long run's far paragraphs keep their places). Only
    paragraphs in ``joinable`` (None: any) are read in runs."""
    runs: dict[tuple[str, str], dict[int, int]] = {}  # (document, heading) -> paragraph number -> place
    for i, p in enumerate(ordered):
        if joinable is not None and p["key"] not in joinable:
            continue
        parent = (read.section(p["key"]) or {}).get("parent") if p["kind"] == "clause" else None
        if parent and p["section"].isdigit() and not _numbered((read.section(parent) or {}).get("section", "0")):
            runs.setdefault((p["document"], parent), {})[int(p["section"])] = i
    joined: dict[int, list[int]] = {}  # the place a run is read at -> its members' places, in number order
    for places in runs.values():
        # numbers that follow one another share their distance from their rank among the numbers
        for _, group in groupby(enumerate(sorted(places)), key=lambda pair: pair[1] - pair[0]):
            for piece in _within_reading([n for _, n in group], places, ordered):
                if len(piece) > 1:
                    members = [places[m] for m in piece]
                    joined[min(members)] = members
    moved = {i for members in joined.values() for i in members}
    out = []
    for i, p in enumerate(ordered):
        if i in joined:
            out += [ordered[m] for m in joined[i]]
        elif i not in moved:
            out.append(p)
    return out


def _within_reading(run: list[int], places: dict[int, int], ordered: list[dict[str, Any]]) -> list[list[int]]:
    """A run of paragraph numbers cut into pieces of at most ``RUN_CHARS`` of quoted text: each grows
    from the best placed paragraph left by its better placed neighbour while it fits."""
    size = {n: len(ordered[places[n]]["text"]) for n in run}
    left, pieces = set(run), []
    while left:
        low = high = min(left, key=lambda n: places[n])
        chars = size[low]
        while True:
            fits = [n for n in (low - 1, high + 1) if n in left and chars + size[n] <= RUN_CHARS]
            if not fits:
                break
            n = min(fits, key=lambda m: places[m])
            chars += size[n]
            low, high = min(low, n), max(high, n)
        pieces.append(list(range(low, high + 1)))
        left -= set(pieces[-1])
    return pieces


def _titled(passage: dict[str, Any]) -> str:
    """A passage's title and quoted text, as they are read against the question."""
    return soft_text(passage.get("title"), passage["text"])


def _cited(read: Reader, key: str, among: set[str]) -> list[str]:
    """Sections of the answer that ``key`` cites. A reference to a whole clause whose own text is only
    its heading ("determined using 5.3", where 5.3 holds subclauses) reaches the first of its subclauses
    in the answer ("5.3.1 General"), which introduces the rest. A reference to a whole section or annex
    with text of its own ("Annex C gives ground snow load maps", as a scope lists them) points to a
    chapter, not to the text that answers: it lifts nothing, unless it names the section by its title."""
    refs = [ref for ref in read.lookup("references", key) or [] if ref.get("target") and ref["target"] != key]
    members = Counter(_mention(ref) for ref in refs)
    cited: list[str] = []
    opened: set[tuple[str, tuple[int, ...]]] = set()  # ranges already lifting their first member
    for ref in refs:
        mention = _mention(ref)
        ranged = mention if mention is not None and members[mention] > RANGE_MEMBERS else None
        if ranged in opened:
            continue
        target = ref["target"]
        if target not in among or _heading_only(read, target):
            target = first_subclause(target, among) or (target if target in among else None)
        if target and target != key and (not _chapter(read, target) or _by_title(ref)):
            cited.append(target)
            if ranged is not None:
                opened.add(ranged)
    return list(dict.fromkeys(cited))


def _by_title(ref: dict[str, Any]) -> bool:
    """A section named by its title ("see Inspecting surfaces and fixtures"), not by a number: the words
    name that section's text, whether or not it is a chapter."""
    return ref.get("kind") == "clause" and not re.search(r"\d", ref.get("raw") or "0")


def _mention(ref: dict[str, Any]) -> tuple[str, tuple[int, ...]] | None:
    """Where a reference is printed: its words and span (each member of a range shares them)."""
    span = ref.get("span")
    return (ref["raw"], tuple(span)) if ref.get("raw") and span else None


def _informative(read: Reader, key: str) -> bool:
    """In an informative annex (ingest's precedence marks the annex, or the section itself): guidance
    beside the normative rules, and a National Annex may not permit it."""
    cursor = key
    for _ in range(8):
        if any(r.get("type") == "informative" for r in read.lookup("precedence", cursor) or []):
            return True
        cursor = (read.section(cursor) or {}).get("parent") or ""
        if not cursor:
            return False
    return False


def _chapter(read: Reader, key: str) -> bool:
    """A whole section or annex: a top-level section that is not a table, figure or expression."""
    section = read.section(key) or {}
    return not section.get("parent") and section.get("kind") not in OBJECT_KINDS


def _heading_only(read: Reader, key: str) -> bool:
    section = read.section(key) or {}
    return bare(section.get("text", ""), section.get("title"))


def _cited_in_text(read: Reader, passage: dict[str, Any], cited: list[str]) -> list[str]:
    """Of ``cited``, those named inside the passage's own extract, in the order they are named."""
    spans = passage["spans"]
    named = [
        (r["span"][0], r["target"])
        for r in read.lookup("references", passage["key"]) or []
        if r.get("target") in cited and r.get("span") and any(a <= r["span"][0] < b for a, b in spans)
    ]
    return list(dict.fromkeys(t for _, t in sorted(named)))
