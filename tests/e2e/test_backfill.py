"""Backfill of the four real days, twice: same facts, four briefs, a summary of every date."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.real_days import LAB_SOURCES, archive_config

SOURCES = ["arstechnica", "techcrunch", "wired", *LAB_SOURCES]
FACTS = {"article.collected", "feed.fetched"}
LABS = set(LAB_SOURCES)


def test_backfill_twice_is_idempotent(shared_data: Path, tmp_path: Path, prefect_harness: None) -> None:
    from flows.backfill import backfill

    config = archive_config(tmp_path, shared_data / "feeds", SOURCES, on_topic=LABS)
    store = ParquetEventStore(load_settings(str(config)).storage.root)

    def run_all() -> tuple[list[dict], Counter]:
        outcomes = backfill("2025-08-05", "2025-08-07", str(config), 2) + backfill(
            "2025-07-28", "2025-07-28", str(config), 1
        )
        return outcomes, Counter(e.event_type for e in store.read() if e.event_type in FACTS)

    first, facts_first = run_all()
    second, facts_second = run_all()
    assert [o.status for o in first] == ["completed"] * 4, first
    assert facts_first == facts_second and facts_first["article.collected"] > 1000
    assert [o.changed for o in second] == [False] * 4  # same briefs, no new versions
    briefs = sorted(p.name for p in (Path(store.base) / "briefs").glob("*.json"))
    assert briefs == ["2025-07-28.json", "2025-08-05.json", "2025-08-06.json", "2025-08-07.json"]
    # AI stories only: 07-28 is a quiet day, and a thin day gives a shorter brief, not a padded one
    assert all(o.items >= (3 if str(o.day) == "2025-07-28" else 5) for o in first), first


def test_bad_range_is_refused_at_once() -> None:
    from flows.backfill import date_range
    from storage.errors import InputError

    with pytest.raises(InputError, match="before --start"):
        date_range("2025-08-07", "2025-08-05")
    with pytest.raises(InputError, match="YYYY-MM-DD"):
        date_range("yesterday", "2025-08-05")


def test_fan_out_without_the_deployment_is_one_clear_error(tmp_path: Path, prefect_harness: None) -> None:
    from flows.backfill import backfill
    from storage.errors import InputError

    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n[[sources]]\nname = "x"\nurl = "file:///nowhere/{date}.xml"\n'
    )
    # a name no test deploys: the session's server may hold the daily-brief deployment of another file
    with pytest.raises(InputError, match=r"no deployment 'daily-brief/never-deployed'.*prefect deploy --all"):
        backfill(
            "2025-08-05", "2025-08-06", str(config), fan_out=True, deployment="daily-brief/never-deployed"
        )
    assert not (tmp_path / "store" / "briefs").exists()  # nothing was run


def test_fan_out_gives_up_on_a_date_no_worker_takes_and_says_why(prefect_harness: None) -> None:
    """A fanned-out backfill ends: a date still scheduled at its deadline is that date's failure,
    and one API call reads all the dates' states (not one per date)."""
    from datetime import date

    from prefect.client.orchestration import get_client

    from flows.fanout import fan_out

    with get_client(sync_client=True) as client:
        flow_id = client.create_flow_from_name("unattended")
        client.create_deployment(flow_id, "nobody-runs-it", parameter_openapi_schema={})
    said: list[str] = []
    days = [date(2025, 8, 5), date(2025, 8, 6)]
    outcomes = fan_out(
        days,
        None,
        1,
        said.append,
        lambda *_: None,
        deployment="unattended/nobody-runs-it",
        poll_s=0.2,
        timeout_s=1.0,
    )
    assert [o["status"] for o in outcomes] == ["failed", "failed"], outcomes
    assert all(o["error"].startswith("still scheduled after 1 s: no worker") for o in outcomes), outcomes
    assert said[0].startswith("created 2 flow runs") and said[-1].endswith("2 failed so far"), said


