"""Every decision that depends on today asks the clock the composition root built: a held brief's
deadline, which days' alerts are owed and whether a brief is late, the desk's default day. Each test
sets the clock to a day in 2025, far from the day it runs on, and the decision follows the clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from ops import acts, alerts
from storage.events import new_event
from storage.payloads import BriefHeld
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks import steps
from tasks.embed import HashingEmbedder
from tasks.settings import Settings, parse_settings
from tasks.steps.context import Models
from tests.delivery_servers import Webhook
from tests.factories import brief, brief_item
from tests.runs import hashing_run

DAY = date(2025, 8, 6)


def at(hour: int, minute: int = 0) -> steps.FixedClock:
    return steps.FixedClock(datetime(DAY.year, DAY.month, DAY.day, hour, minute, tzinfo=UTC))


def resources(store: ParquetEventStore, clock: steps.Clock) -> steps.Resources:
    """What ``bootstrap`` builds, with the hashing embedder and the given clock."""
    return steps.Resources(store, Models(HashingEmbedder()), clock)


@pytest.fixture
def hook() -> Iterator[Webhook]:
    server = Webhook().start()
    yield server
    server.stop()


def test_the_clock_is_not_the_machines() -> None:
    assert datetime.now(UTC).date() != DAY  # else these tests would prove nothing


def held_settings(tmp_path: Path, hook: Webhook) -> Settings:
    return parse_settings(
        {
            "storage": {"root": str(tmp_path / "store")},
            "delivery": {
                "hold": True,
                "review_channel": "editors",
                "hold_until": "08:30",
                "channels": [
                    {"name": "editors", "url": hook.url("/editors"), "retries": 0},
                    {"name": "readers", "url": hook.url("/readers"), "retries": 0},
                ],
            },
        }
    )


def test_a_held_brief_is_released_when_the_clock_passes_its_deadline(tmp_path: Path, hook: Webhook) -> None:
    settings = held_settings(tmp_path, hook)
    store = ParquetEventStore(str(tmp_path / "store"))
    ctx = hashing_run(store, settings, DAY, "run", clock=at(7))
    steps.publish(ctx, brief(brief_item("st-1", "One story"), day=DAY))
    held = steps.deliver_day(ctx)
    assert held.held_now and [p for p, _ in hook.posts] == ["/editors"]
    [until] = [payload_of(e, BriefHeld).until for e in store.read(event_types=["brief.held"])]
    assert until == at(8, 30).now()  # the run's clock's day, not the machine's

    assert acts.release_due(settings, resources(store, at(8, 29)), say=lambda _: None) == []
    assert [p for p, _ in hook.posts] == ["/editors"]  # a minute early by the clock: still held
    [released] = acts.release_due(settings, resources(store, at(8, 31)), say=lambda _: None)
    assert [s.channel for s in released.sent if s.ok] == ["readers"]
    assert [p for p, _ in hook.posts] == ["/editors", "/readers"]


def test_which_days_alerts_are_owed_follows_the_clock(tmp_path: Path, hook: Webhook) -> None:
    settings = parse_settings(
        {
            "storage": {"root": str(tmp_path / "store")},
            "alerts": [{"name": "ops", "url": hook.url("/ops"), "retries": 0}],
        }
    )
    store = ParquetEventStore(str(tmp_path / "store"))
    failed = new_event(
        "run.failed",
        {"step": "collect", "error": "OSError", "message": "disk full"},
        brief_date=DAY,
        run_id="run-1",
        subject_id="run-1",
        produced_by="tests",
        occurred_at=at(7).now(),
    )
    store.append([failed])
    # two days later by the clock, the day is no longer one the alerts speak of
    later = steps.FixedClock(at(9).now() + timedelta(days=2))
    assert alerts.send_day(settings, resources(store, later), DAY).sent == []
    assert hook.posts == []
    # the check speaks of yesterday and today by the clock: the 8th has no brief by then, late
    checked = alerts.check(settings, resources(store, later), say=lambda _: None)
    assert [o.day for o in checked.alerts] == [DAY + timedelta(days=1), DAY + timedelta(days=2)]
    assert checked.sent == [("late", "ops")]
    hook.posts.clear()
    # on the day by the clock, the check sends it (once), and the alerts of the last days list it
    checked = alerts.check(settings, resources(store, at(9)), say=lambda _: None)
    assert checked.sent == [("run-failed", "ops")] and [p for p, _ in hook.posts] == ["/ops"]
    [shown] = alerts.recent(settings, resources(store, at(9)), 7)
    assert (shown.date, shown.cause, shown.status) == (DAY, "run-failed", "sent")
    assert (
        alerts.recent(settings, resources(store, steps.FixedClock(at(9).now() + timedelta(days=30))), 7) == []
    )


def test_the_desks_default_day_is_today_by_its_clock(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    settings = parse_settings({"storage": {"root": str(tmp_path / "store")}, "timezone": "Europe/Amsterdam"})
    store = ParquetEventStore(str(tmp_path / "store"))
    late = steps.FixedClock(datetime(2025, 8, 6, 22, 30, tzinfo=UTC))  # 00:30 on the 7th in Amsterdam
    app = create_app(settings, "127.0.0.1", "ann", resources=resources(store, late))
    desk = TestClient(app, base_url="http://127.0.0.1:8484")
    page = desk.get("/sources")  # no brief yet: the window ends today
    assert page.status_code == 200
    assert "2025-08-07" in page.text and str(datetime.now(UTC).date()) not in page.text
    assert "2025-08-07" in desk.get("/search?q=anything").text
    # a day after tomorrow by the clock is refused, whatever the machine's date
    assert acts.day_of(settings, late, date(2025, 8, 8)) == date(2025, 8, 8)
    with pytest.raises(Exception, match="after tomorrow"):
        acts.day_of(settings, late, date(2025, 8, 9))
