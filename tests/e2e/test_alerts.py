"""Alerts end to end: a local webhook receives exactly one alert per cause and day.

Three causes, as an operator meets them: every feed down (the brief is withheld, readers get
nothing, the run exits 1); the process of a run killed with SIGKILL mid-run (no hook runs: the
next check finds its process gone, records ``run.crashed`` and marks the Prefect run
Crashed); no brief by ``[alerting] late_after`` (the deadline is reached with
``brief alerts --check --now T``, never by waiting). No alert token appears in the log or in
any output.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tasks.settings import load_settings
from tests.cli import Completed, brief
from tests.conftest import REPO
from tests.delivery_servers import MailServer, Webhook
from tests.plaintext import every_file_text

TOKEN = "alert-token-9d41c07e55"
PASSWORD = "s3cret-smtp-Pa55word"


@pytest.fixture(autouse=True)
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRIEF_TEST_ALERT_TOKEN", TOKEN)
    monkeypatch.setenv("BRIEF_TEST_SMTP_PASSWORD", PASSWORD)


@pytest.fixture
def ops() -> Iterator[Webhook]:
    """The operator's webhook: where alerts go."""
    server = Webhook().start()
    yield server
    server.stop()


def alert_channel(ops: Webhook) -> str:
    return (
        f'[[alerts]]\nname = "ops"\nurl = "{ops.url("/alert/${BRIEF_TEST_ALERT_TOKEN}")}"\n'
        "retries = 1\nbackoff_s = 0.05\n"
    )


def events(config: Path, event_type: str) -> list:
    return load_settings(str(config)).storage.event_store().read(event_types=[event_type])


def no_secret_anywhere(config: Path, *outputs: Completed) -> None:
    root = Path(load_settings(str(config)).storage.root)
    for path, text in every_file_text(root).items():
        assert TOKEN not in text and PASSWORD not in text, path
    for done in outputs:
        assert TOKEN not in done.stdout + done.stderr


def listing_fits_80_columns(config: Path, *wanted: str) -> Completed:
    listed = brief("alerts", "--config", str(config), env={"COLUMNS": "80"})
    assert listed.returncode == 0, listed.stderr
    assert all(len(line) <= 80 for line in listed.stdout.splitlines()), listed.stdout
    for text in wanted:
        assert text in listed.stdout, listed.stdout
    return listed


def test_every_feed_down_withholds_the_brief_and_alerts_the_operator_once(
    tmp_path: Path, prefect_harness: None, ops: Webhook
) -> None:
    mail, readers = MailServer(password=PASSWORD).start(), Webhook().start()
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n'
        '[[sources]]\nname = "gone"\nurl = "file:///nonexistent/gone/{date}.xml"\n'
        '[[sources]]\nname = "moved"\nurl = "file:///nonexistent/moved/{date}.xml"\n'
        f'[[delivery]]\nname = "email"\nurl = "{mail.url(password_var="BRIEF_TEST_SMTP_PASSWORD")}"\n'
        f'[[delivery]]\nname = "readers"\nurl = "{readers.url()}"\n' + alert_channel(ops)
    )
    try:
        run = brief("run", "--config", str(config))  # today: the day a schedule runs
        assert run.returncode == 1, run.stdout + run.stderr
        assert "is withheld: 2 of 2 sources failed (gone, moved)" in run.stdout + run.stderr
        assert mail.messages == [] and readers.posts == []  # readers get nothing
        [(path, alert)] = ops.posts
        assert path == f"/alert/{TOKEN}"
        assert (
            alert["title"].startswith("dailybrief alert: the brief of ") and "is withheld" in alert["title"]
        )
        assert "2 of 2 sources failed (gone, moved)" in alert["message"]
        assert alert["type"] == "failure"  # a channel that filters on failures sees it
        [sent] = events(config, "alert.sent")
        assert (sent.payload["cause"], sent.payload["channel"]) == ("withheld", "ops")
        assert sent.payload["target"] == f"json://127.0.0.1:{ops.port}"

        # the next check (brief serve's, the deliver-held deployment's) sends it no second time
        again = brief("alerts", "--check", "--config", str(config))
        assert again.returncode == 0 and "0 alerts sent" in again.stdout, again.stdout + again.stderr
        assert len(ops.posts) == 1 and len(events(config, "alert.sent")) == 1
        listed = listing_fits_80_columns(config, "withheld", "ops")
        no_secret_anywhere(config, run, again, listed)
    finally:
        mail.stop()
        readers.stop()


