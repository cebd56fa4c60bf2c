"""Alerts decided from the log: which causes a day's events hold, and the [[alerts]] settings."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from storage.errors import ConfigError
from storage.events import Event, new_event
from tasks.alerts import AlertingSettings, causes, runs_before
from tasks.settings import parse_settings

DAY = date(2025, 8, 6)  # a Wednesday
ZONE = ZoneInfo("Europe/Amsterdam")
RULES = AlertingSettings()
T0 = datetime(2025, 8, 6, 5, 0, tzinfo=UTC)  # 07:00 in Amsterdam
_seq = iter(range(10**6))


def event(
    event_type: str, payload: dict, *, day: date = DAY, run: str = "run-1", at: datetime | None = None
) -> Event:
    n = next(_seq)
    return new_event(
        event_type,
        payload,
        brief_date=day,
        run_id=run,
        subject_id="s",
        produced_by="tests",
        occurred_at=at or T0 + timedelta(seconds=n),
        seq=n,
    )


def started(run: str, day: date = DAY, at: datetime | None = None) -> Event:
    return event("run.started", {"flow": "daily-brief"}, day=day, run=run, at=at)


def failed_feed(source: str, run: str, day: date = DAY) -> Event:
    payload = {"source": source, "url": f"file:///{source}", "error": "NOT_FOUND", "retryable": False}
    return event("feed.failed", {**payload, "message": "no file"}, day=day, run=run)


def fetched(source: str, day: date = DAY) -> Event:
    payload = {"source": source, "url": f"https://{source}/", "status": 200, "content_hash": "h", "items": 1}
    return event("feed.fetched", payload, day=day)


def article(source: str, published: str, n: int, day: date = DAY) -> Event:
    payload = {
        "article_id": f"{source}-{n}",
        "source": source,
        "url": f"https://{source}/{n}",
        "canonical_url": f"https://{source}/{n}",
        "title": f"Item {n}",
        "published_at": published,
        "content_hash": f"h{n}",
    }
    return event("article.collected", payload, day=day)


def keys(events: list[Event], now: datetime | None = None, **rules: object) -> list[str]:
    found = causes(
        events,
        DAY,
        AlertingSettings(**rules),  # type: ignore[arg-type]
        sources=["a", "b"],
        zone=ZONE,
        now=now,
        schedule="0 7 * * *",
    )
    return [c.key for c in found]


def test_a_withheld_brief_is_one_cause_though_its_run_failed_for_it() -> None:
    withheld = event(
        "brief.withheld",
        {
            "brief_date": "2025-08-06",
            "reason": "2 of 2 sources failed (a, b)",
            "core": 0,
            "min_core": 1,
            "sources": 2,
        },
    )
    run_failed = event("run.failed", {"step": "publish", "error": "BriefWithheld", "message": "withheld"})
    assert keys([withheld, run_failed]) == ["withheld"]
    [cause] = causes([withheld, run_failed], DAY, RULES, sources=[], zone=ZONE)
    subject, body = cause.message()
    assert subject == "dailybrief alert: the brief of 2025-08-06 is withheld: 2 of 2 sources failed (a, b)"
    assert "More: brief events --date 2025-08-06 --type brief.withheld" in body


def test_a_failed_and_a_crashed_run_each_are_a_cause_once_a_day() -> None:
    failed = [
        event("run.failed", {"step": "dedup", "error": "ConfigError", "message": f"try {n}"}, run=f"r{n}")
        for n in range(2)
    ]
    crashed = event("run.crashed", {"how": "its process is gone", "detected_by": "check"}, run="r3")
    assert keys([*failed, crashed]) == ["run-failed", "run-crashed"]
    [cause] = causes(failed, DAY, RULES, sources=[], zone=ZONE)
    assert (
        "in step 'dedup': ConfigError" in cause.summary
        and "Rerun: brief run --date 2025-08-06" in cause.details
    )
    # another day's failure is not this day's
    assert (
        keys([event("run.failed", {"step": "x", "error": "E", "message": ""}, day=DAY - timedelta(days=1))])
        == []
    )


def test_a_quarantine_and_a_delivery_that_failed_after_its_retries() -> None:
    gate = {"mode": "warning", "success": False, "rows": 9, "expectations": 3}
    passed = event("validation.completed", {**gate, "suite": "items", "quarantined": []})
    quarantined = event("validation.completed", {**gate, "suite": "articles", "quarantined": ["u1", "u2"]})
    delivery = {
        "brief_date": "2025-08-06",
        "channel": "email",
        "version": 1,
        "kind": "brief",
        "target": "mailtos://smtp.example.com",
        "reason": "554 relay down",
        "attempted_at": T0,
        "resend": "brief deliver --date 2025-08-06 --channel email",
    }
    retrying = event("delivery.failed", {**delivery, "attempt": 1, "will_retry": True})
    assert keys([passed, retrying]) == []
    gave_up = event("delivery.failed", {**delivery, "attempt": 3, "will_retry": False})
    assert keys([passed, quarantined, retrying, gave_up]) == ["quarantine", "delivery-failed:email"]
    [gate_cause, delivery_cause] = causes([quarantined, gave_up], DAY, RULES, sources=[], zone=ZONE)
    assert "(articles: 2)" in gate_cause.summary
    assert "after 3 attempts" in delivery_cause.summary and "554 relay down" in delivery_cause.details


def test_a_source_that_failed_the_last_failing_runs_runs_in_a_row() -> None:
    days = [DAY - timedelta(days=k) for k in (2, 1, 0)]
    runs = [started(f"r{k}", d) for k, d in enumerate(days)]
    all_failed = [failed_feed("a", f"r{k}", d) for k, d in enumerate(days)]
    assert keys([*runs, *all_failed]) == ["source-failing:a"]
    assert keys([*runs, *all_failed], failing_runs=4) == []  # only three runs in the log
    assert keys([*runs, *all_failed], failing_runs=0) == []
    # the middle run fetched it: not in a row
    assert keys([*runs, all_failed[0], all_failed[2]]) == []
    # two runs of one day count as two
    assert keys([*runs[1:], started("r9"), *all_failed[1:], failed_feed("a", "r9")]) == ["source-failing:a"]


def test_a_source_fetched_fine_whose_newest_item_is_silent_days_old() -> None:
    old = article("a", "2025-08-03T10:00:00Z", 1, day=DAY - timedelta(days=3))
    assert keys([fetched("a"), old]) == ["source-silent:a"]
    [cause] = causes([fetched("a"), old], DAY, RULES, sources=["a"], zone=ZONE)
    assert cause.summary == "source a has published nothing since 2025-08-03"
    fresh = article("a", "2025-08-04T10:00:00Z", 2, day=DAY - timedelta(days=2))
    assert keys([fetched("a"), old, fresh]) == []
    assert keys([fetched("a")]) == ["source-silent:a"]  # nothing at all
    assert keys([old]) == []  # not fetched today (failed or skipped): not "silent"
    assert keys([fetched("a"), old], silent_days=0) == []
    assert keys([fetched("a"), old], silent_days=4) == []


def test_a_brief_missing_after_late_after_on_a_day_the_schedule_runs() -> None:
    before = datetime(2025, 8, 6, 6, 59, tzinfo=UTC)  # 08:59 in Amsterdam
    after = datetime(2025, 8, 6, 7, 0, tzinfo=UTC)
    assert keys([], now=before) == []
    assert keys([], now=after) == ["late"]
    assert keys([], now=after, late_after="09:30") == []
    published = event(
        "brief.published",
        {
            "brief_date": "2025-08-06",
            "version": 1,
            "items": 3,
            "stories": [],
            "files": {},
            "content_hash": "c",
        },
    )
    assert keys([published], now=after) == []
    failed = event("run.failed", {"step": "dedup", "error": "ConfigError", "message": ""})
    assert keys([failed], now=after) == ["run-failed"]  # the failure says why the brief is missing
    [late] = causes([started("r1")], DAY, RULES, sources=[], zone=ZONE, now=after)
    assert late.summary == "no brief of 2025-08-06 by 09:00 (Europe/Amsterdam)"
    assert late.details == ("A run started at 07:00 and has not published.",)
    sunday = date(2025, 8, 10)
    at = datetime(2025, 8, 10, 9, 30, tzinfo=ZONE)
    assert not runs_before("0 7 * * 1-5", sunday, at, ZONE) and runs_before("0 7 * * *", sunday, at, ZONE)
    assert not runs_before("30 9 * * *", sunday, at, ZONE)  # the run is due after the deadline


def test_alert_channels_follow_the_delivery_channels_secret_rules() -> None:
    base = {"storage": {"root": "/tmp/x"}}
    settings = parse_settings(
        {**base, "alerts": [{"name": "ops", "url": "json://hooks.example.com/in/${OPS_TOKEN}"}]}
    )
    [ops] = settings.alerts
    assert ops.variables == ["OPS_TOKEN"] and ops.target == "json://hooks.example.com"
    assert (settings.alerting.late_after, settings.alerting.failing_runs, settings.alerting.silent_days) == (
        "09:00",
        3,
        3,
    )
    mistakes = [
        (
            {"alerts": [{"name": "ops", "url": "mailtos://me:hunter2@smtp.example.com"}]},
            "must not carry a password",
        ),
        ({"alerts": [{"name": "ops", "url": "ops-room"}]}, "is not an Apprise URL"),
        ({"alerts": [{"name": "a", "url": "json://h/x"}, {"name": "a", "url": "json://h/y"}]}, "repeated: a"),
        (
            {"alerts": [{"name": "a", "url": "json://h/x", "updates": False}]},
            r"unknown key 'updates' in \[\[alerts\]\] 'a'",
        ),
        ({"alerting": {"late_after": "9 am"}}, r"\[alerting\] late_after"),
        ({"alerting": {"failing_runs": -1}}, r"\[alerting\] failing_runs"),
        ({"alerting": {"silence": 2}}, r"unknown key 'silence' in \[alerting\]"),
    ]
    for data, message in mistakes:
        with pytest.raises(ConfigError, match=message):
            parse_settings({**base, **data})


def test_a_v1_run_started_is_read_as_v3_without_a_process_or_a_policy() -> None:
    from storage.registry import REGISTRY

    version, payload = REGISTRY.upcast("run.started", 1, {"flow": "daily-brief", "parameters": {}})
    assert version == 3
    assert payload == {"flow": "daily-brief", "parameters": {}, "process": None, "policy": None}
    version, payload = REGISTRY.upcast("run.started", 2, {"flow": "daily-brief", "process": None})
    assert version == 3 and payload["policy"] is None
