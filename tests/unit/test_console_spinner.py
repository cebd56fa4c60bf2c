"""A step's line printed while the spinner turns takes the spinner's line, never shares it."""

from __future__ import annotations

import io

from rich.console import Console

from flows.views.console import above


def test_a_line_printed_above_the_spinner_starts_on_a_cleared_line() -> None:
    terminal = io.StringIO()  # stdout and stderr of one terminal, in the order they were written
    screen = Console(file=terminal, force_terminal=True, width=80)
    status = screen.status("starting Prefect and running the daily brief …")
    status.start()
    status._live.refresh()  # the spinner drawn at least once
    above(status, to=Console(file=terminal, force_terminal=True, width=80, highlight=False))("collect  0.3 s")
    status.stop()
    written = terminal.getvalue()
    before = written[: written.index("collect  0.3 s")]
    assert "daily brief" in before  # the spinner was there
    # what precedes the line is the spinner's line being cleared, not the spinner's text
    assert before.endswith("\x1b[2K"), repr(before[-60:])
