"""The run's shadow step line: one short line within the run's 80 columns, whatever the counts."""

from __future__ import annotations

import pytest

from ops.shadow import ROOM, said
from tasks.steps.report import RunReport

VERSION = "1a2b3c4d5e6f"


@pytest.mark.parametrize(
    ("kept", "stories", "differed", "expected"),
    [
        (18, 20, (3, 1, 2), "1a2b3c4d: 18/20 kept; 3 relevance, 1 clustering, 2 top differ"),
        (20, 20, (0, 0, 0), "1a2b3c4d: 20/20 kept, every decision as the live policy's"),
        (480, 1200, (310, 95, 10), "480/1200 kept; 310 relevance, 95 clustering, 10 top differ"),
        (48000, 120000, (31000, 9500, 10), "48000/120000 kept; 40510 decisions differ"),
    ],
)
def test_the_shadow_line_is_short_whatever_the_counts(
    kept: int, stories: int, differed: tuple[int, int, int], expected: str
) -> None:
    line = said(VERSION, kept, stories, dict(zip(("relevance", "clustering", "top"), differed, strict=True)))
    assert line == expected
    report = RunReport.__new__(RunReport)
    report.seconds, report.details = {"shadow": 12.3}, {"shadow": line}
    assert len(report.line("shadow")) <= 80 and len(line) <= ROOM
