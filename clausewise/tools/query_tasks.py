"""Model tasks of the query graph behind one interface, with deterministic offline implementations.

The offline reasoner works on terms: the question's content words (lightly stemmed), its phrases,
and their equivalents from the kv store (synonyms, symbols <-> names), weighted by how rare they are
in the stores (IDF). It is recall-first: a paragraph is relevant when it carries a rare question term
or several common ones, and it is returned verbatim with the paragraph beside it for context.
"""

from __future__ import annotations

import math
import os
import re
import string
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any, Literal, NotRequired, Protocol, TypedDict

import snowballstemmer

from clausewise.keys import OBJECT_KINDS, cited, document_of
from clausewise.kv import equivalents_in, recorded_conflicts
from clausewise.tools.parallel import Usage, offline_usage

Section = dict[str, Any]

STOPWORDS = set(
    """a an the and or of to in on for with by at from as is are be been being do does did i my me we our you
    your it its this that these those there here what which who whom whose when where why how should would
    could can may might must shall will need needs take taking use used using about above below into onto
    than then so if any all some each per other such also only not no nor very just more most less least
    have has had get gets got make makes made step steps check refer part code codes clause clauses value
    values give given structure structures design designing designed consider considering considered
    issue issues potential regarding calculating calculate calculation allow allowed want know tell please
    uk london site sites building buildings going they them their theirs he she him her his us ours yours
    myself ourselves yourself itself themselves am was were while whilst because since though although
    whether unless but yet both either neither still already even ever once actually really rather
    instead like anything something everything nothing much many every same well want wants say says
    said put putting go goes come comes doing done keep let roughly""".split()
)
GREETING = re.compile(
    r"^\s*(hi|hello|hey|good (morning|afternoon|evening)|thanks|thank you|cheers|how are you|who are you)\b[\s!.?,]*"
    r"(there|clausewise|again|so much|a lot)?[\s!.?]*$",
    re.I,
)
FOLLOW_UP = re.compile(
    r"^\s*(and|what about|how about|same for|also|but|or)\b|^\s*(for|in|on|with)\s+(a|an|the)\b", re.I
)
_WORD = re.compile(r"[a-zA-Zψμα][a-zA-Z0-9ψμα]*(?:-[a-zA-Z]+)*|\d+(?:[.,]\d+)?")
# a contraction's clitic: "we're", "aren't", "slope's" ("aren t" is no term of the question, "re" no word)
_CLITIC = re.compile(r"(?<=[A-Za-z])(?:n['’]t|['’](?:re|ve|ll|d|m|s))\b", re.I)
_NEGATED_MODAL = re.compile(r"\b(?:(ca)|(wo)|(sha))n['’]t\b", re.I)  # "can't", "won't", "shan't"
_PARAGRAPH = re.compile(r"^\s*(\(\s?\d{1,2}\s?\)\s?P?|NOTE\b|[a-h]\)\s|-\s|\d\)\s)")


_STEMMERS = threading.local()  # a Snowball stemmer keeps state while it works: one per thread


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball (Porter 2) stem: "reinforced" and "reinforcing" meet at "reinforc"."""
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return str(stemmer.stemWord(word.lower()))


def uncontracted(text: str) -> str:
    """The text with its contractions spelled out, a possessive's "'s" dropped: "aren't" -> "are not",
    "can't" -> "can not", "we're" -> "we", "slope's" -> "slope"."""
    text = _NEGATED_MODAL.sub(lambda m: ("can" if m[1] else "will" if m[2] else "shall") + " not", text)
    return _CLITIC.sub(lambda m: " not" if m[0][0] in "nN" else "", text)


def question_words(text: str) -> list[str]:
    """The words of what was typed, its contractions spelled out."""
    return _WORD.findall(uncontracted(text))


def _content(word: str) -> bool:
    """A word that says what is asked about: not a stopword, a letter or a bare number."""
    return word.lower() not in STOPWORDS and len(word) > 1 and not word.isdigit()


def tokens(text: str) -> list[str]:
    return [stem(t) for t in _WORD.findall(text)]


@dataclass
class Terms:
    """Weighted query terms: single stems and multi-word phrases (stems joined by spaces)."""

    weights: dict[str, float] = field(default_factory=dict)
    source: dict[str, str] = field(default_factory=dict)
    unseen: set[str] = field(default_factory=set)  # terms with a word no section prints so: not searched for
    # the words a scan misread, as the words they stand for ("alulninium": "aluminium"): a text is read
    # with them (:func:`read_as`), so a misreading of a term's word counts as the term
    readings: dict[str, str] = field(default_factory=lambda: Readings())  # defined below

    def add(self, term: str, weight: float, source: str) -> None:
        if term and weight > self.weights.get(term, 0):
            self.weights[term] = weight
            self.source[term] = source

    def top(self, n: int) -> list[str]:
        return [t for t, _ in sorted(self.weights.items(), key=lambda kv: -kv[1])[:n]]


def is_definition(section: dict[str, Any]) -> bool:
    """A term's definition: a clause under a heading of terms and definitions."""
    return section.get("kind") == "clause" and "definition" in (section.get("parent_title") or "").lower()


def section_frequencies(sections: list[Section], readings: dict[str, str] | None = None) -> dict[str, Any]:
    """How many sections there are and in how many each stem occurs, each read with ``readings`` (a
    scan's misread words, :func:`scan_readings`, kept with them); computed at ingest per document."""
    df: Counter[str] = Counter()
    read = Readings(readings or {})
    for s in sections:
        df.update(set(tokens(read.read(s["text"]))))
    return {"sections": len(sections), "df": dict(df), "readings": dict(read)}


class Vocabulary:
    """Document frequencies of stems over every visible section (IDF): the sum of each document's
    frequencies, which ingestion stores with the document."""

    def __init__(self, frequencies: list[dict[str, Any]]):
        self.n = max(1, sum(f["sections"] for f in frequencies))
        df: Counter[str] = Counter()
        self.readings = Readings()  # every document's misread words (a store ingested before: none)
        for f in frequencies:
            df.update(f["df"])
            self.readings.update(f.get("readings") or {})
        self.df = df

    @classmethod
    def of_sections(cls, sections: list[Section]) -> Vocabulary:
        return cls([section_frequencies(sections)])

    def idf(self, term: str) -> float:
        parts = term.split()
        if len(parts) > 1:  # a phrase is at least as rare as its rarest word
            return max(self.idf(p) for p in parts) + 0.5
        return math.log((self.n + 1) / (self.df.get(term, 0) + 0.5))


