"""The Sources page's chart of new articles a day (``ops.source_health``), drawn on the server as
SVG bars with the window's first, middle and last days named on its axis."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from ops.source_health import WINDOW_DAYS

BAR_W, GAP, CHART_H = 8, 2, 32
AXIS_H = 11  # the date axis under the bars
TICKS = (0, WINDOW_DAYS // 2, WINDOW_DAYS - 1)  # the days of the window named on its axis
CHART_W = WINDOW_DAYS * (BAR_W + GAP)


@dataclass(frozen=True)
class Tick:
    """A day named on the chart's axis (``MM-DD``), under its bar."""

    day: date
    x: float
    anchor: str  # SVG text-anchor: the first day's label starts at its bar, the last ends at it

    @property
    def label(self) -> str:
        return f"{self.day:%m-%d}"


@dataclass(frozen=True)
class Bar:
    day: date
    count: int
    x: int
    y: int
    h: int


def bars(per_day: Sequence[tuple[date, int]]) -> list[Bar]:
    """A bar a day, scaled to the window's busiest day (a day with none: a 1-pixel bar)."""
    top = max((n for _, n in per_day), default=0) or 1
    out = []
    for k, (d, n) in enumerate(per_day):
        h = round((CHART_H - 2) * n / top) if n else 0
        out.append(Bar(d, n, k * (BAR_W + GAP), CHART_H - max(h, 1), max(h, 1)))
    return out


def axis(end: date) -> list[Tick]:
    """The days the chart's axis names for the window ending ``end``: its first, middle and last."""
    first = end - timedelta(days=WINDOW_DAYS - 1)
    ticks = []
    for k in TICKS:
        anchor = "start" if k == 0 else "end" if k == WINDOW_DAYS - 1 else "middle"
        x = k * (BAR_W + GAP) + {"start": 0, "middle": BAR_W / 2, "end": BAR_W}[anchor]
        ticks.append(Tick(first + timedelta(days=k), x, anchor))
    return ticks