def test_the_backfill_command_is_as_quiet_as_a_run_and_its_table_fits_80_columns(
    tmp_path: Path, prefect_harness: None
) -> None:
    """08-05 has no archive for either sample source (its brief is withheld, as designed), 08-06 has
    both: what Prefect, the gates and the models print goes to the backfill's log, not the screen."""
    from tests.cli import brief
    from tests.e2e.test_review import setup

    config = setup(tmp_path)
    result = brief(
        "backfill",
        "--start",
        "2025-08-05",
        "--end",
        "2025-08-06",
        "--config",
        str(config),
        env={"COLUMNS": "80"},
    )
    screen = result.stdout + result.stderr
    assert result.returncode == 1, screen  # a withheld date is a failed date
    assert "INFO" not in screen and "Traceback" not in screen and "it/s" not in screen, screen
    log_line = result.stdout.index("the backfill's log:")  # a path is printed whole, to be copied
    assert max(len(line) for line in result.stdout[:log_line].splitlines()) <= 80, result.stdout
    rows = dict(re.findall(r"^\W+(2025-08-0\d)\W+(\w+) ", result.stdout, re.M))
    assert rows == {"2025-08-05": "withheld", "2025-08-06": "completed"}, result.stdout
    assert re.search(r"^  2025-08-05 withheld: \S", result.stdout, re.M), (
        result.stdout
    )  # why, under the table
    (log,) = (tmp_path / "store" / "logs" / "2025-08-05").glob("backfill-*.log")
    assert "INFO" in log.read_text() and str(log) in result.stdout.replace("\n", "")
    assert "1 date withheld, readers got nothing: 2025-08-05" in result.stderr
    assert "rerun them" not in result.stderr  # a withheld date is the outcome; rerunning changes nothing
    assert re.search(
        r"^\[2/2\] 2025-08-06: completed in [\d.]+ s; 1 failed or withheld so far", result.stdout, re.M
    )


def test_a_date_no_source_had_anything_for_says_so_and_not_that_min_core_0_sends_it(
    tmp_path: Path, prefect_harness: None
) -> None:
    """08-05 has no archive for either sample source: the withheld date says that no source had
    anything (each one's why), not that it had too few core stories for min_core = 0 to fix."""
    from tests.cli import brief
    from tests.e2e.test_review import setup

    config = setup(tmp_path)
    result = brief(
        "backfill",
        "--start",
        "2025-08-05",
        "--end",
        "2025-08-05",
        "--config",
        str(config),
        env={"COLUMNS": "300"},
    )
    screen = result.stdout + result.stderr
    assert result.returncode == 1, screen
    said = re.search(r"^  2025-08-05 withheld: (.*)$", result.stdout, re.M)
    assert said, result.stdout
    assert "no source had anything for this date: labnotes: " in said.group(1), said.group(1)
    assert "; techwire: " in said.group(1) and "fewer than min_core" not in said.group(1)
    assert "min_core = 0" not in screen, screen


def test_a_date_after_every_archive_says_each_sources_why_and_what_its_archive_holds(
    tmp_path: Path, prefect_harness: None
) -> None:
    """The sample's archives hold 2025-08-06 only: 08-07 fails both sources, and the withheld
    date says each one's why (no file, and the dates its archive holds), not only their names."""
    from tests.cli import brief
    from tests.e2e.test_review import setup

    config = setup(tmp_path)
    result = brief(
        "backfill",
        "--start",
        "2025-08-07",
        "--end",
        "2025-08-07",
        "--config",
        str(config),
        env={"COLUMNS": "400"},
    )
    screen = result.stdout + result.stderr
    assert result.returncode == 1, screen
    said = re.search(r"^  2025-08-07 withheld: (.*)$", result.stdout, re.M)
    assert said, result.stdout
    why = "withheld: 2 of 2 sources failed (labnotes, techwire): labnotes: no file labnotes/2025-08-07.xml "
    assert (
        why + "(its archive holds 2025-08-06 only); techwire: no file techwire/2025-08-07.xml "
        in said.group(1)
    ), said


