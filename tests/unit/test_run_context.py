"""A run: its identity, resources and recorder are given when it opens; one list of stages; a clock."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from storage.errors import InputError
from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import parse_settings
from tests.conftest import REPO
from tests.runs import hashing_run

DAY = date(2025, 8, 6)


def sample_run(tmp_path: Path, recorder: steps.Recorder = steps.LIVE) -> steps.RunContext:
    feeds = (REPO / "samples" / "feeds").as_uri()
    settings = parse_settings(
        {
            "storage": {"root": str(tmp_path / "store")},
            "sources": [{"name": "labnotes", "url": f"{feeds}/labnotes/{{date}}.xml"}],
        }
    )
    return hashing_run(ParquetEventStore(str(tmp_path / "store")), settings, DAY, "r", recorder=recorder)


def test_a_capturing_run_keeps_in_memory_what_a_live_one_appends(tmp_path: Path) -> None:
    live = sample_run(tmp_path / "live")
    steps.collect_one(live, "labnotes")
    recorder = steps.Capturing()
    captured = sample_run(tmp_path / "captured", recorder)
    outcome = steps.collect_one(captured, "labnotes")
    assert captured.store.days() == [] and outcome.new_events == 0
    appended = live.store.read()
    assert sorted(e.event_type for e in recorder.captured) == sorted(e.event_type for e in appended)
    assert (
        outcome.counts["article.collected"] == sum(e.event_type == "article.collected" for e in appended) > 0
    )


def test_a_run_is_not_made_a_replay_after_it_opened(tmp_path: Path) -> None:
    ctx = sample_run(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.recorder = steps.Dry()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.held_out = True  # type: ignore[misc]
    assert ctx.recorder is steps.LIVE and not ctx.held_out


def test_a_candidate_is_the_same_run_and_day_under_its_own_policy(tmp_path: Path) -> None:
    ctx = sample_run(tmp_path)
    policy = ctx.settings.policy.model_copy(update={"lookback_hours": 96})
    recorder = steps.Capturing()
    own = ctx.under(ctx.settings.model_copy(update={"policy": policy}), recorder)
    assert (own.day, own.run_id, own.recorder) == (ctx.day, ctx.run_id, recorder)
    assert own.policy_version != ctx.policy_version
    assert own.reach[0] < ctx.reach[0] and own.reach[-1] == ctx.reach[-1] == DAY  # a longer news window
    assert own.embedder is ctx.embedder  # the vectors the run's embedder remembers


def test_every_replay_runs_a_slice_of_the_one_stage_list() -> None:
    names = [s.name for s in steps.STAGES]
    assert names == ["dedup", "score", "analyze", "factcheck", "questions", "gate"]
    assert [s.name for s in steps.between("score", "factcheck")] == ["score", "analyze", "factcheck"]
    assert steps.between("dedup", "gate") == steps.STAGES


def test_today_and_the_latest_date_follow_the_clock_in_the_configured_timezone() -> None:
    settings = parse_settings({"storage": {"root": "unused"}, "timezone": "Europe/Amsterdam"})
    late = steps.FixedClock(datetime(2025, 8, 6, 22, 30, tzinfo=UTC))  # 00:30 on the 7th in Amsterdam
    assert steps.today(settings, late) == date(2025, 8, 7)
    assert steps.resolve_day(None, settings, late) == date(2025, 8, 7)
    assert steps.refuse_future(date(2025, 8, 8), settings, clock=late) == date(2025, 8, 8)
    with pytest.raises(InputError, match="after tomorrow"):
        steps.refuse_future(date(2025, 8, 9), settings, clock=late)
