"""Every error line of the command line is spelled one way, ``error: …`` (lower case, as the most of
them were): none of the code's strings starts another spelling (``Error:``, ``ERROR:``), and what
the commands print for a mistake follows it. A command typed alone (``brief``, ``brief export``)
is no mistake: it prints its help, with no error line."""

from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from tests.cli import brief
from tests.conftest import REPO

SPELLED = "error:"
ANY_SPELLING = re.compile(r"(?i)^\s*error\s*:")


def string_bodies(path: Path) -> list[tuple[int, str]]:
    """The text of each string literal in ``path`` (f-strings as written), with its line."""
    found = []
    for token in tokenize.generate_tokens(io.StringIO(path.read_text()).readline):
        if token.type != tokenize.STRING:
            continue
        text = token.string.lstrip("rRbBfFuU")
        quote = text[:3] if text[:3] in ('"""', "'''") else text[:1]
        found.append((token.start[0], text[len(quote) : -len(quote)]))
    return found


def test_no_string_of_the_code_starts_an_error_line_spelled_otherwise() -> None:
    other = [
        f"{path.relative_to(REPO)}:{line}: {body[:40]!r}"
        for folder in ("flows", "ops", "tasks", "storage")
        for path in sorted((REPO / folder).rglob("*.py"))
        for line, body in string_bodies(path)
        if ANY_SPELLING.match(body) and not body.lstrip().startswith(SPELLED)
    ]
    assert other == [], f"error lines spelled other than {SPELLED!r}: {other}"


def test_the_commands_mistakes_are_spelled_one_way_and_a_command_alone_is_its_help() -> None:
    mistakes = [
        ("nosuch",),
        ("run", "--bogus"),
        ("run", "--date", "2025-13-01"),
        ("export", "nosuch"),
        ("trace",),
        ("desk", "--port", "0"),
        ("review", "--config", "/nonexistent/brief.toml"),
    ]
    for args in mistakes:
        said = brief(*args)
        assert said.returncode == 2, (args, said.stderr)
        lines = said.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(SPELLED), (args, said.stderr)
    for alone in [(), ("export",), ("policy",), ("regress",)]:
        said = brief(*alone)
        assert said.stderr.startswith("Usage: "), (alone, said.stderr)
        assert not any(ANY_SPELLING.match(line) for line in said.stderr.splitlines()), said.stderr
        assert "Commands:" in said.stderr
