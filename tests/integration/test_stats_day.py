"""``brief stats`` counts a day's published versions whoever published them (runs, answers, marks),
says that its status and seconds are those of the day's last run, and fits 80 columns without
cutting a cell."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

from rich.cells import cell_len

from storage.events import new_event
from tests.cli import brief
from tests.factories import DAY, T0, run_event, store_at

FIRST_RUN = "11111111-1111-4111-8111-111111111111"
LAST_RUN = "22222222-2222-4222-8222-222222222222"


def published(version: int, run_id: str, minutes: int):
    return new_event(
        "brief.published",
        {
            "brief_date": DAY.isoformat(),
            "version": version,
            "items": 4,
            "stories": ["s-1"],
            "files": {"md": "briefs/2025-08-06.md"},
            "content_hash": f"h{version}",
        },
        brief_date=DAY,
        run_id=run_id,
        subject_id=f"brief-{DAY}",
        produced_by="tests",
        occurred_at=T0 + timedelta(minutes=minutes),
    )


def day_at_v7(tmp_path: Path, last_status: str = "run.finished") -> Path:
    """Two runs of the day (v1, then v2, the last one taking 1234.5 s), then five editor's acts."""
    store = store_at(str(tmp_path / "store"))
    events = [
        run_event("run.started", FIRST_RUN, at=T0),
        published(1, FIRST_RUN, 1),
        run_event("run.finished", FIRST_RUN, at=T0 + timedelta(minutes=2)),
        run_event("run.started", LAST_RUN, at=T0 + timedelta(hours=1)),
        published(2, LAST_RUN, 61),
        run_event(last_status, LAST_RUN, at=T0 + timedelta(hours=1, seconds=1234.5)),
    ]
    events += [published(v, f"review-2025080{v}T1000", 120 + v) for v in range(3, 8)]
    store.append(events)
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n\n[[sources]]\nname = "labnotes"\nurl = "https://labnotes.example/feed"\n'
    )
    return config


def test_versions_are_the_days_published_versions_and_secs_are_said_to_be_the_last_runs(
    tmp_path: Path,
) -> None:
    config = str(day_at_v7(tmp_path))
    rows = [
        json.loads(line)
        for line in brief("stats", "--config", config, "--format", "jsonl").stdout.splitlines()
    ]
    assert [(r["runs"], r["versions_published"], r["last_run_id"]) for r in rows] == [(2, 7, LAST_RUN)]
    assert rows[0]["last_run_s"] == 1234.5  # the last run's, and named so

    shown = brief("stats", "--config", config, env={"COLUMNS": "80"})
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert all(cell_len(line) <= 80 for line in lines), shown.stdout
    assert "secs are of each day's last run" in shown.stdout
    assert re.search(r"^2025-08-06 +2 +0 completed .* 7 +0 +1234\.5$", shown.stdout, re.MULTILINE), (
        shown.stdout
    )
    assert "…" not in shown.stdout


def test_a_table_too_wide_for_the_terminal_shows_each_day_whole(tmp_path: Path) -> None:
    config = str(day_at_v7(tmp_path, last_status="run.cancelled"))
    shown = brief("stats", "--config", config, env={"COLUMNS": "50"})
    assert shown.returncode == 0, shown.stderr
    assert all(cell_len(line) <= 50 for line in shown.stdout.splitlines()), shown.stdout
    assert "…" not in shown.stdout
    flowed = " ".join(shown.stdout.split())
    for fact in ("runs 2", "failed 0", "status cancelled", "versions 7", "secs 1234.5"):
        assert fact in flowed, shown.stdout


def duplicate(article: str, reason: str, run_id: str):
    return new_event(
        "article.duplicate_detected",
        {
            "article_id": article,
            "duplicate_of": f"{article}-first",
            "reason": reason,
            "first_brief_date": "2025-08-05",
        },
        brief_date=DAY,
        run_id=run_id,
        subject_id=article,
        produced_by="tests",
        occurred_at=T0 + timedelta(minutes=61),
    )


def test_a_days_error_is_its_last_runs_and_articles_of_earlier_days_are_not_its_duplicates(
    tmp_path: Path,
) -> None:
    """A run that failed, then one that completed: the day has no error to show (the earlier one is
    in ``brief replay --projection runs``). Its feeds held six articles briefed on an earlier day and
    nothing new: 0 items, 0 duplicates (they are counted apart, as ``earlier``)."""
    config = day_at_v7(tmp_path, last_status="run.finished")
    store = store_at(str(tmp_path / "store"))
    failed = run_event("run.failed", FIRST_RUN, at=T0 + timedelta(minutes=3), message="Execution was aborted")
    store.append([failed, *(duplicate(f"art-{n}", "briefed_before", LAST_RUN) for n in range(6))])
    rows = [
        json.loads(x)
        for x in brief("stats", "--config", str(config), "--format", "jsonl").stdout.splitlines()
    ]
    assert [(r["last_status"], r["last_error"]) for r in rows] == [("completed", None)]
    assert [(r["collected"], r["duplicates"], r["earlier"]) for r in rows] == [(0, 0, 6)]
    shown = brief("stats", "--config", str(config), env={"COLUMNS": "80"})
    assert shown.returncode == 0, shown.stderr
    assert "aborted" not in shown.stdout and "error" not in shown.stdout, shown.stdout
    assert re.search(r"^2025-08-06 +2 +1 completed +0 +0 +0 ", shown.stdout, re.MULTILINE), shown.stdout
    assert "dups: copies among them" in " ".join(shown.stdout.split())

    last_fails = day_at_v7(tmp_path / "again", last_status="run.failed")  # the last run's own error shows
    said = brief("stats", "--config", str(last_fails), env={"COLUMNS": "80"}).stdout
    assert "error of each day's last run:" in said and "it broke" in said, said
