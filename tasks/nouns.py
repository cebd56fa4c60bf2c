"""Counts as people read them: "1 question", "2 questions", "1 story", "3 stories"."""

from __future__ import annotations


def counted(n: int, one: str, many: str | None = None) -> str:
    """``n`` things, the noun singular for one: "1 mark", "2 marks", "2 stories" (``many``)."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
