"""What a new editor's first day found, at the desk (over HTTP against its application) and at the
terminal (``brief`` as the console script runs it), on the samples' day: a day with no brief is said
to have none, and why, by every command and page that reads it."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest

from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.cli import brief
from tests.e2e.test_desk_trial import built, client, config  # noqa: F401 (fixtures)

WITHHELD = "2025-08-05"  # the samples hold no archive for it: its run withholds the brief


def text_of(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page))


def test_review_of_a_day_with_no_brief_says_so_and_why_as_correct_does(config: Path) -> None:  # noqa: F811
    from flows.daily import daily_brief
    from storage.errors import BriefError

    with pytest.raises(BriefError, match="withheld"):
        daily_brief(WITHHELD, str(config))
    store = ParquetEventStore(load_settings(str(config)).storage.root)
    [held] = store.read(event_types=["brief.withheld"])
    review = brief("review", "--date", WITHHELD, "--config", str(config))
    assert review.returncode == 2, review.stdout
    assert review.stdout == ""
    # withheld, by which run, when and why; not a run again, which withholds it again
    assert review.stderr.strip() == (
        f"error: no brief is published for {WITHHELD}: it was withheld by its run {held.run_id} at "
        f"{held.occurred_at:%Y-%m-%d %H:%M} UTC, because {held.payload['reason']}; nothing to review or act on"
    )
    assert "brief run" not in review.stderr
    traced = brief("trace", "--date", WITHHELD, "--story", "st-x", "--config", str(config))
    assert traced.returncode == 2 and "brief run" not in traced.stderr, traced.stderr
    assert f"it was withheld by its run {held.run_id}" in traced.stderr, traced.stderr
    correct = brief("correct", "abc", "--title", "x", "--date", WITHHELD, "--config", str(config))
    assert (correct.returncode, correct.stderr) == (2, review.stderr)
    never = brief("review", "--date", "2025-08-04", "--config", str(config))  # no run of that day
    assert never.returncode == 2
    assert never.stderr.strip() == (
        f"error: no brief is published for 2025-08-04; run 'brief run --date 2025-08-04 --config {config}' first"
    )
    # the desk's Questions page of the day says what Today says of it, not "No open questions"
    page = client(config).get(f"/questions?date={WITHHELD}")
    assert page.status_code == 200
    said = text_of(page.text)
    assert "No open questions" not in said
    assert f"No brief is published for {WITHHELD}: the run {held.run_id} withheld it" in said
    assert client(config).get("/questions?date=2025-08-04").status_code == 400


def test_a_withheld_run_is_said_withheld_with_its_reason_at_the_terminal_and_on_runs(config: Path) -> None:  # noqa: F811
    """A run that withholds the brief is not "step 'publish' failed: BriefWithheld: …" at the terminal,
    nor "failed" on the desk's Runs page: it is withheld, and why."""
    ran = brief("run", "--date", WITHHELD, "--config", str(config))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    store = ParquetEventStore(load_settings(str(config)).storage.root)
    [held] = store.read(event_types=["brief.withheld"])
    said = ran.stderr.strip().splitlines()[-1]
    assert said.startswith(f"the brief of {WITHHELD} is withheld: {held.payload['reason']}"), said
    assert "BriefWithheld" not in ran.stderr and "failed: " not in said.split(" is withheld: ")[0]
    page = client(config).get(f"/runs?date={WITHHELD}")
    assert page.status_code == 200
    row = re.search(rf'<tr class="run (\w+)" data-run="{held.run_id}">(.*?)</tr>', page.text, re.DOTALL)
    assert row is not None, page.text
    assert row.group(1) == "withheld"
    status = text_of(re.search(r'<td class="status">(.*?)</td>', row.group(2), re.DOTALL).group(1))
    assert status.startswith("withheld"), status
    assert held.payload["reason"] in html.unescape(status)
    assert "BriefWithheld" not in status and "failed" not in status.split(held.payload["reason"])[0]


