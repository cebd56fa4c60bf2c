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
                banner = page.locator("p.done[role=status]")
                assert "correction recorded" in banner.inner_text()
                assert page.evaluate("scrollY") > 0, width  # the page returned to the item, down the page
                assert banner.evaluate(IN_VIEW), width
                page.screenshot(path=str(SHOTS / f"after-correct-{width}.png"))
                page.close()
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)


# the element drawn at the centre of ``el`` is ``el`` or inside it: nothing (a banner) lies over it
UNCOVERED = """(el) => { const r = el.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return hit !== null && (hit === el || el.contains(hit)); }"""


def test_an_acts_banner_never_covers_the_item_acted_on(config: Path) -> None:
    """After a correction and after a retraction, at 1000 and 390 px, the item's headline (for a
    retraction, its note naming the headline) is on screen and nothing is drawn over it; the
    act's line is on screen too."""
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
                page.goto(f"http://127.0.0.1:{port}/today?date={DAY}")
                item = page.locator("section.item").last
                story = item.get_attribute("data-story")
                item.locator("details.actions > summary").click()
                form = item.locator("form.correct-summary")
                form.locator("textarea[name=value]").fill(f"A summary corrected at {width} px.")
                form.locator("button").click()
                page.wait_for_load_state()
                banner = page.locator("p.done[role=status]")
                assert "correction recorded" in banner.inner_text()
                headline = page.locator(f"section.item[data-story='{story}'] h3")
                assert headline.evaluate(IN_VIEW), width
                assert headline.evaluate(UNCOVERED), (width, "correction")
                assert banner.evaluate(IN_VIEW), width
                page.screenshot(path=str(SHOTS / f"item-corrected-{width}.png"))
                item = page.locator(f"section.item[data-story='{story}']")
                if not item.locator("details.actions[open]").count():
                    item.locator("details.actions > summary").click()
                retract = item.locator("form", has=page.locator("button.danger"))
                retract.locator("input[name=note]").fill(f"withdrawn at {width} px")
                retract.locator("input.sure").check()
                retract.locator("button.danger").click()
                page.wait_for_load_state()
                assert "retraction recorded" in banner.inner_text()
                note = page.locator(f"div.retracted-item[data-retracted='{story}'] p.retracted")
                assert note.evaluate(IN_VIEW), width
                assert note.evaluate(UNCOVERED), (width, "retraction")
                assert banner.evaluate(IN_VIEW), width
                page.screenshot(path=str(SHOTS / f"after-retract-{width}.png"))
                page.close()
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
