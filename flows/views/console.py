"""The two consoles every command prints to: results on stdout, progress and errors on stderr.

No console markup: what is printed (feed titles, error reasons, config names such as
[storage]) is text, never Rich markup; styled words are built as Text.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

out = Console(highlight=False, soft_wrap=False, markup=False)
err = Console(stderr=True, highlight=False, markup=False)


def styled(*parts: str | tuple[str, str]) -> Text:
    """Plain strings, and ``(text, style)`` pairs for the styled words."""
    return Text.assemble(*parts)