NEGATED_WEIGHT = 0.8  # a negated word's positive ("reinforced" for "unreinforced"), as a kv equivalent counts


def question_terms(question: str, vocab: Vocabulary, kv: dict[str, Any]) -> Terms:
    """Content stems and adjacent-word phrases of the question, plus kv equivalents (synonyms, symbols)."""
    terms = Terms()
    words = question_words(question)
    # A hyphenated word counts whole ("self-weight", as codes print it) and by its parts, which a code may
    # print apart ("shade-air-temperature" asked, "shade air temperature" printed).
    parts = [part for w in words for part in w.split("-") if part]
    content = [w for w in dict.fromkeys(words + parts) if _content(w)]
    for w in content:
        terms.add(stem(w), vocab.idf(stem(w)), "question")
        # A code states a rule in the positive ("masonry must be designed as reinforced unless ...",
        # "erected and clad") where the question asks in the negative ("unreinforced", "unclad").
        positive = stem(w[2:]) if w[:2].lower() == "un" and len(w) >= 6 and w[2:].lower() not in STOPWORDS else ""
        if positive and vocab.df.get(positive):
            terms.add(positive, NEGATED_WEIGHT * vocab.idf(positive), f"negated:{w}")
    for sequence in (words, parts) if len(parts) > len(words) else (words,):
        lowered = [w.lower() for w in sequence]
        for i in range(len(lowered) - 1):
            a, b = lowered[i], lowered[i + 1]
            if a not in STOPWORDS and b not in STOPWORDS:
                terms.add(f"{stem(a)} {stem(b)}", vocab.idf(f"{stem(a)} {stem(b)}"), "question")
    # Equivalents from the kv store: "dead load" -> "self-weight", "Ce" -> "exposure coefficient".
    for key, equivalent in equivalents_in(kv, words, ignore=frozenset(STOPWORDS)):
        eq_stems = " ".join(tokens(equivalent)[:4])
        if eq_stems:
            terms.add(eq_stems, 0.8 * vocab.idf(eq_stems), f"kv:{key}")
    terms.unseen = {t for t in terms.weights if any(not vocab.df.get(w) for w in t.split())}
    terms.readings = vocab.readings
    return terms


# Shapes a scan's text layer reads as others: "m" as "rn", "nl", "ln", "in" or "n1" ("tinlber",
# "nlaterials", "tin1ber"), "l" or "i" as the other or "1" ("c1ass", "ilnposed"), "h" as "li" or "ll"
# ("lengtll"), "d" as "cl"
_MISREAD = {"m": ("rn", "nl", "ln", "in", "n1"), "l": ("1", "i"), "i": ("l", "1"), "h": ("li", "ll"), "d": ("cl",)}
_READ_WORD = re.compile(r"[A-Za-z][A-Za-z1]*[A-Za-z]")  # a word as a scan may print it ("c1ass")
READING_MIN_CHARS = 5  # shorter words are as often abbreviations, symbols or a hyphenated word's end ("fied")
COMMON_ZIPF = 3.0  # a word this common in English (wordfreq's Zipf scale: about once per million words)
READING_GAIN = 2.0  # ... and this much more common than the printed word (100 times) is what it stands for


def scan_readings(texts: Iterable[str]) -> Readings:
    """The words of ``texts`` a scan misread, each as the word it stands for: a printed word rare in
    English (below ``COMMON_ZIPF`` on wordfreq's Zipf scale) that one misreading of a letter turns into
    a common word ``READING_GAIN`` more common ("tinlber" 0.0 -> "timber" 4.0, "c1ass" -> "class").
    A real word is no misreading ("fail" is not "fall", "clip" not "dip"), nor are symbols and names
    that no reading makes a word ("eilnp", "komltee"). A born-digital text has none to find."""
    from wordfreq import zipf_frequency  # at ingest only: its word lists take about 0.2 s to load

    readings = Readings()
    for word in {w.lower() for text in texts for w in _READ_WORD.findall(text)}:
        if len(word) < READING_MIN_CHARS:
            continue
        own = zipf_frequency(word, "en")
        if own >= COMMON_ZIPF:
            continue
        common, reading = max(((zipf_frequency(w, "en"), w) for w in _unread(word)), default=(0.0, ""))
        if common >= max(COMMON_ZIPF, own + READING_GAIN):
            readings[word] = reading
    return readings


@lru_cache(maxsize=4096)
def _unread(word: str) -> tuple[str, ...]:
    """The words ``word`` may be a scan's reading of: each misread shape in it read back as its letter."""
    found = set()
    for letter, shapes in _MISREAD.items():
        for shape in shapes:
            i = word.find(shape)
            while i >= 0:
                found.add(word[:i] + letter + word[i + len(shape) :])
                i = word.find(shape, i + 1)
    return tuple(sorted(found))


TYPO_ZIPF = 1.5  # a typed word this rare in English (and printed in no section) may be a slip of the keys
MEANT_ZIPF = 2.0  # ... for a word at least this common (and 100 times as common): "parapet" 2.7, "cladding" 2.9
_TYPED_WORD = re.compile(r"(?<![\w-])[A-Za-z]+(?![\w-])")  # a plain word, not part of a symbol or compound


def spelled(
    question: str, vocab: Vocabulary, printed: Callable[[Iterable[str]], set[str]]
) -> tuple[str, dict[str, str]]:
    """The question with its slips of the keys put right, and the words put right (as typed -> as
    meant). A word of five letters or more that no section prints as typed (``printed``: those of some
    words that a section prints) and that is rare in English (below ``TYPO_ZIPF`` on wordfreq's Zipf
    scale) is read as the word one edit away (a letter left out, added, changed, or two swapped) that
    the documents print and that is 100 times as common in English (and at least ``MEANT_ZIPF``):
    "densty" -> "density", "concret" -> "concrete" (its terms match "concrete"'s by their stem, but the
    embedder reads "concret" as another word). A word of the trade stays as typed: none that the
    documents print is one edit from it ("rooflight", "rainscreen"; "girts" is not "girls" where no
    section prints "girls"), or it is not rare enough ("helipad", "mullion"), and so is a plural the
    documents print singular ("weights"). English word frequencies are loaded (0.1 to 0.2 s) only for a
    question with a word no section prints that is one edit from one that does."""
    typed = {m.group(): m.group().lower() for m in _TYPED_WORD.finditer(question)}
    typed = {word: lower for word, lower in typed.items() if len(lower) >= READING_MIN_CHARS}
    known = printed(typed.values())
    edits = {lower: _one_edit(lower) for lower in typed.values() if lower not in known}
    near_printed = printed(set().union(*edits.values())) if edits else set()  # one look-up for every word
    fixed: dict[str, str] = {}
    for word, lower in typed.items():  # in the order asked
        near = sorted(edits.get(lower, set()) & near_printed)
        if not near:
            continue
        own = _zipf(lower)
        common, meant = max((_zipf(w), w) for w in near)
        if own < TYPO_ZIPF and common >= max(MEANT_ZIPF, own + READING_GAIN):
            fixed[word] = in_case(meant, word)
    if not fixed:
        return question, fixed
    pattern = re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, fixed)) + r")(?![\w-])")
    return pattern.sub(lambda m: fixed[m.group()], question), fixed


