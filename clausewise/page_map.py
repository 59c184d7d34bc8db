"""Which PDF page holds a character offset of a section's text.

A section's ``page_map`` lists ``[offset, page]`` pairs: the text from ``offset`` on lies on ``page``
until the next pair's offset.
"""

from __future__ import annotations

from typing import Any


def page_at(page_map: list[list[int]], offset: int, default: int | None = None) -> int:
    """The page of the character at ``offset`` (the first page when the map is empty)."""
    page = page_map[0][1] if page_map else default
    for start, pno in page_map:
        if start <= offset:
            page = pno
    if page is None:
        raise ValueError("empty page map and no default page")
    return page


def pages_between(section: dict[str, Any], start: int, end: int) -> list[int]:
    """Every page the text ``section["text"][start:end]`` lies on."""
    pages = []
    page_map = section.get("page_map") or [[0, section["pages"][0]]]
    for i, (pos, page) in enumerate(page_map):
        nxt = page_map[i + 1][0] if i + 1 < len(page_map) else 1 << 30
        if pos < end and nxt > start:
            pages.append(page)
    return pages or [section["pages"][0]]