@pytest.fixture
def people(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A desk whose people sign in (ann), on an empty store."""
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    settings = tmp_path / "brief.toml"
    settings.write_text('[storage]\nroot = "store"\n\n[desk.people]\nann = "DESK_TOKEN_ANN"\n')
    monkeypatch.setenv("DESK_TOKEN_ANN", "a-long-random-token-for-ann")
    app = create_app(load_settings(str(settings)), "127.0.0.1", ui_url="http://127.0.0.1:4200")
    return lambda: TestClient(app, base_url="http://127.0.0.1:8484")


def sign_in(browser, then: str | None) -> str:
    """Sign ann in from the sign-in page (``then``: the ``next`` its form sends); where it leads."""
    csrf = re.search(r'name="csrf" value="([^"]+)"', browser.get("/signin").text).group(1)
    form = {"name": "ann", "token": "a-long-random-token-for-ann", "csrf": csrf}
    answer = browser.post(
        "/signin", data=form | ({"next": then} if then is not None else {}), follow_redirects=False
    )
    assert answer.status_code == 303, answer.text
    return answer.headers["location"]


def test_signing_in_leads_to_the_page_asked_for(people) -> None:
    browser = people()
    asked = browser.get("/runs?date=2025-08-06&x=a%20b", follow_redirects=False)
    assert asked.status_code == 303
    assert asked.headers["location"] == "/signin?next=%2Fruns%3Fdate%3D2025-08-06%26x%3Da%2520b"
    form = browser.get(asked.headers["location"]).text
    kept = re.search(r'name="next" value="([^"]+)"', form)
    assert kept is not None and html.unescape(kept.group(1)) == "/runs?date=2025-08-06&x=a%20b"
    assert sign_in(browser, html.unescape(kept.group(1))) == "/runs?date=2025-08-06&x=a%20b"
    assert browser.get("/runs?date=2025-08-06&x=a%20b").status_code == 200
    assert sign_in(people(), None) == "/today"  # nothing asked for: Today


@pytest.mark.parametrize(
    "elsewhere",
    [
        "https://evil.example/today",
        "//evil.example/today",
        "///evil.example",
        "/\\evil.example",
        "\\\\evil.example",
        "/\t/evil.example",
        "/\n/evil.example",
        "javascript:alert(1)",
        "http:/evil.example",
        "evil.example/today",
        "/signin?next=//evil.example",
        "",
    ],
)
def test_signing_in_never_leads_off_the_desk(people, elsewhere: str) -> None:
    assert sign_in(people(), elsewhere) == "/today"
    form = people().get("/signin", params={"next": elsewhere}).text
    assert 'name="next"' not in form  # the page does not carry it either


def test_trace_shows_the_headline_as_readers_have_it_and_run_ids_whole(config: Path) -> None:  # noqa: F811
    import json

    from tests.e2e.test_review import DAY

    root = load_settings(str(config)).storage.root
    first = json.loads((Path(root) / "briefs" / f"{DAY}.json").read_text())["items"][0]
    story, was = first["story_id"], first["title"]
    done = brief("correct", story, "--title", "A headline, corrected", "--date", DAY, "--config", str(config))
    assert done.returncode == 0, done.stderr
    traced = brief("trace", "--date", DAY, "--story", story, "--config", str(config), env={"COLUMNS": "80"})
    assert traced.returncode == 0, traced.stderr
    lines = traced.stdout.splitlines()
    assert lines[1] == "“A headline, corrected”", traced.stdout
    said = " ".join(traced.stdout.split())
    assert f"(headline corrected by {first_person(config)}; it was “{was}”)" in said
    store = ParquetEventStore(root)
    [v2] = [e for e in store.read(event_types=["brief.published"]) if e.payload["version"] == 2]
    assert f"· run {v2.run_id} ·" in said  # whole, not its first 8 characters
    assert v2.run_id.startswith("correct-") and len(v2.run_id) > 8


def first_person(settings: Path) -> str:
    """Who the correction was recorded by (the command's default: $BRIEF_USER or $USER)."""
    store = ParquetEventStore(load_settings(str(settings)).storage.root)
    return store.read(event_types=["brief.corrected"])[0].payload["by"]


def on_a_terminal(*args: str) -> tuple[int, str]:
    """``brief ARGS`` as a new process on a terminal (a pseudo-terminal: spinners are drawn); its
    exit code and all it showed."""
    import os
    import pty
    import subprocess
    import sys

    from tests.conftest import REPO

    main, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", *args],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=terminal,
        env={**os.environ, "COLUMNS": "120", "TERM": "xterm"},
    )
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 4096)
        except OSError:  # the process ended: its side of the terminal is closed
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    return process.wait(timeout=120), shown.decode("utf-8", "replace")


