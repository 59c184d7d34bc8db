"""Model implementations of the query and ingestion tasks, behind the same interfaces as the offline ones.

Each task formats its prompt from ``clausewise.prompts``, asks the chat model for a pydantic schema
(``with_structured_output``, retried), and checks the answer against the source text: quotes, references,
terms and evidence that are not in the text are dropped. Any exception or invalid output makes that task
fall back to the offline implementation, and the degradation is recorded, so a run never fails because of
the model. Calls and tokens are counted for the answer's trace. The chat model is passed in: this module
builds no client.
"""

from __future__ import annotations

import base64
import functools
import re
import threading
from collections.abc import Callable, Collection, Iterator
from typing import Any, Literal, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.prompt_values import ChatPromptValue, PromptValue
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, Field

from clausewise.keys import DocId
from clausewise.prompts import (
    conflicts,
    decompose,
    description,
    keywords,
    precedence,
    references,
    relevance,
    summary,
    terms,
    triage,
)
from clausewise.references import spot_references
from clausewise.tools.ingest_tasks import IngestTasks, OfflineTasks, find_precedence
from clausewise.tools.parallel import Usage, map_ordered
from clausewise.tools.query_tasks import Extract, OfflineQueryTasks, QueryTasks, Section, Terms, TriageDecision

MAX_ITEMS = 10  # never more than 10 sections or passages in one model call
MAX_CONFLICT_CALLS = 3  # conflicts are looked for among the first 30 passages; rules cover the rest
MAX_SECTION_CHARS = 8000
MAX_PASSAGE_CHARS = 1500
HISTORY_TURNS = 6
MAX_QUESTION_CHARS = 2000
REFERENCE_CONTEXT = (30, 15)  # characters read before and after a listed reference to resolve it
MAX_PAGE_CHARS = 4000  # the page text sent with an object to describe
CONCURRENCY = 8  # model calls of one tasks object in flight at once

U = TypeVar("U")

T = TypeVar("T")


# ------------------------------------------------------------------ output schemas
class TriageOut(BaseModel):
    route: Literal["chat", "memory", "search"] = Field(description="chat, memory or search")
    reply: str | None = Field(default=None, description="route chat: the short reply")
    question: str | None = Field(default=None, description="route search: the standalone question to search for")
    turn: int | None = Field(
        default=None, description="memory: the turn whose answer answers it; search: the turn it follows up"
    )


class DecomposeOut(BaseModel):
    sub_questions: list[str] = Field(max_length=MAX_ITEMS, description="standalone sub-questions, at most 10")


class KeywordsOut(BaseModel):
    keywords: list[str] = Field(max_length=MAX_ITEMS, description="keywords or short phrases, at most 10")


class SectionExtract(BaseModel):
    key: str = Field(description="the section's key, exactly as given")
    quotes: list[str] = Field(default_factory=list, description="verbatim parts of the section text")
    references: list[str] = Field(default_factory=list, description="references made by the quotes, as written")


class RelevanceOut(BaseModel):
    sections: list[SectionExtract] = Field(
        default_factory=list, max_length=MAX_ITEMS, description="only sections with something relevant"
    )


class ReferencesOut(BaseModel):
    references: list[str] = Field(default_factory=list, max_length=60, description="references, verbatim")


class PrecedenceRule(BaseModel):
    rule: str
    type: Literal["national-annex", "recommended-value", "ndp", "informative", "normative", "supersedes", "other"]
    evidence: str = Field(description="the sentence stating the rule, verbatim")
    applies_to: str | None = Field(default=None, description="the clause, table or document it governs, verbatim")


class PrecedenceOut(BaseModel):
    rules: list[PrecedenceRule] = Field(default_factory=list, max_length=MAX_ITEMS)


class TermItem(BaseModel):
    term: str = Field(description="as written in the section")
    kind: Literal["symbol", "definition", "synonym", "value"]
    meaning: str | None = Field(default=None, description="symbol, definition, synonym: the equivalent")
    value: str | None = Field(default=None, description="value: the value with its unit, as written")


class TermsOut(BaseModel):
    terms: list[TermItem] = Field(default_factory=list, max_length=40)


class DescriptionOut(BaseModel):
    description: str


class FigureOut(BaseModel):
    description: str = Field(description="what the figure shows that bears on the question")


class ConflictOut(BaseModel):
    topic: str
    passages: list[str] = Field(description="keys of the passages that disagree")
    note: str