def _zipf(word: str) -> float:
    """The word's frequency in English on wordfreq's Zipf scale, looked up in its short list of common
    words first (its long list costs 0.1 s more to load)."""
    from wordfreq import zipf_frequency  # only when a word is to be put right: 0.1 s to import

    common = zipf_frequency(word, "en", wordlist="small")
    return common if common >= TYPO_ZIPF else zipf_frequency(word, "en")


def _one_edit(word: str) -> set[str]:
    """Every word one edit from ``word``: a letter left out, two neighbours swapped, one changed, one added."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    return (
        {a + b[1:] for a, b in splits if b}
        | {a + b[1] + b[0] + b[2:] for a, b in splits if len(b) > 1}
        | {a + c + b[1:] for a, b in splits if b for c in string.ascii_lowercase}
        | {a + c + b for a, b in splits for c in string.ascii_lowercase}
    ) - {word}


class Readings(dict[str, str]):
    """A scan's misread words (lower case) -> the words they stand for; filled once, then read."""

    CACHE = 4096  # texts read, kept: a query reads its passages' texts once for each of its parts

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._read: dict[str, str] = {}

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        """Any of the misread words, whole, in any case."""
        words = sorted(self, key=len, reverse=True)
        return re.compile(r"(?<![A-Za-z1])(?:" + "|".join(map(re.escape, words)) + r")(?![A-Za-z1])", re.I)

    def read(self, text: str) -> str:
        """``text`` with each misread word as the word it stands for, in the printed word's case."""
        got = self._read.get(text)
        if got is None:
            # most texts hold none: their words looked up are cheaper than the pattern (15 against 150 µs)
            held = not self.keys().isdisjoint(_READ_WORD.findall(text.lower()))
            got = self.pattern.sub(self._word, text) if held else text
            if len(self._read) >= self.CACHE:
                self._read.clear()
            self._read[text] = got
        return got

    def _word(self, match: re.Match[str]) -> str:
        return in_case(self[match.group(0).lower()], match.group(0))


def in_case(word: str, printed: str) -> str:
    """``word`` (lower case) in the case of the word it stands for: "TIMBER", "Timber", "timber"."""
    return word.upper() if printed.isupper() else word.capitalize() if printed[0].isupper() else word


def headings_above(section_of: Callable[[str], dict[str, Any] | None], key: str, depth: int = 2) -> list[str]:
    """The titles of the headings a section sits under, outermost first, up to ``depth`` of them besides
    the section's own ("Groundwork / Excavations" above a paragraph under "Inspections and reports": a
    guide that prints the same heading in two chapters tells them apart by their chapters)."""
    section = section_of(key) or {}
    titles: list[str] = []
    seen = {(section.get("title") or "").strip().lower()}
    parent = section.get("parent")
    while parent and len(titles) < depth and (above := section_of(parent)) is not None:
        title = (above.get("title") or "").strip()
        if title and title.lower() not in seen:
            titles.insert(0, title)
            seen.add(title.lower())
        parent = above.get("parent")
    return titles


def read_as(text: str, readings: dict[str, str] | None) -> str:
    """``text`` with each misread word (:func:`scan_readings`) as the word it stands for, in the
    printed word's case ("Tinlber" -> "Timber"): what is searched, embedded and matched. A passage
    quotes the text as printed."""
    if not readings:
        return text
    # a plain mapping is read once (its pattern compiled for this text): many texts take a Readings
    return (readings if isinstance(readings, Readings) else Readings(readings)).read(text)


def search_prefixes(question: str) -> list[str]:
    """The question's content words as FTS5 prefixes (:func:`fts_prefix`); a word of hyphenated parts
    gives each part."""
    prefixes = []
    for word in (part for found in question_words(question) for part in re.findall(r"[a-z0-9]+", found.lower())):
        if len(word) < 2 or word in STOPWORDS or word.isdigit():
            continue
        prefixes.append(fts_prefix(word))
    return list(dict.fromkeys(prefixes))


def fts_prefix(word: str) -> str:
    """A word or a stem as the FTS5 prefix of its forms, cut where its stem leaves it ("loads" ->
    "load*", "density" -> "densit*", "conference" or its stem "confer" -> "confer*"; a stem's "y" read
    as "i", "densiti" -> "densit*"), so that the unstemmed index finds the word's other forms; a word
    that leaves fewer than 3 letters so, or one not of letters and digits ("5.3.2"), is itself."""
    word = word.lower()
    if not word.isalnum():
        return word
    prefix = os.path.commonprefix([word, stem(word)])
    if len(prefix) > 4 and prefix.endswith("i"):
        prefix = prefix[:-1]
    return f"{prefix}*" if len(prefix) >= 3 else word


LONG_UNIT = 800  # a unit longer than this is cut at its printed paragraphs and bulleted items
_BULLET = re.compile(r"\s*[•▪■●◦–]\s+")  # a bulleted item's mark