class HangingFeed:
    """A feed URL that never answers: a run fetching it stays in its collect step."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.release = threading.Event()
        feed = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                feed.asked.set()
                feed.release.wait(120)
                self.send_response(503)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/feed.xml"

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


def test_a_run_killed_mid_run_is_found_crashed_and_alerted_once(
    tmp_path: Path, prefect_server, prefect_harness: None, ops: Webhook
) -> None:
    from uuid import UUID

    from prefect.client.orchestration import get_client

    feed = HangingFeed()
    config = tmp_path / "brief.toml"
    config.write_text(
        f'[storage]\nroot = "store"\n[[sources]]\nname = "slow"\nurl = "{feed.url}"\n' + alert_channel(ops)
    )
    env = {**os.environ, "PREFECT_API_URL": prefect_server.api_url, "COLUMNS": "160"}
    worker = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "run", "--config", str(config)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        while not feed.asked.wait(0.5):  # the run has started and is collecting
            assert worker.poll() is None, worker.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "the run never fetched its feed"
        [started] = events(config, "run.started")
        assert started.payload["process"]["pid"] == worker.pid
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait(timeout=30)
        feed.stop()
    run_id = started.run_id
    with get_client(sync_client=True) as client:
        assert client.read_flow_run(UUID(run_id)).state_type.value == "RUNNING"  # Prefect cannot know
    assert ops.posts == [] and events(config, "run.crashed") == []

    checked = brief("alerts", "--check", "--config", str(config))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "checked: 1 crashed run found, 1 alert sent, 0 failed" in checked.stdout
    [crashed] = events(config, "run.crashed")
    assert crashed.run_id == run_id and crashed.payload["detected_by"] == "check"
    assert f"no process {worker.pid}" in crashed.payload["message"]
    [(_, alert)] = ops.posts
    assert "crashed: its process is gone" in alert["title"], alert
    with get_client(sync_client=True) as client:
        state = client.read_flow_run(UUID(run_id)).state
        assert (
            state is not None and state.type.value == "CRASHED" and "process is gone" in (state.message or "")
        )

    # the next check (brief serve's, the deliver-held deployment's) finds nothing new
    again = brief("alerts", "--check", "--config", str(config))
    assert "checked: 0 crashed runs found, 0 alerts sent, 0 failed" in again.stdout
    assert len(ops.posts) == 1 and len(events(config, "run.crashed")) == 1
    stats = brief("stats", "--config", str(config))
    assert "crashed" in stats.stdout, stats.stdout
    no_secret_anywhere(config, checked, again, listing_fits_80_columns(config, "run-crashed"))


def test_no_brief_by_the_deadline_is_one_alert(tmp_path: Path, prefect_harness: None, ops: Webhook) -> None:
    from flows.deliver import deliver_held

    config = tmp_path / "brief.toml"
    config.write_text(
        'timezone = "Europe/Amsterdam"\n[storage]\nroot = "store"\n'
        '[[sources]]\nname = "labnotes"\nurl = "file://feeds/labnotes/{date}.xml"\n'
        '[alerting]\nlate_after = "08:30"\n' + alert_channel(ops)
    )
    before = brief("alerts", "--check", "--now", "2025-08-06T06:29:00Z", "--config", str(config))
    assert before.returncode == 0, before.stdout + before.stderr
    assert "0 alerts sent" in before.stdout and ops.posts == []  # 08:29 in Amsterdam
    assert "no alert in the last 7 days" in before.stdout and "┃" not in before.stdout  # not an empty table
    # the deliver-held deployment's check, five minutes later
    assert deliver_held(str(config), now="2025-08-06T06:31:00Z") == []  # nothing held
    [(_, alert)] = ops.posts
    assert alert["title"] == "dailybrief alert: no brief of 2025-08-06 by 08:30 (Europe/Amsterdam)"
    assert "No run of this day has started" in alert["message"]
    assert alert["type"] == "warning"
    later = [
        brief("alerts", "--check", "--now", now, "--config", str(config))
        for now in ("2025-08-06T07:00:00Z", "2025-08-06T21:00:00Z")  # later checks of the day
    ]
    assert all("0 alerts sent" in done.stdout for done in later) and len(ops.posts) == 1
    [sent] = events(config, "alert.sent")
    assert str(sent.brief_date) == "2025-08-06" and sent.payload["cause"] == "late"
    listed = brief("alerts", "--now", "2025-08-06T21:00:00Z", "--format", "jsonl", "--config", str(config))
    [row] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert (row["date"], row["cause"], row["channel"], row["status"]) == ("2025-08-06", "late", "ops", "sent")
    assert row["what"] == "no brief of 2025-08-06 by 08:30 (Europe/Amsterdam)"
    table = brief("alerts", "--now", "2025-08-06T21:00:00Z", "--config", str(config), env={"COLUMNS": "80"})
    assert "late" in table.stdout and "2025-08-06" in table.stdout, table.stdout
    assert all(len(line) <= 80 for line in table.stdout.splitlines()), table.stdout
    no_secret_anywhere(config, before, *later, listed, table)


def test_an_alert_channel_that_is_down_never_fails_the_run_and_the_next_check_sends_it(
    tmp_path: Path, prefect_harness: None, ops: Webhook
) -> None:
    """Today's run, whose delivery channel refuses: the run completes, the alert it owes is
    recorded refused (no token in the reason), and the next check sends it once."""
    from datetime import UTC, datetime, timedelta

    from flows.daily import daily_brief

    today = datetime.now(UTC).date()
    sample = (REPO / "samples" / "feeds" / "labnotes" / "2025-08-06.xml").read_text()
    for was, day in (("Wed, 06 Aug 2025", today), ("Tue, 05 Aug 2025", today - timedelta(days=1))):
        sample = sample.replace(was, f"{day:%a, %d %b %Y}")
    (tmp_path / "feeds").mkdir()
    (tmp_path / "feeds" / f"{today}.xml").write_text(sample)
    readers = Webhook(status=500).start()
    ops.status = 500
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n'
        '[[sources]]\nname = "labnotes"\nurl = "file://feeds/{date}.xml"\non_topic = true\n'
        f'[[delivery]]\nname = "readers"\nurl = "{readers.url()}"\nretries = 0\n' + alert_channel(ops)
    )
    try:
        result = daily_brief(today.isoformat(), str(config))
    finally:
        readers.stop()
    assert result.version == 1 and result.delivery_failed == ("readers",)
    refused = [e.payload for e in events(config, "alert.failed")]
    assert [(p["cause"], p["attempt"], p["will_retry"]) for p in refused] == [
        ("delivery-failed:readers", 1, True),
        ("delivery-failed:readers", 2, False),
    ]
    assert all(TOKEN not in p["reason"] and "500" in p["reason"] for p in refused), refused
    assert ops.posts == [] and events(config, "alert.sent") == []
    still_down = brief("alerts", "--check", "--config", str(config))
    assert still_down.returncode == 1 and "1 alert could not be sent" in still_down.stderr
    assert ops.posts == [] and TOKEN not in still_down.stdout + still_down.stderr

    ops.status = 200
    checked = brief("alerts", "--check", "--config", str(config))
    assert "1 alert sent, 0 failed" in checked.stdout, checked.stdout + checked.stderr
    [(_, alert)] = ops.posts
    assert alert["title"] == f"dailybrief alert: delivery of {today} to readers failed after 1 attempt"
    assert f"Resend: brief deliver --date {today} --channel readers" in alert["message"]
    brief("alerts", "--check", "--config", str(config))
    assert len(ops.posts) == 1
    no_secret_anywhere(config, checked)