class ConflictsOut(BaseModel):
    conflicts: list[ConflictOut] = Field(default_factory=list, max_length=MAX_ITEMS)


class SummaryOut(BaseModel):
    summary: str


# ------------------------------------------------------------------ prompts and their inputs
PROMPTS: dict[str, ChatPromptTemplate] = {
    "triage": triage.PROMPT,
    "decompose": decompose.PROMPT,
    "keywords": keywords.PROMPT,
    "relevance": relevance.PROMPT,
    "conflicts": conflicts.PROMPT,
    "summary": summary.PROMPT,
    "references": references.PROMPT,
    "precedence": precedence.PROMPT,
    "terms": terms.PROMPT,
    "description": description.PROMPT,
}

# The variables each caller passes; a test checks these against each template's input variables.
PROMPT_INPUTS: dict[str, frozenset[str]] = {
    "triage": frozenset({"question", "history"}),
    "decompose": frozenset({"question"}),
    "keywords": frozenset({"question", "related_terms"}),
    "relevance": frozenset({"question", "sections"}),
    "conflicts": frozenset({"passages", "rules"}),
    "summary": frozenset({"question", "passages"}),
    "references": frozenset({"section_key", "section_text"}),
    "precedence": frozenset({"section_key", "section_kind", "section_text"}),
    "terms": frozenset({"section_key", "section_title", "section_text"}),
    "description": frozenset({"object_key", "caption", "object_text", "page_text", "referring"}),
}

# Prompts asked with an image only. They are kept out of PROMPTS (one prompt module per task there); the
# answer's figure prompt lives beside the ingestion description prompt in ``prompts/description.py``.
IMAGE_PROMPTS: dict[str, ChatPromptTemplate] = {"figure": description.FIGURE_PROMPT}
IMAGE_PROMPT_INPUTS: dict[str, frozenset[str]] = {"figure": frozenset({"question", "caption"})}


class InvalidOutput(ValueError):
    """The model answered, but not with something the task can use."""


# ------------------------------------------------------------------ verbatim checks
def _loose_pattern(fragment: str) -> str:
    """The fragment with any run of white space matching any other (PDF text breaks lines anywhere)."""
    pattern = r"\s+".join(re.escape(word) for word in fragment.split())
    if re.match(r"\w", fragment.strip()):
        pattern = r"(?<!\w)" + pattern
    if re.search(r"\w$", fragment.strip()):
        pattern += r"(?!\w|\.\d)"
    return pattern


def verbatim_span(text: str, fragment: str) -> tuple[int, int] | None:
    """Where ``fragment`` occurs in ``text`` (exactly, or up to white space), or None."""
    fragment = fragment.strip()
    if len(fragment) < 3:
        return None
    start = text.find(fragment)
    if start >= 0:
        return start, start + len(fragment)
    m = re.search(_loose_pattern(fragment), text)
    return m.span() if m else None


def verbatim_spans(text: str, fragment: str) -> Iterator[tuple[int, int]]:
    """Every occurrence of ``fragment`` in ``text`` as a whole token sequence, up to white space."""
    if fragment.strip():
        for m in re.finditer(_loose_pattern(fragment), text):
            yield m.span()


def occurs(text: str, fragment: str) -> bool:
    """Whether ``fragment`` is in ``text`` as whole tokens (so the symbol "s" is not found in "sk")."""
    return next(verbatim_spans(text, fragment), None) is not None


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "\n[... cut ...]"


def _attr(value: Any) -> str:
    return str(value if value is not None else "").replace('"', "'")


def with_image(png: bytes) -> Callable[[PromptValue], ChatPromptValue]:
    """Turns the prompt's last (human) message into a text part and an inline PNG image part."""
    url = "data:image/png;base64," + base64.b64encode(png).decode()

    def attach(prompt: PromptValue) -> ChatPromptValue:
        messages = prompt.to_messages()
        text = str(messages[-1].content)
        content: list[str | dict[str, Any]] = [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": url}},
        ]
        return ChatPromptValue(messages=[*messages[:-1], HumanMessage(content=content)])

    return attach


