"""The sample's text: the block model and the loader of ``text.json`` (and ``companion.json``).

``text.json`` holds the cover, the foreword and the body of the fictional code of practice as data;
``companion.json``, in the same format, a second fictional code (a companion part) that cites the
first by clause and table. :data:`TEXTS` names them (``"main"``, ``"companion"``).
Every block is an object with a ``kind`` (heading, paragraph, lines, symbol, expression, table,
figure, page_break, space) and that kind's fields; a ``note`` field is a comment and is ignored.
``{designation}`` and ``{year}`` in any string are replaced by the document's designation and year.
A figure names its drawing in :data:`clausewise.sample.figures.DRAWINGS`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

from clausewise.sample.figures import DRAWINGS, Drawing

TEXT_FILE = "text.json"
TEXTS = {"main": TEXT_FILE, "companion": "companion.json"}
"""The sample texts by name: file in this package."""
DEFAULT_DESIGNATIONS = {"main": "EN 1991-9-9", "companion": "EN 1991-9-8"}
"""The designation each text is written for (the companion cites the main text as EN 1991-9-9)."""
_PLACEHOLDER = re.compile(r"\{(designation|year)\}")


@dataclass
class Heading:
    text: str
    centred: bool = False
    bold: bool = True
    gap_before: float = 10.0


@dataclass
class Paragraph:
    text: str


@dataclass
class Lines:
    """Lines written one per row, no wrapping (e.g. a list of references)."""

    lines: list[str]


@dataclass
class Symbol:
    symbol: str
    meaning: str


@dataclass
class Expression:
    formula: str
    number: str


@dataclass
class Table:
    caption: str
    header: list[str]
    rows: list[list[str]]
    col_widths: list[float]
    footnotes: list[str]


@dataclass
class Figure:
    caption: str
    height: float
    draw: Drawing


@dataclass
class PageBreak:
    pass


@dataclass
class Space:
    height: float


Block = Heading | Paragraph | Lines | Symbol | Expression | Table | Figure | PageBreak | Space

_KINDS: dict[str, type] = {
    "heading": Heading,
    "paragraph": Paragraph,
    "lines": Lines,
    "symbol": Symbol,
    "expression": Expression,
    "table": Table,
    "page_break": PageBreak,
    "space": Space,
}


@dataclass
class Cover:
    label: str
    title_lines: list[str]
    notice: str
    reference: str


@dataclass
class SampleText:
    cover: Cover
    foreword: list[Block]
    body: list[Block]


def _file(text: str) -> str:
    if text not in TEXTS:
        raise ValueError(f"unknown sample text {text!r} (one of {', '.join(TEXTS)})")
    return TEXTS[text]


@cache
def _raw_text(text: str = "main") -> str:
    return files(__package__).joinpath(_file(text)).read_text(encoding="utf-8")


def _fill(value: Any, designation: str, year: int) -> Any:
    if isinstance(value, str):
        fields = {"designation": designation, "year": str(year)}
        return _PLACEHOLDER.sub(lambda m: fields[m.group(1)], value)
    if isinstance(value, list):
        return [_fill(v, designation, year) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, designation, year) for k, v in value.items()}
    return value


def _block(raw: dict[str, Any], source: str = TEXT_FILE) -> Block:
    fields = {k: v for k, v in raw.items() if k not in ("kind", "note")}
    kind = raw.get("kind")
    if kind == "figure":
        return Figure(draw=DRAWINGS[fields.pop("drawing")], **fields)
    if kind not in _KINDS:
        raise ValueError(f"{source}: unknown block kind {kind!r}")
    return _KINDS[kind](**fields)  # type: ignore[no-any-return]


def load_text(designation: str, year: int, text: str = "main") -> SampleText:
    """A sample's cover, foreword and body for one designation and year (``text``: a name in
    :data:`TEXTS`, the main sample by default)."""
    source = _file(text)
    raw = _fill(json.loads(_raw_text(text)), designation, year)
    return SampleText(
        cover=Cover(**raw["cover"]),
        foreword=[_block(b, source) for b in raw["foreword"]],
        body=[_block(b, source) for b in raw["body"]],
    )


def sample_title(text: str = "main") -> str:
    """A sample's document title (the cover's title lines on one line)."""
    return " ".join(json.loads(_raw_text(text))["cover"]["title_lines"])
