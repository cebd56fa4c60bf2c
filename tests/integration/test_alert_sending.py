"""The alert step over a real store and a real webhook: once per cause, channel and day; refusals
recorded and retried a few times; only recent days; no secret of any channel in what is sent."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from storage.events import new_event
from storage.store import ParquetEventStore
from tasks.settings import Settings, parse_settings
from tasks.steps.alert import MAX_REFUSALS, raise_alerts, recent_alerts
from tests.delivery_servers import Webhook
from tests.plaintext import every_file_text

DAY = date(2025, 8, 6)
NOW = datetime(2025, 8, 6, 12, 0, tzinfo=UTC)
TOKEN = "alert-token-51f0aa2b"
PASSWORD = "smtp-pw-7a7a7a7a"


@pytest.fixture
def ops(monkeypatch: pytest.MonkeyPatch) -> Iterator[Webhook]:
    monkeypatch.setenv("OPS_TOKEN", TOKEN)
    monkeypatch.setenv("SMTP_PASSWORD", PASSWORD)
    server = Webhook().start()
    yield server
    server.stop()


def settings_for(tmp_path: Path, ops: Webhook) -> Settings:
    return parse_settings(
        {
            "storage": {"root": str(tmp_path / "store")},
            "delivery": [{"name": "email", "url": "mailtos://me:${SMTP_PASSWORD}@smtp.example.com"}],
            "alerts": [{"name": "ops", "url": ops.url("/in/${OPS_TOKEN}"), "retries": 0}],
        }
    )


def store_of(settings: Settings) -> ParquetEventStore:
    return settings.storage.event_store()


def failed_run(settings: Settings, day: date = DAY) -> None:
    """A run that failed with the SMTP password in its message (an exception that quoted it)."""
    event = new_event(
        "run.failed",
        {"step": "deliver", "error": "SMTPAuthenticationError", "message": f"login refused for {PASSWORD}"},
        brief_date=day,
        run_id="run-1",
        subject_id="run-1",
        produced_by="tests",
        occurred_at=NOW,
    )
    settings.storage.event_store().append([event])


def test_an_alert_goes_once_and_carries_no_secret_of_any_channel(tmp_path: Path, ops: Webhook) -> None:
    settings = settings_for(tmp_path, ops)
    failed_run(settings)
    first = raise_alerts(settings, store_of(settings), DAY, now=NOW, sleep=lambda s: None)
    assert first.sent == [("run-failed", "ops")] and first.failed == []
    [(path, alert)] = ops.posts
    assert path == f"/in/{TOKEN}" and "login refused for ***" in alert["message"]
    assert (
        raise_alerts(settings, store_of(settings), DAY, now=NOW + timedelta(hours=5)).sent == []
    )  # later the same day
    assert len(ops.posts) == 1
    for text in every_file_text(tmp_path / "store").values():
        assert TOKEN not in text  # (the password is there: the run.failed of the fixture holds it)
    [sent] = settings.storage.event_store().read(event_types=["alert.sent"])
    assert PASSWORD not in str(sent.payload) and TOKEN not in str(sent.payload)
    [row] = recent_alerts(settings, store_of(settings), 7, NOW)
    assert (row["cause"], row["channel"], row["status"]) == ("run-failed", "ops", "sent")


def test_a_refused_alert_is_recorded_and_retried_by_later_checks_a_few_times(
    tmp_path: Path, ops: Webhook
) -> None:
    settings = settings_for(tmp_path, ops)
    failed_run(settings)
    ops.status = 500
    for n in range(MAX_REFUSALS):
        outcome = raise_alerts(
            settings, store_of(settings), DAY, now=NOW + timedelta(minutes=5 * n), sleep=lambda s: None
        )
        [(cause, channel, reason)] = outcome.failed
        assert (cause, channel) == ("run-failed", "ops") and TOKEN not in reason and "500" in reason
    assert (
        raise_alerts(settings, store_of(settings), DAY, now=NOW + timedelta(hours=1)).failed == []
    )  # enough for today
    refused = settings.storage.event_store().read(event_types=["alert.failed"])
    assert len(refused) == MAX_REFUSALS and all(not e.payload["will_retry"] for e in refused)
    rows = recent_alerts(settings, store_of(settings), 7, NOW)
    assert {r["status"] for r in rows} == {"FAILED"} and all(TOKEN not in r["what"] for r in rows)


def test_only_recent_days_raise_alerts(tmp_path: Path, ops: Webhook) -> None:
    """A backfill of older dates reports on the screen; the alert channels hear of yesterday to tomorrow."""
    settings = settings_for(tmp_path, ops)
    for back in (2, 1):
        failed_run(settings, DAY - timedelta(days=back))
    assert raise_alerts(settings, store_of(settings), DAY - timedelta(days=2), now=NOW).sent == []
    assert raise_alerts(settings, store_of(settings), DAY - timedelta(days=1), now=NOW).sent == [
        ("run-failed", "ops")
    ]
    without = settings.model_copy(update={"alerts": []})
    failed_run(settings)
    assert (
        raise_alerts(without, store_of(without), DAY, now=NOW).causes == []
    )  # no channel: nothing is even looked at
