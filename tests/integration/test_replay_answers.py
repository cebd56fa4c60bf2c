"""What ``brief replay`` says of a time or a version that has nothing: one line on what was
written by then (no empty table before it), no brief published for the date (not "no version N");
and what a command prints to a pipe has no trailing spaces."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli import brief
from tests.factories import collected, run_event, store_at

RUN = "33333333-3333-4333-8333-333333333333"


@pytest.fixture
def config(tmp_path: Path) -> str:
    """A day with two articles collected by one run, and no brief published."""
    store_at(str(tmp_path / "store")).append(
        [run_event("run.started", RUN), collected(1, run_id=RUN), collected(2, run_id=RUN)]
    )
    path = tmp_path / "brief.toml"
    path.write_text(
        '[storage]\nroot = "store"\n\n[[sources]]\nname = "example"\nurl = "https://e.example/feed"\n'
    )
    return str(path)


def test_a_time_before_the_day_was_written_says_so_without_an_empty_table(config: str) -> None:
    done = brief("replay", "--config", config, "--date", "2025-08-06", "--as-of", "2000-01-01T00:00:00Z")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "articles of 2025-08-06 as of 2000-01-01T00:00:00+00:00: 0 rows"
    assert lines[1].startswith("Nothing of 2025-08-06 was written by then"), done.stdout
    assert not any(ch in done.stdout for ch in "┏┃└"), done.stdout  # no table drawn


def test_a_version_of_a_date_without_a_brief_says_none_is_published(config: str) -> None:
    done = brief("replay", "--config", config, "--date", "2025-08-06", "--as-of", "v3")
    assert done.returncode == 2
    assert done.stderr.startswith("error: --as-of v3: no brief is published for 2025-08-06;"), done.stderr
    assert "no version" not in done.stderr


def test_piped_output_has_no_trailing_spaces(config: str) -> None:
    for args in (["replay", "--date", "2025-08-06"], ["stats"], ["events", "--limit", "0"]):
        done = brief(*args, "--config", config, env={"COLUMNS": "80"})
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip(), args
        padded = [line for line in done.stdout.splitlines() if line != line.rstrip()]
        assert padded == [], (args, padded)