def test_an_act_with_no_delivery_channels_never_says_delivering(config: Path) -> None:  # noqa: F811
    import json

    from tests.e2e.test_review import DAY

    settings = load_settings(str(config))
    assert not settings.delivery.channels  # the samples deliver nowhere
    story = json.loads((Path(settings.storage.root) / "briefs" / f"{DAY}.json").read_text())["items"][1]
    code, shown = on_a_terminal(
        "review", "--date", DAY, "--mark", f"{story['story_id']}=lead", "--config", str(config)
    )
    assert code == 0, shown
    assert "re-rendering the brief" in shown  # the spinner was drawn
    assert "delivering" not in shown and "delivered" not in shown, shown
    assert "1 mark recorded" in shown


def test_a_retraction_is_said_at_the_top_of_the_page_as_in_every_copy_of_the_brief(config: Path) -> None:  # noqa: F811
    from ops import reads
    from tasks.render import render, view
    from tests.e2e.test_desk_trial import csrf_of
    from tests.e2e.test_review import DAY

    desk = client(config)
    page = desk.get(f"/today?date={DAY}").text
    story = re.findall(r'data-story="([^"]+)"', page)[2]
    seen = re.search(r'name="seen" value="(\d+)"', page).group(1)
    act = {"story": story, "note": "The report was wrong", "sure": "1", "date": DAY, "seen": seen}
    done = desk.post("/today/retract", data=act | {"csrf": csrf_of(page)})
    assert done.status_code == 200, done.text
    today = desk.get(f"/today?date={DAY}").text
    retracted = today.index(f'data-retracted="{story}"')
    assert "The report was wrong" in today[retracted : retracted + 400]
    assert retracted < today.index('<section class="item"'), "the retraction is not above the first item"
    assert today.index(">Retracted</h2>") < today.index('<section class="item"')
    # the brief readers get says it first too: its Markdown and HTML files, its email
    settings = load_settings(str(config))
    briefs = Path(settings.storage.root) / "briefs"
    markdown, page_file = (briefs / f"{DAY}.md").read_text(), (briefs / f"{DAY}.html").read_text()
    assert markdown.index("## Retracted") < markdown.index("### 1. ")
    assert page_file.index('class="note retracted"') < page_file.index("<h3")
    document = reads.document(ParquetEventStore(settings.storage.root), day_of(DAY))
    email = render("email", view(document, settings.category_labels(), numbered=False))
    assert email.index("The report was wrong") < email.index(document.items[0].title)


def day_of(text: str):
    from datetime import date

    return date.fromisoformat(text)


def test_a_same_story_answer_is_said_as_two_headlines_joined_at_the_terminal_and_the_desk(
    config: Path,  # noqa: F811
) -> None:
    import json

    from tests.e2e.test_review import DAY

    store = ParquetEventStore(load_settings(str(config)).storage.root)
    [same] = [
        e.payload
        for e in store.read(event_types=["confirmation.requested"])
        if e.payload["field"] == "same_story"
    ]
    pair = same["subject"].split("|")
    titles = {e.subject_id: e.payload["title"] for e in store.read(event_types=["article.collected"])}
    joined = f"joined “{titles[pair[0]]}” and “{titles[pair[1]]}” into one story"
    answers = config.parent / "answers.json"
    answers.write_text(json.dumps({same["question_id"]: "yes"}))
    review = brief("review", "--date", DAY, "--answers", str(answers), "--config", str(config))
    assert review.returncode == 0, review.stderr
    assert joined in " ".join(review.stdout.split()), review.stdout  # the terminal says the merge
    history = brief("history", "--config", str(config))
    assert f"v2 (4 items) {first_person_or_user(store)}: {joined}" in " ".join(history.stdout.split())

    desk = client(config)
    diff = text_of(desk.get(f"/diff?date={DAY}&a=1&b=2").text)
    assert f"caused by {joined} —" in diff, diff
    assert "art-" not in diff.split("caused by", 1)[1].split("story.merged")[0]  # no ids in its words
    assert f"{joined}" in text_of(desk.get("/history").text)
    [merged] = store.read(event_types=["story.merged"])
    story = [s for s in re.findall(r'data-story="([^"]+)"', desk.get(f"/today?date={DAY}").text)]
    page = next(
        text_of(p)
        for p in (desk.get(f"/story?id={s}").text for s in story)
        if merged.event_id in p or joined in text_of(p)
    )
    assert joined in page
    assert "(proposed: 0." not in page and "same story: art-" not in page


def first_person_or_user(store: ParquetEventStore) -> str:
    """Who the same-story answer was given by, as its event records it."""
    return store.read(event_types=["confirmation.resolved"])[0].payload["person"]
