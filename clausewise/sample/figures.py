"""The sample's figures as vector drawings; ``text.json`` names them through :data:`DRAWINGS`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import pymupdf


class Pen(Protocol):
    """What a drawing needs of the typesetter: labels in the body font."""

    def text(self, x: float, y: float, s: str, *, bold: bool = ..., size: float = ...) -> None: ...

    def text_centred(self, x_mid: float, y: float, s: str, *, bold: bool = ..., size: float = ...) -> None: ...

    def text_right(self, x_right: float, y: float, s: str, *, bold: bool = ..., size: float = ...) -> None: ...


Drawing = Callable[[pymupdf.Page, pymupdf.Rect, Pen], None]

BLACK = (0, 0, 0)


def _arrow_down(page: pymupdf.Page, x: float, y0: float, y1: float) -> None:
    page.draw_line((x, y0), (x, y1), color=BLACK, width=0.8)
    page.draw_polyline(
        [(x - 3, y1 - 6), (x, y1), (x + 3, y1 - 6)],
        color=BLACK,
        fill=BLACK,
        closePath=True,
        width=0.5,
    )


def draw_figure_5_1(page: pymupdf.Page, area: pymupdf.Rect, w: Pen) -> None:
    """Figure 5.1: a shed roof under leaf load (a) and the shape coefficient against the pitch (b)."""
    black = BLACK
    # (a) left part: a shed with a slightly pitched roof and the leaf load on it
    gx0, gx1 = area.x0 + 20, area.x0 + 190
    ground = area.y0 + 150
    wall_l = (gx0 + 20, ground)
    wall_r = (gx1 - 20, ground)
    eave_l = (gx0 + 20, ground - 70)
    eave_r = (gx1 - 20, ground - 55)
    page.draw_line((gx0, ground), (gx1, ground), color=black, width=1.2)
    for i in range(9):  # hatching of the ground
        x = gx0 + 6 + i * 19
        page.draw_line((x, ground), (x - 6, ground + 6), color=black, width=0.5)
    page.draw_line(wall_l, eave_l, color=black, width=1.2)
    page.draw_line(wall_r, eave_r, color=black, width=1.2)
    page.draw_line((eave_l[0] - 8, eave_l[1] - 1.6), (eave_r[0] + 8, eave_r[1] + 1.6), color=black, width=1.6)
    page.draw_rect(pymupdf.Rect(gx0 + 75, ground - 40, gx0 + 95, ground), color=black, width=0.6)  # door
    # uniformly distributed leaf load: a band of arrows
    load_top = eave_l[1] - 40
    page.draw_line((eave_l[0], load_top), (eave_r[0], load_top), color=black, width=0.6)
    n = 6
    for i in range(n):
        x = eave_l[0] + i * (eave_r[0] - eave_l[0]) / (n - 1)
        y_roof = eave_l[1] + (eave_r[1] - eave_l[1]) * (x - eave_l[0]) / (eave_r[0] - eave_l[0])
        _arrow_down(page, x, load_top, y_roof - 3)
    w.text((eave_l[0] + eave_r[0]) / 2 - 30, load_top - 6, "s = \u03bc \u00b7 Ce \u00b7 sk", size=9)
    w.text(eave_r[0] + 6, eave_r[1] - 10, "\u03b1", size=10)
    w.text(gx0 + 40, ground + 22, "a) shed roof", size=9)

    # (b) right part: plot of mu against the roof pitch alpha
    px0, py0 = area.x0 + 265, area.y0 + 150  # origin
    pw, ph = 160.0, 110.0
    page.draw_line((px0, py0), (px0 + pw + 10, py0), color=black, width=0.8)  # alpha axis
    page.draw_line((px0, py0), (px0, py0 - ph - 10), color=black, width=0.8)  # mu axis
    page.draw_polyline([(px0 + pw + 4, py0 - 3), (px0 + pw + 10, py0), (px0 + pw + 4, py0 + 3)], color=black, width=0.8)
    page.draw_polyline([(px0 - 3, py0 - ph - 4), (px0, py0 - ph - 10), (px0 + 3, py0 - ph - 4)], color=black, width=0.8)

    def pt(alpha: float, mu: float) -> tuple[float, float]:
        return (px0 + alpha / 60.0 * (pw - 20), py0 - mu / 1.0 * (ph - 10))

    for a, label in ((0, "0\u00b0"), (30, "30\u00b0"), (60, "60\u00b0")):
        x, _ = pt(a, 0)
        page.draw_line((x, py0), (x, py0 + 4), color=black, width=0.6)
        w.text_centred(x, py0 + 15, label, size=9)
    for mu, label in ((0.8, "0,8"), (1.0, "1,0")):
        _, y = pt(0, mu)
        page.draw_line((px0 - 4, y), (px0, y), color=black, width=0.6)
        w.text_right(px0 - 6, y + 3, label, size=9)
    page.draw_line(pt(30, 0), pt(30, 0.8), color=black, width=0.4, dashes="[2 2] 0")
    page.draw_polyline([pt(0, 0.8), pt(30, 0.8), pt(60, 0.0)], color=black, width=1.6)
    w.text(px0 + pw + 12, py0 + 4, "\u03b1", size=10)
    w.text(px0 - 4, py0 - ph - 14, "\u03bc", size=10)
    x_lab, y_lab = pt(32, 0.86)
    w.text(x_lab, y_lab, "\u03bc", size=9)
    w.text(px0 + 30, py0 + 32, "b) shape coefficient", size=9)


DRAWINGS: dict[str, Drawing] = {
    "figure_5_1": draw_figure_5_1,
}