def _full_length(lines: list[str], fewest: int = 1) -> int | None:
    """A full printed line's length: the upper quartile of the lines' lengths (None with fewer than
    ``fewest`` lines of text)."""
    lengths = sorted(len(ln.strip()) for ln in lines if ln.strip())
    return lengths[(3 * len(lengths)) // 4] if len(lengths) >= max(1, fewest) else None


def units(text: str) -> list[tuple[int, int]]:
    """Spans of a section's paragraphs: "(n)" paragraphs, NOTEs, list items, table rows; the heading
    line is its own unit. A document that does not number its paragraphs (a guide, another publisher's
    code) would leave pages in one unit: one longer than ``LONG_UNIT`` is cut where a printed paragraph
    ends (a sentence's end on a line well short of a full one) and before each bulleted item."""
    lines = text.split("\n")
    starts, pos = [0], 0  # line starts
    for line in lines:
        pos += len(line) + 1
        starts.append(pos)
    cuts = [0]
    for i, line in enumerate(lines):
        if i > 0 and (_PARAGRAPH.match(line) or line.startswith("|") or i == 1):
            cuts.append(i)
    cuts.append(len(lines))
    full = _full_length(lines) or 0
    spans = []
    for first, last in zip(cuts, cuts[1:], strict=False):
        if starts[last] - starts[first] > LONG_UNIT:
            inner = [
                i
                for i in range(first + 1, last)
                if _BULLET.match(lines[i])
                or (lines[i - 1].rstrip().endswith((".", ":", "?", "!")) and len(lines[i - 1].strip()) < 0.8 * full)
            ]
        else:
            inner = []
        for a, b in zip([first, *inner], [*inner, last], strict=True):
            spans.append((starts[a], min(starts[b] - 1, len(text))))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def score_text(text: str, terms: Terms) -> float:
    return sum(terms.weights[term] for term in terms_in(text, terms))


def terms_in(text: str, terms: Terms) -> set[str]:
    """The terms (stems and stemmed phrases) the text contains, read with the scan's misread words."""
    stems = tokens(read_as(text, terms.readings))
    present = set(stems)
    joined = " " + " ".join(stems) + " "
    return {term for term in terms.weights if (f" {term} " in joined if " " in term else term in present)}


@dataclass
class Extract:
    key: str
    text: str
    start: int
    end: int
    score: float
    claimed_refs: list[str] = field(default_factory=list)  # references a model says the text makes


class TriageDecision(TypedDict):
    """Where a question goes: a short reply (chat), an earlier answer (memory), or a search."""

    route: Literal["chat", "memory", "search"]
    reply: NotRequired[str]  # chat
    answer: NotRequired[str]  # memory: the earlier answer
    question: NotRequired[str]  # search: the question to search, follow-ups made whole
    follow_up_of: NotRequired[str]  # search: the earlier question this one continues


class QueryTasks(Protocol):
    """Everything the query graph's nodes ask of a reasoner."""

    name: str
    concurrency: int  # a step's calls run on up to this many threads (1: inline)
    max_figures: int  # figures of one answer described for its question (0: none)

    def usage(self) -> Usage:
        """Model calls, tokens and degraded tasks so far (all zero offline)."""

    def triage(self, question: str, history: list[dict[str, Any]]) -> TriageDecision: ...

    def decompose(self, question: str) -> list[str]: ...

    def keywords(self, question: str, terms: Terms) -> list[str]: ...

    def relevance(
        self, question: str, terms: Terms, sections: list[Section], focus: dict[str, str]
    ) -> dict[str, list[Extract]]:
        """At most 10 sections; ``focus`` maps a key to the paragraph a reference named ("(7)")."""

    def find_conflicts(
        self, passages: list[dict[str, Any]], rules: list[dict[str, Any]], kv: dict[str, Any]
    ) -> list[dict[str, Any]]:
        """Passages that disagree: {"topic", "passages": [keys], "note"}; highlighted, not resolved."""

    def summarise(self, question: str, passages: list[dict[str, Any]]) -> str: ...

    def describe_figure(self, question: str, caption: str | None, png: bytes) -> str:
        """What a figure's image shows that bears on the question ("" when nothing can be said)."""


_SYMBOL_VALUE = re.compile(
    r"(?<![\w,])(?P<name>[A-Za-zψμγ][A-Za-z0-9,]{0,4})\s?=\s?(?P<value>[-+]?\d+(?:,\d+)?)(?![\d,])"
)
_CONTEXT_WORD = re.compile(r"[a-z]{3,}")
_STATEMENT_END = re.compile(r"\.(?=\s)|\n(?=\(\d+\)|NOTE)")  # a full stop, or a numbered paragraph or NOTE begins
_FUNCTION_WORDS = frozenset(
    "the and for with from that this these those are was were been being which when where than then into onto per "
    "its their there may shall should can could must not but also each any all other such has have had".split()
)
SAME_CASE = 0.5  # share of context words two statements of a value need in common to speak of one case


@dataclass(frozen=True)
class Statement:
    """ "name = value" in a passage, with the words of its line: what the value is for."""

    name: str
    value: str
    key: str
    context: frozenset[str]


def symbol_statements(passages: list[dict[str, Any]]) -> list[Statement]:
    """Each "name = value" with the words of its sentence (of its row, in a table): what the value is for."""
    out = []
    for p in passages:
        text = p["text"]
        for m in _SYMBOL_VALUE.finditer(text):
            line_start = text.rfind("\n", 0, m.start()) + 1
            if text.startswith("|", line_start):  # a table row
                start, end = line_start, text.find("\n", m.end())
            else:
                before = [b.end() for b in _STATEMENT_END.finditer(text, 0, m.start())]
                start = before[-1] if before else 0
                after = _STATEMENT_END.search(text, m.end())
                end = after.start() if after else len(text)
            sentence = text[start : end if end >= 0 else len(text)].lower()
            name = m.group("name")
            words = {w for w in _CONTEXT_WORD.findall(sentence) if w not in _FUNCTION_WORDS and w != name.lower()}
            out.append(Statement(name, _number(m.group("value")), p["key"], frozenset(words)))
    return out


def _number(value: str) -> str:
    """ "2,0" and "2" are one value."""
    return f"{float(value.replace(',', '.')):g}".replace(".", ",")


def same_case(a: Statement, b: Statement) -> bool:
    """Two statements about the same case: their lines share most of their words ("Ce = 1,2 for
    sheltered sites" and "Ce = 1,0 for sheltered sites"). A symbol's values for different cases (the
    rows of a table, windward and leeward, another code's symbol of the same name) are not in conflict."""
    if len(a.context) < 2 or len(b.context) < 2:
        return False
    return len(a.context & b.context) / len(a.context | b.context) >= SAME_CASE


def find_conflicts(
    passages: list[dict[str, Any]], rules: list[dict[str, Any]], kv: dict[str, Any]
) -> list[dict[str, Any]]:
    """One symbol given different values for the same case in two sections; a recommended value the
    National Annex may change; values the kv store recorded as conflicting, where the passages state them
    for the same case in two documents."""
    by_name: dict[str, list[Statement]] = defaultdict(list)
    for st in symbol_statements(passages):
        by_name[st.name].append(st)
    conflicts = []
    clashing: set[str] = set()
    for name, statements in by_name.items():
        clash = {
            st
            for a in statements
            for b in statements
            if a.key != b.key and a.value != b.value and same_case(a, b)
            for st in (a, b)
        }
        if clash:
            clashing.add(name)
            by_value: dict[str, set[str]] = defaultdict(set)
            for st in clash:
                by_value[st.value].add(st.key)
            conflicts.append(
                {
                    "topic": f"{name} is given different values",
                    "passages": sorted({st.key for st in clash}),
                    "note": "; ".join(f"{name} = {v} in {', '.join(sorted(ks))}" for v, ks in sorted(by_value.items())),
                }
            )
    by_key: dict[str, set[str]] = defaultdict(set)
    for rule in rules:
        by_key[rule["key"]].add(rule.get("type") or "")
    # one flag for every passage whose value is a recommendation the National Annex may change, in
    # the answer's order (not one copy of the same note per passage)
    flagged = {
        key for key, types in by_key.items() if "recommended-value" in types and {"ndp", "national-annex"} & types
    }
    recommended = [key for key in dict.fromkeys([p["key"] for p in passages] + sorted(flagged)) if key in flagged]
    if recommended:
        conflicts.append(
            {
                "topic": "recommended value vs national choice",
                "passages": recommended,
                "note": "the value given is a recommendation; the National Annex may set another",
            }
        )

    def across_documents(term: str, sources: list[str]) -> bool:
        return term in clashing and len({document_of(src) for src in sources}) > 1

    return conflicts + recorded_conflicts(kv, passages, across_documents)


SUMMARY_VALUES = 6
SUMMARY_OPEN_PASSAGES = 3  # the first key passages' values are quoted whatever their words
SUMMARY_TABLE_ROWS = 6  # a table pointed to with no more rows than this is given whole after the pointer
SUMMARY_PER_PASSAGE = 3  # statements from one later passage (a list of tolerances sharing one word with the question)
_VALUE = re.compile(
    r"\d+(?:[.,]\d+)?\s?(?:kN/m[23]?|kN|N/mm2|N/m[23]?|kg/m3|m/s|km/h|mm|m|°C|°|%|min|years?)(?![\w/])"
    # a symbol given a number; a summation's running index ("i=1" under a sum sign) is not a value
    r"|(?![ij]\s?=\s?\d(?![.,\d]))[A-Za-zψμγα][\w,]{0,5}\s?=\s?[-+]?\d|recommended values? (?:is|are|of)",
)
_SENTENCE_END = re.compile(r"(?<=[.;:])\s+(?=[A-Z(])")
# a table's or figure's caption ("Figure 4.2 - The exposure factor for co = 1,0"): it names what is
# drawn or tabled, its numbers the case drawn; a sentence that opens with one ("Table 4.1 gives") goes on
_CAPTION_LINE = re.compile(
    r"(?:Table|TABLE|Figure|FIGURE|Fig\.|FIG\.)\s+[A-Z]?\d[\w.\-]*(?:\s*[-–—:.]\s*|\s+)(?=[A-Z(])"
)


def value_statements(text: str) -> list[str]:
    """Sentences and table rows of ``text`` that state a value, white space collapsed (a caption is
    not one, though it gives the case drawn: "Figure 4.2 - ... for co = 1,0"). A sentence runs
    on over a printed line break when the next line carries on in lower case ("... above 1 500 m,
    unless" / "otherwise specified."); a line that starts otherwise (a symbol's definition, a formula)
    stands alone."""
    out = []
    for line in continued_lines(text):
        if line.startswith("|"):
            pieces = [" | ".join(c for c in table_cells(line) if c)]
        else:
            pieces = [x for x in _SENTENCE_END.split(line) if not _CAPTION_LINE.match(x)]
        out += [" ".join(x.split()) for x in pieces if _VALUE.search(x) and len(x.split()) >= 2]
    return [x[:300] for x in out]


# an item's mark or a scan's debris before a row's label; not a sign that means something ("< 3 days")
_LABEL_DEBRIS = re.compile(r"^[\s\-–•▪:;.,~_'`]+")
# a table's note: its mark ("a", "1)", "*"), then the word it notes
_NOTE_OPENING = re.compile(r"^(?:[a-h]|\d{1,2}\)|[*†‡])\.? ([A-Z][a-z]+)\b", re.M)
_NOTE_MARK = re.compile(r"\s+[a-hD8*†‡]$")  # a note's mark closing a label, or a scan's reading of one
_POINTS_TO_TABLE = re.compile(
    r"\b(?:given|set out|shown|listed|found)\s+in\s+Table\s+([A-Z]?\d{1,2}(?:[.\-]\d{1,2}){0,2}[a-z]?)"
)
_CAPTION_CELL = re.compile(r"\s*(?:Table|Figure)\s+[A-Z0-9]")


def noted_words(text: str) -> set[str]:
    """The words a table's notes open on after their mark ("a Windswept topography ..."), lower case."""
    return {m.group(1).lower() for m in _NOTE_OPENING.finditer(text)}


def row_label(cell: str, noted: set[str]) -> tuple[str, bool]:
    """A row's label as the summary gives it, from its first cell: a scan's debris before it dropped
    ("- concrete box girder"; ":;;.; 3 months"), and the mark closing it of a note under the table
    that speaks of the row (``noted``: "Sheltered e" -> "Sheltered"); also whether a note speaks of it."""
    label = _LABEL_DEBRIS.sub("", cell)
    if label.split() and label.split()[0].lower() in noted:
        return _NOTE_MARK.sub("", label), True
    return label, False


def table_cells(row: str) -> list[str]:
    """A markdown table row's cells, white space stripped."""
    return [c.strip() for c in row.strip().strip("|").split("|")]


# a table cell that is a value: "420", "1 500", "2,0 to 3,0", "-0,2", "10%", "45 days", "L/600"
_VALUE_CELL = re.compile(
    r"(?:[~±+\-–−]?\s?\d[\d ]*(?:[.,]\d+)?(?:\s?(?:to|-|–)\s?\d[\d ]*(?:[.,]\d+)?)?"
    r"\s?(?:%|°C?|[A-Za-z]{1,5}(?:/[A-Za-z]{1,3})?\d?)?|[A-Za-z]/\d+)"
    r"(?:\s?\((?:see\s)?notes?(?:\s?\d{1,2})?\))?",  # "12 (see Note 6)": a value and the note on it
    re.I,
)


def asked_rows(text: str, wanted: set[str] | None) -> list[str]:
    """A table's rows whose label (first cell) names a word of the question the column heads do not
    ("Roads in urban area" for a question on an urban road; not every row of a column "Category of
    road"), each value with its column's head: "Roads in urban area: Force Fdx [kN] 500; Force Fdy
    [kN] 250". The caption's words may name a row ("Imposed loads on floors, balconies and stairs").
    ``wanted`` None: every row of values."""
    rows = [table_cells(ln) for ln in text.split("\n") if ln.startswith("|")]
    rows = [cells for cells in rows if any(c.strip("-: ") for c in cells)]  # not the |---| line

    def data(cells: list[str]) -> bool:
        """A label and values, most of them numbers ("Office | 420 | 511", "Brick veneer | L/600"); not
        a row of column heads ("Angle of pitch of roof a | 0° < a < 30° | ...")."""
        filled = [c for c in cells if c]
        if not filled or not _LONG_WORD.search(filled[0]) or len(filled) < 2:
            return False
        return 2 * sum(1 for c in filled[1:] if _VALUE_CELL.fullmatch(c)) >= len(filled) - 1

    first = next((n for n, cells in enumerate(rows) if data(cells)), None)
    if first is None:
        return []
    heads = rows[:first]
    head_words = set(tokens(" ".join(c for cells in heads for c in cells)))
    asked = None if wanted is None else wanted - head_words
    first_head = next(((r, c) for r, cells in enumerate(heads) for c, cell in enumerate(cells) if cell), None)

    def head(label: int, after: int, col: int) -> str:
        """A value's column heads: the cells over its column or, where there are none, in each row of
        heads that divides the columns right of the labels (two heads or more there), the nearest to its
        left after the row's previous cell: a head printed over several columns stands over the first
        ("Top warmer than bottom | Bottom warmer than top" over the two halves of a table). A lone head
        there names the labels' column, set off to the right ("| Material |" over "Stainless steel"),
        and a row naming the table is its caption run on."""
        over = [cells[col] for cells in heads if col < len(cells) and cells[col]]
        if over:
            return " ".join(over)
        # With no head over the labels, the first head is theirs, set off to the right ("| | Products |
        # Density |" over "| eggs | | 4,0 |")
        shifted = not any(c for cells in heads for c in cells[: label + 1])
        skip = first_head if shifted else None
        spanning = [
            next((cells[c] for c in range(min(col, len(cells) - 1), after, -1) if cells[c] and (r, c) != skip), "")
            for r, cells in enumerate(heads)
            if sum(1 for c in cells[label + 1 :] if c) >= 2 and not any(_CAPTION_CELL.match(c) for c in cells)
        ]
        return " ".join(cell for cell in spanning if cell)

    # The words the table's notes open on after their mark ("a Windswept topography ..."): a row so
    # labelled carries that mark, which a scan may read as another character, in its label ("Sheltered
    # e") or in a cell of its own under no head ("| Windswept | 8 | 0,8 |"); it is not a value.
    noted = noted_words(text)
    out = []
    for cells in rows[first:]:
        filled = [(col, c) for col, c in enumerate(cells) if c]
        if not data(cells) or (asked is not None and not asked & set(tokens(filled[0][1]))):
            continue
        label, marked = row_label(filled[0][1], noted)
        if marked:
            at = filled[0][0]
            filled = [filled[0], *((col, c) for col, c in filled[1:] if len(c) > 1 or head(at, at, col))]
        cols = [col for col, _ in filled]
        said = "; ".join(f"{head(cols[0], cols[i], col)} {c}".strip() for i, (col, c) in enumerate(filled[1:]))
        row = f"{label}: {said}"
        if sum(1 for ch in row if _PLAIN.match(ch)) >= 0.9 * len(row):
            out.append(" ".join(row.split())[:300])
    return out


_DEFINES = re.compile(r"\S{1,8}\s+(?:is|are|=)\s")  # "k is a coefficient ...": a symbol's line


_PLAIN = re.compile(r"[\w\s.,;:()%°/=+\-–'’|]")
_LONG_WORD = re.compile(r"[A-Za-z]{3,}")


def legible(piece: str) -> bool:
    """Text a reader can take in: words, numbers and ordinary punctuation (not a scan's debris,
    "~±-f-r--~_ ~T, ~ T I ..,-----'--y-----.")."""
    plain = sum(1 for ch in piece if _PLAIN.match(ch))
    return plain >= 0.95 * len(piece) and len(_LONG_WORD.findall(piece)) >= 3 and "---" not in piece


# a paragraph, NOTE, item, row, the "where:" over an expression's symbols
_OPENS = re.compile(r"\s*(?:\(\s?\d{1,2}\s?\)|NOTE\b|[a-h]\)|[-–•▪■●◦]\s|\||where:?\s*$)")
_CARRIES_ON = re.compile(
    r"\b(?:and|or|of|to|the|a|an|for|with|in|on|by|from|between|than|at|whose|which|that|is|are|be|may|should|shall"
    r"|this|these|its|their|each|such|per|into|within|under)\s*$"
)
# a heading or caption's opening: "4.2", "A.1", "Table 7.1", "Annex B"
_NUMBERED = re.compile(r"\s*(?:[A-Z]?\d+(?:[.\-]\d+)*\b|[A-Z]\.\d+|(?:Table|Figure|Section|Annex|Appendix)\s+[A-Z0-9])")
_ENDS_IN_NAME = re.compile(r"(?:\b[A-Z][\w\-]*|\([^()]*)$")  # "... in the National" / "(informative"


def continued_lines(text: str) -> list[str]:
    """Printed lines joined into the sentences they carry: a line runs on into the next when the next
    carries on in lower case, or when it ends in a word no sentence ends in, or in a comma and the next
    does not start with a capital ("... wind directions 0°," / "90° and 180°."); a paragraph, NOTE,
    list item, table row or a symbol's definition starts anew, except that a line ending in a word no
    sentence ends in runs on into what reads like a definition ("... and whose" / "height is less than
    4 times the in-wind depth, ..."). A full line of running text that ends in a name or inside brackets
    runs on into a capital ("... defined in the National" / "Annex. The ..."; "(informative" / "Annex A)").
    A word hyphenated over the line end is joined with its hyphen ("non-" / "structural"). Value
    statements are read from these; the brief quotes them."""
    printed = text.split("\n")
    full = _full_length(printed, fewest=4) or 10**6  # too few lines to tell: no line is full
    lines: list[str] = []
    wrapped = False  # the last printed line was a full one, ending in a name ("... in the National")
    for line in printed:
        if lines and not lines[-1].startswith("|") and not lines[-1].rstrip().endswith((".", ":")):
            carries_on = _CARRIES_ON.search(lines[-1]) is not None or wrapped
            fresh = _OPENS.match(line) or (_DEFINES.match(line) and not carries_on)
            after_comma = lines[-1].rstrip().endswith(",") and not line[:1].isupper()
            if not fresh and (line[:1].islower() or after_comma or carries_on):
                lines[-1] += line if lines[-1].endswith("-") and line[:1].isalpha() else " " + line
                wrapped = _wraps(line, full)
                continue
        lines.append(line)
        wrapped = _wraps(line, full)
    return lines


def _wraps(line: str, full: float) -> bool:
    """A full printed line of running text that ends in a name or inside brackets: the name goes on
    ("... defined in the National" / "Annex."; "(informative" / "Annex A)")."""
    stripped = line.strip()
    return len(stripped) >= 0.8 * full and not _NUMBERED.match(stripped) and _ENDS_IN_NAME.search(stripped) is not None


_ENUMERATION = re.compile(r"\(\s*(?:[a-h]|i{1,3}|iv|vi{0,3}|[1-9])\s*\)\s*")
_MODAL = r"(?:is|are|do|does|did|can|could|should|must|shall|will|would|may)"  # a verb a question opens with
_ASKING = rf"(?:which|what|how|whether|where|when|who|why|{_MODAL})"
_AUXILIARY = rf"(?:{_MODAL}|was|were|might|has|have|had)"
# after a bare comma, a relative clause, not a question: "..., which are only a week old", "..., where the
# table gives a range" (but "..., which load applies?", "..., where do I find it?")
_RELATIVE = rf"(?:which|who|whose)\s+{_AUXILIARY}(?:n['’]t)?\b|(?:where|when)\s+(?!{_AUXILIARY}\b)"
_COORDINATED = re.compile(
    rf"\s*(?:,\s*(?:and|or|but)|,(?!\s*(?:{_RELATIVE}))|;|\s+(?:and|or|but))\s+(?={_ASKING}\b)", re.I
)
_ASIDE = re.compile(r"^\s*(?:what|how) about\b", re.I)
_ANAPHOR = re.compile(r"\b(?:this|that|these|those|it|they|them|its|their|so)\b", re.I)


_SENTENCE_END = re.compile(r"(?<=[?])\s+|(?<=\.)\s+(?=[A-Z]|\([a-z\d]{1,4}\)\s)")  # "... high. (a) Which ..."


def _clauses(sentence: str) -> list[str]:
    """A sentence's enumerated parts, each prefixed by the words before the first mark; else the items
    of a list after a colon that semicolons part, where the words before the colon ask ("what does it
    require for: the slab; the mat; and the footings?"), each prefixed by those words; else its
    coordinated questions; else the sentence."""
    marks = list(_ENUMERATION.finditer(sentence))
    if len(marks) >= 2:
        stem_words = sentence[: marks[0].start()].strip(" ,:;")
        items = []
        for i, mark in enumerate(marks):
            end = marks[i + 1].start() if i + 1 < len(marks) else len(sentence)
            items.append(f"{stem_words} {_item(sentence[mark.end() : end])}".strip())
        return items
    lead, colon, listed = sentence.partition(":")
    if colon and ";" in listed and re.search(rf"\b{_ASKING}\b", lead, re.I):
        items = [_item(item) for item in listed.split(";")]
        return [f"{lead.strip()} {item}" for item in items if item]
    return [p.strip(" ,;") for p in _COORDINATED.split(sentence) if p.strip(" ,;")]


def _item(text: str) -> str:
    """One item of a list, without the "and" / "or" and the marks that join it to the next."""
    return re.sub(r"^(?:and|or)\s+", "", re.sub(r"[\s,;]*(?:and|or)?[\s,;]*$", "", text.strip()))


def _leans_on_context(part: str) -> bool:
    content = [w for w in question_words(part) if _content(w)]
    return not content or _ANAPHOR.search(part) is not None or _ASIDE.match(part) is not None


class OfflineQueryTasks:
    """The deterministic reasoner: term rules over the text, no model, no network."""

    name = "offline"
    concurrency = 1
    max_figures = 0  # it cannot look at images
    threshold = 1.8  # one rare term (idf >= 1.8) or two common ones

    def usage(self) -> Usage:
        return offline_usage()

    def describe_figure(self, question: str, caption: str | None, png: bytes) -> str:
        return ""

    def triage(self, question: str, history: list[dict[str, Any]]) -> TriageDecision:
        if GREETING.match(question):
            return {
                "route": "chat",
                "reply": "Hello. Ask me about the design codes in the store, for example "
                "'What imposed load applies to office floors?'",
            }
        for turn in reversed(history):
            if turn.get("question", "").strip().lower() == question.strip().lower() and turn.get("answer"):
                return {"route": "memory", "answer": turn["answer"]}
        if history and (FOLLOW_UP.match(question) or len(question.split()) <= 5):
            previous = history[-1]["question"]
            return {"route": "search", "question": f"{previous} {question}", "follow_up_of": previous}
        return {"route": "search", "question": question}

    def decompose(self, question: str) -> list[str]:
        """Standalone sub-questions: the question's sentences, its enumerated parts ("(a) ... and (b)
        ...", each with the words before the first mark) and its coordinated questions ("..., and
        which ..."). A part that leans on another (a pronoun, or no content word: "what
        part of the code should I refer to?") carries the nearest earlier self-contained part in
        brackets, so that it can be searched on its own."""
        sentences = [p.strip() for p in _SENTENCE_END.split(question) if p.strip()]
        parts = [c for s in sentences for c in _clauses(s) if len(c.split()) >= 3]
        if len(parts) <= 1:
            return [question]
        out: list[str] = []
        topic: str | None = None
        for part in parts:
            dependent = _leans_on_context(part)
            out.append(f"{part.rstrip('?. ')} ({topic.rstrip('?. ')})" if dependent and topic else part)
            if topic is None or not dependent:
                topic = part
        return out

    def keywords(self, question: str, terms: Terms) -> list[str]:
        """A few rare terms: phrases first, then words; common words would match everything. A term
        with a word no section has ("flour mill" where no code names a mill) matches nothing and is
        left out: rarest of all, it would take the place of one that finds something. A picked
        phrase's rare word is searched on its own too (the phrase may occur nowhere: "bagged flour"
        where a table lists "flour ... bagged"), a phrase whose word is picked is not."""
        picked: list[str] = []
        for term in sorted(terms.weights, key=lambda t: (-terms.weights[t], t)):
            if terms.weights[term] < 1.0 or term in terms.unseen:
                continue
            if " " in term and any(word in picked for word in term.split()):
                continue
            picked.append(term)
            if len(picked) == 6:
                break
        return picked

    def relevance(
        self, question: str, terms: Terms, sections: list[Section], focus: dict[str, str]
    ) -> dict[str, list[Extract]]:
        out: dict[str, list[Extract]] = {}
        for section in sections:
            text = section["text"]
            spans = units(text)
            scores = [score_text(text[a:b], terms) for a, b in spans]
            keep = {i for i, s in enumerate(scores) if s >= self.threshold}
            para = focus.get(section["key"])
            if para and para != "*":
                keep |= {i for i, (a, b) in enumerate(spans) if re.match(r"\s*" + re.escape(para), text[a:b])}
            if para == "*" or (section["kind"] in OBJECT_KINDS and (keep or para)):
                keep = set(range(len(spans)))  # a relevant or cited table or figure, a named section: whole
            if not keep:
                continue
            if len(spans) <= 4:
                keep = set(range(len(spans)))  # a short section is read whole
            # Context: the heading line, and the unit after each relevant one (its NOTE, its sequel).
            keep.add(0)
            for i in list(keep):
                if i + 1 < len(spans):
                    keep.add(i + 1)
            out[section["key"]] = _merge_spans(section["key"], text, [spans[i] for i in sorted(keep)], scores, spans)
        return out

    def find_conflicts(
        self, passages: list[dict[str, Any]], rules: list[dict[str, Any]], kv: dict[str, Any]
    ) -> list[dict[str, Any]]:
        return find_conflicts(passages, rules, kv)

    def summarise(self, question: str, passages: list[dict[str, Any]]) -> str:
        """The key passages' sentences and table rows that state a value (a number with a unit, a
        symbol = number, a recommended value), each with its clause; no invented text. First the rows
        of their tables whose label names what the question asks about (:func:`asked_rows`), each value
        with its column's head. Past the first ``SUMMARY_OPEN_PASSAGES`` a statement must share a word
        with the question: the first passages are what the ranking found most to the point, and their
        values are the answer even in their own words ("Ct = 1,0" in the clause on snow loads on roofs)."""
        if not passages:
            return ""
        key = [p for p in passages if p.get("tier") == "key"] or passages[:10]
        wanted = {stem(w) for w in question_words(question) if w.lower() not in STOPWORDS and len(w) > 2}
        asked: list[tuple[dict[str, Any], str]] = []  # table rows the question names, before all else
        stated: list[tuple[dict[str, Any], str]] = []
        for i, p in enumerate(key):
            if p.get("kind") == "figure":  # a drawing's labels, read by OCR, are not sentences
                continue
            rows = asked_rows(p["text"], wanted) if p.get("kind") == "table" else []
            asked += [(p, row) for row in rows]
            labels, noted = {row.split(": ", 1)[0] for row in rows}, noted_words(p["text"])
            for piece in value_statements(p["text"]):
                if " | " in piece and row_label(piece.split(" | ", 1)[0], noted)[0] in labels:
                    continue  # that row is given above with its column heads
                bears = i < SUMMARY_OPEN_PASSAGES or wanted & set(tokens(piece))
                if bears and legible(piece):
                    stated.append((p, piece))
        # A statement that points to a short key table of its document ("The recommended values are
        # given in Table 5.1") is followed by that table's rows, unless the question named some of them.
        tables = {(p["document"], p["section"]): p for p in key if p.get("kind") == "table"}
        given = {q["key"] for q, _ in asked}  # tables whose rows are given already
        whole: set[str] = set()  # a pointed table's rows, one line whatever the passage has given
        pointed: list[tuple[dict[str, Any], str]] = []
        for p, piece in stated:
            pointed.append((p, piece))
            for number in _POINTS_TO_TABLE.findall(piece):
                table = tables.get((p["document"], f"Table {number}"))
                if table is None or table["key"] in given:
                    continue
                rows = asked_rows(table["text"], None)
                if 0 < len(rows) <= SUMMARY_TABLE_ROWS:
                    given.add(table["key"])
                    whole.add(line := " / ".join(rows))
                    pointed.append((table, line))
        found: list[str] = []
        seen: set[str] = set()
        opening = {p["key"] for p in key[:SUMMARY_OPEN_PASSAGES]}
        per: Counter[str] = Counter()  # statements taken from each later passage
        for n, (p, piece) in enumerate(asked + pointed):
            late = n >= len(asked) and p["key"] not in opening and piece not in whole
            if piece in seen or len(found) == SUMMARY_VALUES or (late and per[p["key"]] == SUMMARY_PER_PASSAGE):
                continue
            seen.add(piece)
            per[p["key"]] += late
            said = piece[m.end() :] if (m := _BULLET.match(piece)) else piece  # the summary's list bullets it
            found.append(f"- {said} ({cited(p['document'], p['section'], p.get('title'))}, p. {p['page']})")
        docs = Counter(p["document"] for p in passages)
        first = list(dict.fromkeys(p["document"] for p in passages))[:4]  # in the order the answer reads them
        lead = ", ".join(cited(p["document"], p["section"], p.get("title")) for p in key[:6])
        head = (
            f"{len(passages)} passages from {', '.join(f'{d} ({docs[d]})' for d in first)}"
            f"{' and others' if len(docs) > len(first) else ''} bear on this question; read first: {lead}."
        )
        return "\n".join([head, *(["", "Values stated in them:", *found] if found else [])])


def _merge_spans(
    key: str, text: str, kept: list[tuple[int, int]], scores: list[float], spans: list[tuple[int, int]]
) -> list[Extract]:
    """Adjacent kept units become one extract; each extract is verbatim text of the section."""
    out: list[Extract] = []
    index = {span: i for i, span in enumerate(spans)}
    for a, b in kept:
        s = scores[index[(a, b)]]
        if out and text[out[-1].end : a].strip() == "":
            out[-1] = Extract(key, text[out[-1].start : b].strip(), out[-1].start, b, max(out[-1].score, s))
        else:
            out.append(Extract(key, text[a:b].strip(), a, b, s))
    return [e for e in out if e.text]
