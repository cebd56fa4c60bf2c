"""The desk's Runs page on a phone (Chromium, 390 px): each run's status is in view beside its start,
its id is one short line whose title (and link) holds the whole id, and nothing makes the page
scroll sideways. At 1000 px the table keeps its columns."""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path

from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.e2e.test_desk_consistency import built, config
from tests.e2e.test_review import DAY

__all__ = ["built", "config"]  # fixtures
SHOTS = Path("/tmp/editor3")

ROWS = """() => Array.from(document.querySelectorAll('tr.run')).map(row => {
  const status = row.querySelector('td.status b').getBoundingClientRect();
  const id = row.querySelector('.run-id');
  const box = id.getBoundingClientRect();
  const line = parseFloat(getComputedStyle(id).lineHeight) || 20;
  return {status: [status.left, status.right, status.width], idLines: box.height / line,
          title: id.getAttribute('title'), shown: id.textContent};
})"""


def test_the_runs_page_reads_on_a_phone(config: Path) -> None:
    import uvicorn
    from playwright.sync_api import sync_playwright

    from flows.daily import daily_brief
    from flows.desk.app import create_app
    from storage.errors import BriefError
    from tests.e2e.test_desk import CHROMIUM, free_port

    with contextlib.suppress(BriefError):  # a failed run too: its error shows under its status
        daily_brief("2025-08-05", str(config))
    settings = load_settings(str(config))
    runs = {e.run_id for e in ParquetEventStore(settings.storage.root).read(event_types=["run.started"])}
    assert len(runs) >= 2
    port = free_port()
    app = create_app(settings, "127.0.0.1", "ann")
    server = uvicorn.Server(uvicorn.Config(app, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    SHOTS.mkdir(exist_ok=True)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 390, "height": 800})
            page.goto(f"http://127.0.0.1:{port}/runs?date={DAY}")
            page.screenshot(path=str(SHOTS / "runs-390.png"), full_page=True)
            rows = page.evaluate(ROWS)
            assert {r["title"] for r in rows} == runs  # every run, its whole id in the title
            for row in rows:
                left, right, width = row["status"]
                assert width > 0 and left >= 0 and right <= 390, row  # the status is on the screen
                assert row["idLines"] < 1.5, row  # the id is one line
                assert row["shown"] != row["title"] and len(row["shown"]) <= 13, row
                assert row["title"].startswith(row["shown"].rstrip("…")), row
            assert page.evaluate("document.documentElement.scrollWidth") <= 390  # no sideways scroll
            page.close()
            wide = browser.new_page(viewport={"width": 1000, "height": 800})
            wide.goto(f"http://127.0.0.1:{port}/runs?date={DAY}")
            assert wide.locator("table.runs tr.head").is_visible()  # the columns' names, on a wide screen
            assert wide.evaluate(ROWS)[0]["idLines"] < 1.5
            wide.close()
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
