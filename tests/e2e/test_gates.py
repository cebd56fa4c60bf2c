"""Great Expectations gates in real runs: a blocking suite fails the run, a warning suite quarantines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.conftest import REPO

FEEDS = (REPO / "tests" / "fixtures" / "feeds" / "mixed").as_uri()


def config(tmp_path: Path, articles_mode: str) -> Path:
    path = tmp_path / "brief.toml"
    path.write_text(
        f'[storage]\nroot = "store"\n[gates]\narticles = "{articles_mode}"\n'
        f'[[sources]]\nname = "mixed"\nurl = "{FEEDS}/{{date}}.xml"\non_topic = true\n'
    )
    return path


def test_a_failed_blocking_suite_fails_the_run_naming_expectation_and_rows(
    tmp_path: Path, prefect_harness: None
) -> None:
    from flows.daily import daily_brief

    cfg = config(tmp_path, "blocking")
    state = daily_brief("2025-08-06", str(cfg), return_state=True)
    assert state.is_failed()
    message = state.message
    assert "step 'gate' failed" in message and "blocking suite failed: 'articles'" in message
    assert "expect_column_values_to_match_regex(url) on 1 row: ftp://mixed.example/pub/story.txt" in message
    assert (
        "expect_column_values_to_be_between(published_at) on 1 row: https://mixed.example/2031/01/future"
        in message
    )
    store = ParquetEventStore(load_settings(str(cfg)).storage.root)
    [articles] = [
        e for e in store.read(event_types=["validation.completed"]) if e.payload["suite"] == "articles"
    ]
    assert articles.payload["success"] is False and len(articles.payload["failures"]) == 2
    assert not (Path(store.base) / "briefs" / "2025-08-06.json").exists()  # nothing published


def test_a_failed_warning_suite_quarantines_and_the_run_completes(
    tmp_path: Path, prefect_harness: None, capfd: pytest.CaptureFixture[str]
) -> None:
    from flows.daily import daily_brief

    cfg = config(tmp_path, "warning")
    result = daily_brief("2025-08-06", str(cfg))
    logged = capfd.readouterr()
    assert "Calculating Metrics" not in logged.err + logged.out  # no progress bars in the run's log
    brief = json.loads(Path(result.files["json"]).read_text())
    cited = [c["url"] for i in brief["items"] for c in i["citations"]]
    assert cited == ["https://mixed.example/2025/08/harbor-arm"]  # the ftp item was quarantined
    store = ParquetEventStore(load_settings(str(cfg)).storage.root)
    [articles] = [
        e for e in store.read(event_types=["validation.completed"]) if e.payload["suite"] == "articles"
    ]
    assert articles.payload["mode"] == "warning"
    assert articles.payload["quarantined"] == [
        "ftp://mixed.example/pub/story.txt",
        "https://mixed.example/2031/01/future",
    ]
