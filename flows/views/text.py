"""Text for a person's terminal: columns counted as Rich counts them in its tables (two for a wide,
CJK glyph; ``rich.cells``), and lines broken between words, never inside one that fits on a line
of its own (the lines of ``brief trace`` and of an adoption, which are lists of lines, not tables)."""

from __future__ import annotations

import re

from rich.cells import cell_len

from tasks.nouns import counted as counted  # the views count with it from here

WIDTH = 80  # what people read fits 80 columns
RUN_ID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def short_runs(text: str) -> str:
    """``text`` with each run id in it shown by its first 8 characters (History's lines)."""
    return RUN_ID.sub(lambda m: m[0][:8], text)


def cells(text: str) -> int:
    """Columns a terminal gives ``text``: two for a wide (East Asian) character."""
    return cell_len(text)


def chunks(text: str, room: int) -> list[str]:
    """``text`` cut into pieces of at most ``room`` columns (for a link, or a word wider than a line)."""
    room = max(room, 2)  # a wide glyph needs two
    parts: list[str] = []
    current: list[str] = []
    used = 0
    for c in text:
        size = cells(c)
        if used + size > room:
            parts.append("".join(current))
            current, used = [], 0
        current.append(c)
        used += size
    return [*parts, "".join(current)] if current or not parts else parts


def wrap(
    text: str, width: int = WIDTH, indent: str = "", hanging: str | None = None, *, cut: bool = True
) -> list[str]:
    """``text`` in lines of at most ``width`` columns, broken at spaces: the first line starts with
    ``indent``, the next ones with ``hanging`` (``indent`` when not given). Only a word wider than a
    whole line is cut, by columns (text without spaces, as Chinese is written, is such a word); with
    ``cut=False`` such a word (a path, a URL) is a line of its own, whole, to be copied."""
    hanging = indent if hanging is None else hanging
    lines: list[str] = []
    line, used = indent, cells(indent)
    fresh = True  # nothing but the indent on the line yet
    for word in text.split():
        size = cells(word)
        if not cut and size > width - cells(hanging):
            lines += [line] if not fresh else []
            lines.append((hanging if lines else indent) + word)
            line, used, fresh = hanging, cells(hanging), True
            continue
        if not fresh and used + 1 + size <= width:
            line, used = f"{line} {word}", used + 1 + size
            continue
        if not fresh and size > width - cells(hanging) and width - used > 8:
            line, used = line + " ", used + 1  # wider than any line: it starts where this one ends
        elif not fresh:
            lines.append(line)
            line, used = hanging, cells(hanging)
        if size > width - used:  # wider than a whole line: cut by columns
            first = chunks(word, width - used)[0]
            lines.append(line + first)
            *whole, word = chunks(word[len(first) :], width - cells(hanging))
            lines += [hanging + part for part in whole]
            line, used, size = hanging, cells(hanging), cells(word)
        line, used, fresh = line + word, used + size, False
    if not fresh or not lines:
        lines.append(line)
    return lines
