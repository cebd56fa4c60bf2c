"""The desk's layout in Chromium at 1000 and 390 px: a question's text sits inside its box, clear of
the border; the line an act's answer says stays in view when the page returns to the item acted on."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tasks.settings import load_settings
from tests.e2e.test_desk_consistency import built, config
from tests.e2e.test_review import DAY

__all__ = ["built", "config"]  # fixtures
SHOTS = Path("/tmp/editor3")

IN_VIEW = "(el) => { const r = el.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; }"
# each question's legend: its top below the box's top border (not drawn across by it)
LEGENDS_CLEAR = """() => Array.from(document.querySelectorAll('fieldset.question')).map(f => {
  const legend = f.querySelector('legend').getBoundingClientRect();
  const box = f.getBoundingClientRect();
  return legend.top >= box.top + parseFloat(getComputedStyle(f).borderTopWidth) - 0.5;
})"""


def test_questions_clear_their_border_and_an_acts_banner_stays_in_view(config: Path) -> None:
    import uvicorn
    from playwright.sync_api import sync_playwright

    from flows.desk.app import create_app
    from tests.e2e.test_desk import CHROMIUM, free_port

    port = free_port()
    app = create_app(load_settings(str(config)), "127.0.0.1", "ann")
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
            for width in (1000, 390):
                page = browser.new_page(viewport={"width": width, "height": 700})
                page.goto(f"http://127.0.0.1:{port}/questions?date={DAY}")
                clear = page.evaluate(LEGENDS_CLEAR)
                assert clear and all(clear), (width, clear)
                page.goto(f"http://127.0.0.1:{port}/today?date={DAY}")
                item = page.locator("section.item").last
                item.locator("details.actions > summary").click()
                form = item.locator("form.correct-summary")
                form.locator("textarea[name=value]").fill(f"A summary corrected at {width} px.")
                form.locator("button").click()
                page.wait_for_load_state()
                banner = page.locator("main > p.done[role=status]")
                assert "correction recorded" in banner.inner_text()
                assert page.evaluate("scrollY") > 0, width  # the page returned to the item, down the page
                assert banner.evaluate(IN_VIEW), width
                page.screenshot(path=str(SHOTS / f"after-correct-{width}.png"))
                page.close()
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
