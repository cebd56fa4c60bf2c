"""The services the command line calls, called from Python on the shipped sample: what a command
prints is what its service returns, and a refusal is the service's, before anything is written."""

from __future__ import annotations

import json
import os
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest

from flows.commands.options import open_store
from ops import browse, workspace
from ops.compact import compact
from ops.improve import policy_in_force, replay_regression
from ops.preflight import check
from ops.runs import (
    NO_SOURCES,
    collect_source,
    collect_sources,
    plan_backfill,
    plan_collect,
    plan_run,
    plan_serve,
)
from storage.errors import BriefError, ConfigError, InputError, StoreError
from tasks.settings import load_settings
from tests.cli import brief
from tests.conftest import REPO

DAY = date(2025, 8, 6)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    config.write_text(config.read_text().replace('root = "../var/sample-store"', 'root = "store"'))
    return config


def test_collect_browse_and_compact_through_the_services(sample: Path) -> None:
    with pytest.raises(StoreError, match="does not exist; run 'brief run' first"):
        open_store(str(sample))
    plan = plan_collect(load_settings(sample), DAY)
    assert plan.run_id.startswith("collect-2025-08-06-")
    got = list(collect_sources(plan))  # fetched at once, in the order of the sources
    assert [(g.source, g.failure) for g in got] == [("labnotes", None), ("techwire", None)]
    assert sum(g.written for g in got) == 11 and sum(g.items for g in got) == 9
    again = [collect_source(plan_collect(load_settings(sample), DAY), s) for s in plan.settings.sources]
    assert sum(g.written for g in again) == 0 and sum(g.skipped for g in again) == 11

    settings, store = open_store(str(sample))
    frame = browse.events(store, None, None, None)
    printed = brief("events", "--config", str(sample), "--format", "jsonl").stdout.splitlines()
    assert [json.loads(line)["event_id"] for line in printed] == frame["event_id"].to_list()
    fetched = browse.events(store, DAY, ["feed.fetched"], None)
    assert fetched["event_type"].to_list() == ["feed.fetched", "feed.fetched"]
    assert browse.events(store, None, None, plan.run_id[:12]).height == 11  # a run by its first characters
    assert browse.events(store, None, None, "nobody").height == 0

    with pytest.raises(InputError, match="no events for 2025-08-07"):
        compact(settings, store, DAY + timedelta(days=1))
    said: list[object] = []
    done = compact(settings, store, None, said.append)
    assert said == done.days and done.frozen == 0
    [day] = done.days
    assert (day.day, day.files_before, getattr(day, "files_after", None)) == (DAY, 2, 1)


def test_a_run_a_backfill_and_a_collection_are_refused_before_they_start(sample: Path) -> None:
    settings, _ = open_store(str(sample), must_exist=False)
    later = workspace.today(settings) + timedelta(days=2)
    with pytest.raises(InputError, match=f"--date {later} is after tomorrow"):
        plan_run(settings, later)
    with pytest.raises(InputError, match=f"--end {later} is after tomorrow"):
        plan_backfill(settings, (later - timedelta(days=5)).isoformat(), later.isoformat())
    with pytest.raises(InputError, match="--end 2025-08-05 is before --start 2025-08-07"):
        plan_backfill(settings, "2025-08-07", "2025-08-05")
    assert plan_backfill(settings, "2025-08-05", "2025-08-07").days == [
        DAY - timedelta(days=1),
        DAY,
        DAY + timedelta(days=1),
    ]
    assert plan_run(settings, None).day == workspace.today(settings)

    bare = sample.with_name("bare.toml")
    bare.write_text('[storage]\nroot = "store"\n')
    for refused in (
        lambda: plan_run(load_settings(bare), DAY),
        lambda: plan_collect(load_settings(bare), DAY),
    ):
        with pytest.raises(InputError) as why:
            refused()
        assert str(why.value) == NO_SOURCES
    assert not (sample.parent / "store").exists()  # nothing was written


def test_the_policy_in_force_and_the_regression_set_of_a_new_store(sample: Path) -> None:
    plan = plan_collect(load_settings(sample), DAY)
    for source in plan.settings.sources:
        collect_source(plan, source)
    settings, store = open_store(str(sample))
    found = policy_in_force(settings, store)
    assert found.adoption is None and found.pinned is None
    assert found.config_version == settings.policy_version()
    shown = brief("policy", "show", "--config", str(sample)).stdout
    assert shown.strip() == f"no policy adopted: runs use the config's [policy] ({found.config_version})"
    assert replay_regression(settings, workspace.resources_of(settings)) is None


def test_the_check_a_command_prints_is_the_services_report(sample: Path) -> None:
    report = check(load_settings(sample), DAY)
    assert report.settings is not None and report.failed == [] and report.warned == 0
    assert [c.what for c in report.checks] == ["config", "storage", "source labnotes", "source techwire"]
    printed = brief("check", "--config", str(sample), "--date", DAY.isoformat())
    assert printed.returncode == 0 and f"all {len(report.checks)} checks passed" in printed.stdout

    broken = sample.with_name("broken.toml")
    broken.write_text('[storage]\nroot = "store"\n[[sources]]\nname = "no spaces allowed"\nurl = "x"\n')
    with pytest.raises(ConfigError) as mistake:
        load_settings(broken)
    refused = check(mistake.value, DAY)
    assert refused.settings is None and [c.status for c in refused.checks] == ["fail"]


def test_serve_names_the_config_by_its_whole_path_and_refuses_a_missing_one(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(sample.parent.parent)
    plan = plan_serve(
        "samples/brief.toml", load_settings("samples/brief.toml")
    )  # as typed in the folder above
    assert plan.config == str(sample.resolve())
    assert plan.prefect_home == Path(os.environ["PREFECT_HOME"])
    with pytest.raises(BriefError, match="not found; check the path"):
        plan_serve("samples/missing.toml", load_settings(sample))