def test_a_backfill_again_keeps_each_unchanged_dates_outcome_and_records_it(
    tmp_path: Path, prefect_harness: None
) -> None:
    """Run again with nothing new, every date's outcome stands (its last run's: published or
    withheld, and why) and is recorded as this backfill's look at it (``run.unchanged``), with no
    other event; a date whose reach changed since, or whose brief file is gone, is run again."""
    from datetime import date

    from flows.backfill import backfill
    from tests.e2e.test_review import setup

    config = setup(tmp_path)
    store = ParquetEventStore(load_settings(str(config)).storage.root)

    def types() -> Counter:
        return Counter(e.event_type for e in store.read())

    first = backfill("2025-08-05", "2025-08-06", str(config), 1)
    before = types()
    again = backfill("2025-08-05", "2025-08-06", str(config), 1)
    assert [(o.status, o.unchanged) for o in first] == [("withheld", False), ("completed", False)], first
    assert [(o.status, o.unchanged) for o in again] == [("withheld", True), ("completed", True)], again
    assert again[0].error == first[0].error and again[0].error.startswith("the brief of 2025-08-05")
    assert (again[1].version, again[1].items, again[1].changed) == (first[1].version, first[1].items, False)
    new = types() - before  # beside a collection's attempts (a missing archive, a skipped feed)
    assert {t: n for t, n in new.items() if t not in ("feed.failed", "feed.skipped")} == {"run.unchanged": 2}
    unchanged = store.read(event_types=["run.unchanged"])
    assert sorted(e.brief_date for e in unchanged) == [date(2025, 8, 5), date(2025, 8, 6)]

    # 08-06's brief file removed: that date is run again (and writes it), 08-05 still stands
    (Path(store.base) / "briefs" / "2025-08-06.json").unlink()
    third = backfill("2025-08-05", "2025-08-06", str(config), 1)
    assert [(o.status, o.unchanged) for o in third] == [("withheld", True), ("completed", False)], third
    assert (Path(store.base) / "briefs" / "2025-08-06.json").is_file()
    # that run wrote 08-06's derivations again (new run, new ids): 08-06 itself now stands again,
    # but a date whose reach holds 08-06 (08-07, run the first time) is decided, not kept
    fourth = backfill("2025-08-06", "2025-08-07", str(config), 1)
    assert [o.unchanged for o in fourth] == [True, False], fourth


def test_every_run_a_backfill_wrote_is_named_in_the_runs_projection(
    tmp_path: Path, prefect_harness: None
) -> None:
    """A backfill collects every date's archives and looks at their outcomes under its own record,
    before each date's run: ``brief replay --projection runs`` names it ``backfill``, never a flow
    ``unknown``, on every date it wrote to (08-05's only events are its skipped feeds)."""
    from tests.cli import brief
    from tests.e2e.test_review import setup

    config = setup(tmp_path)
    done = brief("backfill", "--start", "2025-08-05", "--end", "2025-08-06", "--config", str(config))
    assert done.returncode == 1, done.stdout + done.stderr  # 08-05 is withheld, as designed
    for day, status in (("2025-08-05", "withheld"), ("2025-08-06", "completed")):
        shown = brief(
            "replay", "--date", day, "--projection", "runs", "--config", str(config), "--format", "jsonl"
        )
        runs = [json.loads(line) for line in shown.stdout.splitlines()]
        assert all(r["status"] != "unknown" and r["flow"] for r in runs), runs
        flows = sorted((r["flow"], r["status"]) for r in runs)
        assert flows == [("backfill", "recorded"), ("daily-brief", status)], flows
        [own] = [r for r in runs if r["flow"] == "backfill"]
        assert own["run_id"].startswith("backfill-") and own["events"] >= 1