# ------------------------------------------------------------------ the model runner
class _ModelTasks:
    """Structured calls with retries, call and token counts, and fallback bookkeeping."""

    def __init__(
        self,
        chat_model: BaseChatModel,
        *,
        name: str = "gemini",
        attempts: int = 3,
        retry_wait: bool = True,
        concurrency: int = CONCURRENCY,
    ) -> None:
        self.chat_model = chat_model
        self.name = name
        self.attempts = attempts
        self.retry_wait = retry_wait
        # Callers run a step's calls on up to this many threads; the semaphore bounds the calls in flight
        # over all steps (ingestion runs its enrichment steps as parallel branches).
        self.concurrency = max(1, int(concurrency))
        self._slots = threading.BoundedSemaphore(self.concurrency)
        self.calls = 0
        self.tokens = 0
        self.degraded: list[str] = []
        self._lock = threading.Lock()

    def ask(self, task: str, schema: type[BaseModel], *, image: bytes | None = None, **variables: str) -> Any:
        """One structured answer for ``task`` (retried on errors and invalid output); raises when none.
        ``image`` (PNG bytes) goes with the prompt's human message as an inline image part."""
        inputs = PROMPT_INPUTS.get(task) or IMAGE_PROMPT_INPUTS[task]
        if frozenset(variables) != inputs:
            raise TypeError(f"{task} takes {sorted(inputs)}, got {sorted(variables)}")
        if task in IMAGE_PROMPTS and not image:
            raise TypeError(f"{task} needs an image")
        prompt: Runnable[Any, Any] = PROMPTS.get(task) or IMAGE_PROMPTS[task]
        if image:
            prompt = prompt | RunnableLambda(with_image(image))
        structured = self.chat_model.with_structured_output(schema, include_raw=True)
        chain = (
            prompt
            | RunnableLambda(self._count_call)
            | structured
            | RunnableLambda(functools.partial(self._parsed, schema))
        )
        runnable = chain.with_retry(stop_after_attempt=self.attempts, wait_exponential_jitter=self.retry_wait)
        with self._slots:
            return runnable.invoke(variables, config={"run_name": f"clausewise.{task}"})

    def usage(self) -> Usage:
        """The counters in the answer trace's terms, cumulative over this object's life (subtract a
        snapshot taken at the start of a question for that question's share)."""
        with self._lock:
            return {"mode": self.name, "llm_calls": self.calls, "tokens": self.tokens, "degraded": list(self.degraded)}

    def _count_call(self, prompt: Any) -> Any:
        with self._lock:
            self.calls += 1
        return prompt

    def _parsed(self, schema: type[BaseModel], result: Any) -> BaseModel:
        if isinstance(result, dict) and "parsed" in result and "raw" in result:
            usage = getattr(result.get("raw"), "usage_metadata", None) or {}
            with self._lock:
                self.tokens += int(usage.get("total_tokens") or 0)
            if result.get("parsing_error") is not None:
                raise InvalidOutput(f"unparsable {schema.__name__}: {result['parsing_error']}")
            result = result["parsed"]
        if isinstance(result, schema):
            return result
        if isinstance(result, BaseModel):
            result = result.model_dump()
        if isinstance(result, dict):
            return schema.model_validate(result)
        raise InvalidOutput(f"expected {schema.__name__}, got {type(result).__name__}")

    def guarded(self, task: str, attempt: Callable[[], T], offline: Callable[[], T]) -> T:
        """The model's answer, or the offline one when the model fails; failures are recorded."""
        try:
            return attempt()
        except Exception as exc:  # any failure of the model degrades this task, never the run
            with self._lock:
                self.degraded.append(f"{task}: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
            return offline()


# ------------------------------------------------------------------ query tasks
def _history_text(history: list[dict[str, Any]]) -> str:
    first = max(0, len(history) - HISTORY_TURNS)
    return "\n".join(
        f"[turn {i}] Q: {turn.get('question', '')}\n[turn {i}] A: {_clip(turn.get('answer') or '', 600)}"
        for i, turn in enumerate(history[first:], start=first)
    )


def _sections_text(sections: list[Section], focus: dict[str, str]) -> str:
    blocks = []
    for s in sections:
        extra = f' focus="{_attr(focus[s["key"]])}"' if focus.get(s["key"]) else ""
        blocks.append(
            f'<section key="{_attr(s["key"])}" kind="{_attr(s.get("kind"))}"{extra}>\n'
            f"{_clip(s['text'], MAX_SECTION_CHARS)}\n</section>"
        )
    return "\n\n".join(blocks)


def _passages_text(passages: list[dict[str, Any]]) -> str:
    return "\n\n".join(
        f'<passage key="{_attr(p["key"])}" document="{_attr(p.get("document"))}" '
        f'section="{_attr(p.get("section"))}" page="{_attr(p.get("page"))}">\n'
        f"{_clip(p['text'], MAX_PASSAGE_CHARS)}\n</passage>"
        for p in passages
    )


class ModelQueryTasks(_ModelTasks):
    """The query graph's reasoner backed by a chat model; offline rules when the model fails."""

    max_figures = 4  # figures of one answer described for its question

    def __init__(self, chat_model: BaseChatModel, fallback: QueryTasks | None = None, **options: Any) -> None:
        super().__init__(chat_model, **options)
        self.fallback: QueryTasks = fallback or OfflineQueryTasks()

    def triage(self, question: str, history: list[dict[str, Any]]) -> TriageDecision:
        return self.guarded(
            "triage", lambda: self._triage(question, history), lambda: self.fallback.triage(question, history)
        )

    def _triage(self, question: str, history: list[dict[str, Any]]) -> TriageDecision:
        out: TriageOut = self.ask("triage", TriageOut, question=question, history=_history_text(history))
        turn = history[out.turn] if out.turn is not None and 0 <= out.turn < len(history) else None
        if out.route == "chat":
            reply = (out.reply or "").strip()
            if not reply:
                raise InvalidOutput("chat route without a reply")
            return {"route": "chat", "reply": reply}
        if out.route == "memory":
            if turn is None or not turn.get("answer"):
                raise InvalidOutput(f"memory route without an earlier answer (turn {out.turn})")
            return {"route": "memory", "answer": turn["answer"]}
        searched = " ".join((out.question or "").split())[:MAX_QUESTION_CHARS] or question
        decision: TriageDecision = {"route": "search", "question": searched}
        if turn is not None and searched.lower() != question.lower():
            decision["follow_up_of"] = turn.get("question", "")
        return decision

    def decompose(self, question: str) -> list[str]:
        def attempt() -> list[str]:
            out: DecomposeOut = self.ask("decompose", DecomposeOut, question=question)
            parts = list(dict.fromkeys(" ".join(q.split()) for q in out.sub_questions if q.strip()))
            return parts or [question]

        return self.guarded("decompose", attempt, lambda: self.fallback.decompose(question))

    def keywords(self, question: str, terms: Terms) -> list[str]:
        def attempt() -> list[str]:
            out: KeywordsOut = self.ask(
                "keywords", KeywordsOut, question=question, related_terms=", ".join(terms.top(15))
            )
            return list(dict.fromkeys(" ".join(k.split()) for k in out.keywords if k.strip()))

        return self.guarded("keywords", attempt, lambda: self.fallback.keywords(question, terms))

    def relevance(
        self, question: str, terms: Terms, sections: list[Section], focus: dict[str, str]
    ) -> dict[str, list[Extract]]:
        """At most 10 sections per call; only quotes found in the section text are kept."""
        out: dict[str, list[Extract]] = {}
        for i in range(0, len(sections), MAX_ITEMS):
            batch = sections[i : i + MAX_ITEMS]
            out.update(
                self.guarded(
                    "relevance",
                    functools.partial(self._relevance, question, batch, focus),
                    functools.partial(self.fallback.relevance, question, terms, batch, focus),
                )
            )
        return out

    def _relevance(self, question: str, sections: list[Section], focus: dict[str, str]) -> dict[str, list[Extract]]:
        out: RelevanceOut = self.ask(
            "relevance", RelevanceOut, question=question, sections=_sections_text(sections, focus)
        )
        by_key = {s["key"]: s for s in sections}
        found: dict[str, list[Extract]] = {}
        for item in out.sections:
            section = by_key.get(item.key.strip())
            if section is None:
                continue
            text = section["text"]
            spans = [span for q in item.quotes if (span := verbatim_span(text, q)) is not None]
            refs = list(dict.fromkeys(r.strip() for r in item.references if r.strip()))
            extracts = [
                Extract(section["key"], text[a:b], a, b, 1.0, claimed_refs=list(refs)) for a, b in _merge(spans)
            ]
            if extracts:
                found.setdefault(section["key"], []).extend(extracts)
        return found

    def find_conflicts(
        self, passages: list[dict[str, Any]], rules: list[dict[str, Any]], kv: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """The model's conflicts within batches of 10 passages, then the rule-based ones over all passages
        (different values of one symbol, recommended values a National Annex may change)."""
        batches = [
            passages[i : i + MAX_ITEMS] for i in range(0, min(len(passages), MAX_ITEMS * MAX_CONFLICT_CALLS), MAX_ITEMS)
        ]

        def ask(batch: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return self.guarded("conflicts", functools.partial(self._conflicts, batch, rules), list)

        found: list[dict[str, Any]] = []
        for part in map_ordered(self.concurrency, ask, batches):
            found += part
        found += self.fallback.find_conflicts(passages, rules, kv)
        seen, unique = set(), []
        for c in found:
            marker = (c["topic"].strip().lower(), tuple(sorted(c["passages"])))
            if marker not in seen:
                seen.add(marker)
                unique.append(c)
        return unique

    def _conflicts(self, passages: list[dict[str, Any]], rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
        keys = {p["key"] for p in passages}
        governing = "\n".join(f"- {r['key']}: {r['rule']}" for r in rules if r.get("key") in keys)
        out: ConflictsOut = self.ask("conflicts", ConflictsOut, passages=_passages_text(passages), rules=governing)
        found = []
        for c in out.conflicts:
            named = [k for k in dict.fromkeys(k.strip() for k in c.passages) if k in keys]
            if named and c.topic.strip():
                found.append({"topic": c.topic.strip(), "passages": named, "note": c.note.strip()})
        return found

    def summarise(self, question: str, passages: list[dict[str, Any]]) -> str:
        if not passages:
            return ""

        def attempt() -> str:
            out: SummaryOut = self.ask(
                "summary", SummaryOut, question=question, passages=_passages_text(passages[:MAX_ITEMS])
            )
            if not out.summary.strip():
                raise InvalidOutput("empty summary")
            return out.summary.strip()

        return self.guarded("summary", attempt, lambda: self.fallback.summarise(question, passages))

    def describe_figure(self, question: str, caption: str | None, png: bytes) -> str:
        """What the figure's image shows for the question (one call); "" when the model fails or there
        is no image (the offline reasoner has no such step)."""
        if not png:
            return ""

        def attempt() -> str:
            out: FigureOut = self.ask(
                "figure", FigureOut, image=png, question=_clip(question, MAX_QUESTION_CHARS), caption=_attr(caption)
            )
            if not out.description.strip():
                raise InvalidOutput("empty figure description")
            return out.description.strip()

        return self.guarded("figure", attempt, str)


# ------------------------------------------------------------------ ingestion tasks
class ModelIngestTasks(_ModelTasks):
    """Ingestion's reasoner backed by a chat model; everything it claims is checked against the text."""

    def __init__(self, chat_model: BaseChatModel, fallback: IngestTasks | None = None, **options: Any) -> None:
        super().__init__(chat_model, **options)
        self.fallback: IngestTasks = fallback or OfflineTasks()

    def spot_references(self, doc: DocId, section: Section, known: Collection[str]) -> list[dict[str, Any]]:
        return self.guarded(
            "references",
            lambda: self._references(doc, section, known),
            lambda: self.fallback.spot_references(doc, section, known),
        )

    def _references(self, doc: DocId, section: Section, known: Collection[str]) -> list[dict[str, Any]]:
        """Each string the model lists is kept where it occurs in the text, and resolved there by the same
        rules as offline. The rules read a few characters around it ("see 4.1" is a reference, "4.1 kN/m2" is
        not); longer strings go first, so "4.1" inside "Table 4.1" is not a second reference."""
        out: ReferencesOut = self.ask(
            "references",
            ReferencesOut,
            section_key=section["key"],
            section_text=_clip(section["text"], MAX_SECTION_CHARS),
        )
        text: str = section["text"]
        refs: list[dict[str, Any]] = []
        taken: list[tuple[int, int]] = []
        listed = sorted(dict.fromkeys(r.strip() for r in out.references if r.strip()), key=len, reverse=True)
        for raw in listed:
            for a, b in verbatim_spans(text, raw):
                lo, hi = max(0, a - REFERENCE_CONTEXT[0]), min(len(text), b + REFERENCE_CONTEXT[1])
                here = []  # one match may name several targets ("Tables 5.1 and 5.2"), with one span
                for ref in spot_references(doc, dict(section, text=text[lo:hi]), known):
                    s, e = ref["span"][0] + lo, ref["span"][1] + lo
                    if s < b and a < e and not any(s < y and x < e for x, y in taken):
                        here.append(dict(ref, span=[s, e]))
                refs += here
                taken += [(r["span"][0], r["span"][1]) for r in here]
        refs.sort(key=lambda r: r["span"][0])
        return refs

    def find_precedence(self, doc: DocId, section: Section, known: set[str]) -> list[dict[str, Any]]:
        return self.guarded(
            "precedence",
            lambda: self._precedence(doc, section, known),
            lambda: self.fallback.find_precedence(doc, section, known),
        )

    def _precedence(self, doc: DocId, section: Section, known: set[str]) -> list[dict[str, Any]]:
        """The model's rules whose evidence is in the text, plus the structural rules the offline reasoner
        reads reliably (annex status from the layout, the foreword's list of nationally determined
        parameters, which may name more clauses than one call should)."""
        out: PrecedenceOut = self.ask(
            "precedence",
            PrecedenceOut,
            section_key=section["key"],
            section_kind=str(section.get("kind") or ""),
            section_text=_clip(section["text"], MAX_SECTION_CHARS),
        )
        text: str = section["text"]
        key = section["key"]
        rules: list[dict[str, Any]] = []
        for stated in out.rules:
            span = verbatim_span(text, stated.evidence)
            if span is None or not stated.rule.strip():
                continue
            target = key
            if stated.applies_to:
                where = verbatim_span(text, stated.applies_to)
                if where is not None:
                    probe = dict(section, text=text[where[0] : where[1]])
                    found = [f for f in spot_references(doc, probe, known) if f["target"]]
                    target = found[0]["target"] if found else key
            rules.append(
                {
                    "key": target,
                    "rule": stated.rule.strip(),
                    "type": stated.type,
                    "source_key": key,
                    "evidence": text[span[0] : span[1]],
                }
            )
        structural = [
            r for r in find_precedence(doc, section, known) if r["type"] in ("informative", "normative", "ndp")
        ]
        seen, unique = set(), []
        for r in rules + structural:
            if (r["key"], r["rule"]) not in seen:
                seen.add((r["key"], r["rule"]))
                unique.append(r)
        return unique

    def extract_terms(self, section: Section) -> list[dict[str, Any]]:
        return self.guarded("terms", lambda: self._terms(section), lambda: self.fallback.extract_terms(section))

    def _terms(self, section: Section) -> list[dict[str, Any]]:
        """Terms written in the section; values only as written there; equivalents may come from the model
        (that is how "dead load" finds "permanent action")."""
        out: TermsOut = self.ask(
            "terms",
            TermsOut,
            section_key=section["key"],
            section_title=str(section.get("title") or ""),
            section_text=_clip(section["text"], MAX_SECTION_CHARS),
        )
        text: str = section["text"]
        key = section["key"]
        found: list[dict[str, Any]] = []
        for t in out.terms:
            term = " ".join(t.term.split())
            if not term or not occurs(text, term):
                continue
            if t.kind == "value":
                value = " ".join((t.value or "").split())
                if value and occurs(text, value):
                    found.append({"term": term, "value": value, "source": key})
            elif t.meaning and t.meaning.strip():
                kind = {"definition": "definition", "synonym": "synonym"}.get(t.kind, "equivalent")
                found.append({"term": term, "equivalent": " ".join(t.meaning.split()), "source": key, "type": kind})
        return found

    def describe_object(
        self, obj: Section, referring: list[str], *, image: bytes | None = None, page_text: str = ""
    ) -> str:
        """From the cropped image (when there is one), the caption, the object's text, the text of its
        page and the sentences that cite it; the offline description when the model fails."""
        return self.guarded(
            "description",
            lambda: self._describe(obj, referring, image, page_text),
            lambda: self.fallback.describe_object(obj, referring),
        )

    def _describe(self, obj: Section, referring: list[str], image: bytes | None, page_text: str) -> str:
        caption = str(obj.get("caption") or obj.get("title") or "")
        out: DescriptionOut = self.ask(
            "description",
            DescriptionOut,
            image=image or None,
            object_key=obj["key"],
            caption=_attr(caption),
            object_text=_clip(obj["text"], MAX_SECTION_CHARS),
            page_text=_clip(page_text, MAX_PAGE_CHARS),
            referring="\n".join(f"- {_clip(s, 400)}" for s in referring[:MAX_ITEMS]),
        )
        if not out.description.strip():
            raise InvalidOutput("empty description")
        return f"{caption}\n{out.description.strip()}" if caption else out.description.strip()
