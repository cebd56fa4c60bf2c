"""The two consoles every command prints to: results on stdout, progress and errors on stderr.

No console markup: what is printed (feed titles, error reasons, config names such as
[storage]) is text, never Rich markup; styled words are built as Text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from rich.console import Console as RichConsole
from rich.segment import Segment
from rich.status import Status
from rich.text import Text

TRAILING = re.compile(r"[ \t]+(?=\n|$)")


class Console(RichConsole):
    """Rich's console, whose lines end at their last character when they go to a file or a pipe
    (a table pads its cells, a wrapped line keeps the space it was broken at): a script that reads
    them, or a diff of them, sees no trailing spaces. A terminal gets them as Rich draws them."""

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        rendered = super()._render_buffer(buffer)
        return rendered if self.is_terminal else TRAILING.sub("", rendered)


out = Console(highlight=False, soft_wrap=False, markup=False)
err = Console(stderr=True, highlight=False, markup=False)


def screen_status(text: str) -> Status:
    """A spinner on stderr as it is now. A run sends ``sys.stderr`` to its log while it goes, and
    ``err`` follows ``sys.stderr``: a spinner of ``err`` would go on drawing into the log and never
    clear its line on the screen, so the first line printed after it would be glued to it."""
    screen = Console(file=err.file, highlight=False, markup=False, width=err.width if err._width else None)
    return screen.status(text)


@contextmanager
def stage(text: str) -> Iterator[None]:
    """A long step of a command: a spinner on a terminal; piped or in a log, its line once, so that
    what the command is doing shows there too (a spinner draws nothing off a terminal)."""
    if err.is_terminal:
        with err.status(text):
            yield
    else:
        err.print(text, soft_wrap=True)
        yield


def above(status: Status, soft_wrap: bool = False, to: Console | None = None) -> Callable[[str], None]:
    """Print a line on stdout (``to``) above the spinner: its line cleared first, drawn again below."""

    def show(line: str) -> None:
        status.stop()
        (to or out).print(line, soft_wrap=soft_wrap)
        status.start()

    return show


def saying(status: Status, idle: str) -> Callable[[str | None], None]:
    """The spinner's text set to what is going on now (a model loading), or back to ``idle``."""

    def say(text: str | None) -> None:
        status.update(text or idle)

    return say


def styled(*parts: str | tuple[str, str]) -> Text:
    """Plain strings, and ``(text, style)`` pairs for the styled words."""
    return Text.assemble(*parts)
