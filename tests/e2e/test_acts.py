"""The editor's acts, one path whoever calls them (``ops/acts.py``): each act done at the command line
and at the desk, on two copies of one day, appends the same events; a held brief answered at the desk
is approved; a run publishing while an editor corrects publishes no version without the correction."""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from storage.events import Event
from storage.store import ParquetEventStore
from tasks.settings import load_settings
from tests.cli import brief
from tests.e2e.test_review import DAY
from tests.e2e.test_review import setup as sample_config
from tests.factories import far_hold_until

LOCAL = "http://127.0.0.1:8484"
# what differs between the command line and the desk by construction: where and who (and a mark's
# reason, which names where it was given), and the paths of the two copies' files
WHERE_AND_WHO = {"via", "by", "person", "files", "version_files"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> Path:
    """The samples' day run once (a brief with open questions); each test works on copies."""
    from flows.daily import daily_brief

    folder = tmp_path_factory.mktemp("acts-day")
    daily_brief(DAY, str(sample_config(folder)))
    return folder


@pytest.fixture
def hook():
    from tests.delivery_servers import Webhook

    server = Webhook().start()
    yield server
    server.stop()


def copy(built: Path, where: Path, config: str = "") -> Path:
    shutil.copytree(built, where)
    path = where / "brief.toml"
    path.write_text(path.read_text() + config)
    return path


def store_of(config: Path) -> ParquetEventStore:
    return ParquetEventStore(load_settings(str(config)).storage.root)


def document(config: Path, version: int | None = None) -> dict:
    base = Path(store_of(config).base) / "briefs"
    path = base / f"{DAY}.json" if version is None else base / DAY / f"v{version}.json"
    return json.loads(path.read_text())


def desk(config: Path, person: str = "ann"):
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    return TestClient(create_app(load_settings(str(config)), "127.0.0.1", person), base_url=LOCAL)


def csrf(client, path: str = f"/today?date={DAY}") -> str:
    return re.search(r'name="csrf" value="([^"]+)"', client.get(path).text).group(1)


def post(client, path: str, **form: str) -> str:
    """A desk form sent, as the page that carries it has it now (its token, and the version it
    shows: answers approve what their page showed); the page it leads to (a refusal fails the test)."""
    page = client.get(f"{path.split('/')[0] or ''}/{path.strip('/').split('/')[0]}?date={DAY}").text
    fields = dict(re.findall(r'name="(csrf|seen)" value="([^"]*)"', page))
    done = client.post(path, data={"date": DAY, **fields, **form})
    assert done.status_code == 200, done.text
    return done.text


def ids(config: Path) -> set[str]:
    return {e.event_id for e in store_of(config).read()}


def appended(config: Path, before: set[str]) -> Counter:
    """The events appended since ``before``, as (type, subject, payload) but for where and who."""

    def shape(e: Event) -> tuple[str, str, str]:
        payload = {k: v for k, v in e.payload.items() if k not in WHERE_AND_WHO}
        if e.event_type == "article.corrected" and str(payload.get("reason", "")).startswith("marked "):
            payload.pop("reason")  # "marked in review" / "marked at the desk": where, in words
        return e.event_type, e.subject_id, json.dumps(payload, sort_keys=True, default=str)

    return Counter(shape(e) for e in store_of(config).read() if e.event_id not in before)


def cli(config: Path, *args: str) -> str:
    done = brief(*args, "--date", DAY, "--config", str(config), env={"COLUMNS": "200", "BRIEF_USER": "bo"})
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def pair(built: Path, tmp_path: Path):
    """Two copies of the day, one for the command line, one for the desk (``config``: more config)."""

    def make(config: str = "") -> tuple[Path, Path]:
        return copy(built, tmp_path / "cli", config), copy(built, tmp_path / "desk", config)

    return make


def same_events(by_cli: Path, by_desk: Path, act_cli, act_desk) -> Counter:
    before_cli, before_desk = ids(by_cli), ids(by_desk)
    act_cli()
    act_desk()
    made_cli, made_desk = appended(by_cli, before_cli), appended(by_desk, before_desk)
    assert made_cli == made_desk
    return made_cli


def test_a_mark_at_the_command_line_and_at_the_desk_appends_the_same_events(pair) -> None:
    by_cli, by_desk = pair()
    story = document(by_cli)["items"][-1]["story_id"]
    made = same_events(
        by_cli,
        by_desk,
        lambda: cli(by_cli, "review", "--mark", f"{story}=off-topic"),
        lambda: post(desk(by_desk), "/today/mark", story=story, mark="off-topic"),
    )
    assert {t for t, _, _ in made} >= {"article.corrected", "brief.published"}
    assert story not in [i["story_id"] for i in document(by_desk)["items"]]
    assert document(by_cli)["items"] == document(by_desk)["items"]


def test_a_correction_at_the_command_line_and_at_the_desk_appends_the_same_events(pair) -> None:
    by_cli, by_desk = pair()
    story = document(by_cli)["items"][0]["story_id"]
    made = same_events(
        by_cli,
        by_desk,
        lambda: cli(by_cli, "correct", story, "--title", "A better headline", "--note", "a typo"),
        lambda: post(
            desk(by_desk),
            "/today/correct",
            story=story,
            field="title",
            value="A better headline",
            note="a typo",
        ),
    )
    assert {t for t, _, _ in made} >= {"brief.corrected", "brief.published"}
    assert (
        document(by_cli)["items"][0]["title"] == document(by_desk)["items"][0]["title"] == "A better headline"
    )


def test_a_retraction_at_the_command_line_and_at_the_desk_appends_the_same_events(pair) -> None:
    by_cli, by_desk = pair()
    story = document(by_cli)["items"][1]["story_id"]
    made = same_events(
        by_cli,
        by_desk,
        lambda: cli(by_cli, "retract", story, "--note", "withdrawn"),
        lambda: post(desk(by_desk), "/today/retract", story=story, note="withdrawn", sure="1"),
    )
    assert {t for t, _, _ in made} >= {"story.retracted", "brief.published"}
    assert document(by_cli)["retracted"] == document(by_desk)["retracted"] != []
    # undone at both: each a story.restored naming its own copy's retraction (whose id holds who
    # retracted it), the rest the same
    before_cli, before_desk = ids(by_cli), ids(by_desk)
    cli(by_cli, "retract", story, "--undo", "--note", "it stands")
    post(desk(by_desk), "/today/restore", story=story, note="it stands")
    for config, before in ((by_cli, before_cli), (by_desk, before_desk)):
        [retraction] = store_of(config).read(event_types=["story.retracted"])
        [undone] = [
            e for e in store_of(config).read(event_types=["story.restored"]) if e.event_id not in before
        ]
        assert (undone.payload["retraction"], undone.payload["note"]) == (retraction.event_id, "it stands")
    assert {t for t, _, _ in appended(by_cli, before_cli)} == {
        t for t, _, _ in appended(by_desk, before_desk)
    }
    assert document(by_cli)["items"] == document(by_desk)["items"]
    assert story in [i["story_id"] for i in document(by_desk)["items"]] and not document(by_cli).get(
        "retracted"
    )


HELD = (
    '[delivery]\nhold = true\nreview_channel = "editors"\n'
    + f'hold_until = "{far_hold_until()}"\nupdate_after = 0\n'
    '[[delivery.channels]]\nname = "editors"\nurl = "{editors}"\n'
    '[[delivery.channels]]\nname = "readers"\nurl = "{readers}"\nupdates = true\nbackoff_s = 0.05\n'
)


def held(hook) -> str:
    return HELD.format(editors=hook.url("/editors"), readers=hook.url("/readers"))


def resend(config: Path) -> None:
    from ops.acts import deliver
    from ops.workspace import resources_of

    settings = load_settings(str(config))
    deliver(settings, resources_of(settings), date.fromisoformat(DAY))


def open_questions(config: Path) -> list[dict]:
    from ops.reads import open_questions

    return open_questions(store_of(config), date.fromisoformat(DAY))


def test_answers_at_the_command_line_and_at_the_desk_append_the_same_events_and_approve_a_held_brief(
    pair, hook, tmp_path: Path
) -> None:
    by_cli, by_desk = pair(held(hook))
    resend(by_cli)
    resend(by_desk)
    asked = open_questions(by_cli)
    assert len(asked) >= 2
    given = {q["question_id"]: q["default"] for q in asked}
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(given))
    made = same_events(
        by_cli,
        by_desk,
        lambda: cli(by_cli, "review", "--answers", str(answers)),
        lambda: post(desk(by_desk), "/questions", **{f"q:{k}": v for k, v in given.items()}),
    )
    kinds = Counter(t for t, _, _ in made)
    assert kinds["confirmation.resolved"] == len(asked) and kinds["brief.approved"] == 1
    for config, who, via in ((by_cli, "bo", "review"), (by_desk, "ann", "desk")):
        [approved] = [e.payload for e in store_of(config).read(event_types=["brief.approved"])]
        assert (approved["by"], approved["via"]) == (who, via)
        readers = [
            e.payload["version"]
            for e in store_of(config).read(event_types=["brief.delivered"])
            if e.payload["channel"] == "readers"
        ]
        assert readers == [approved["version"]]  # the readers got the approved version, once


def test_a_held_brief_answered_at_the_desk_is_approved_and_sent_to_readers(pair, hook) -> None:
    _, by_desk = pair(held(hook))
    resend(by_desk)
    assert [path for path, _ in hook.posts] == ["/editors"]
    client = desk(by_desk)
    [first, *_] = open_questions(by_desk)
    done = post(client, "/questions", **{f"q:{first['question_id']}": ""})  # Enter: the default
    assert (
        re.search(r"answers recorded(: v\d+|; nothing changed: v\d+ already reads so)", done)
        and "sent to readers" in done
    )
    [approved] = [e.payload for e in store_of(by_desk).read(event_types=["brief.approved"])]
    assert (approved["by"], approved["via"]) == ("ann", "desk")
    assert "/readers" in [path for path, _ in hook.posts]
    assert "Approve v" not in client.get(f"/hold?date={DAY}").text


def test_an_approval_at_the_command_line_and_at_the_desk_appends_the_same_events(pair, hook) -> None:
    by_cli, by_desk = pair(held(hook))
    resend(by_cli)
    resend(by_desk)
    made = same_events(
        by_cli,
        by_desk,
        lambda: cli(by_cli, "approve", "--by", "bo"),
        lambda: post(desk(by_desk), "/hold/approve"),
    )
    assert Counter(t for t, _, _ in made) == {"brief.approved": 1, "brief.delivered": 1}


def test_same_story_and_two_stories_at_the_desk_append_what_the_service_appends(pair) -> None:
    """No command offers these two acts: the desk against ``ops.acts`` called as a command would."""
    from ops import acts

    by_service, by_desk = pair()
    northwind = [i for i in document(by_desk)["items"] if "Northwind" in i["title"]]
    assert len(northwind) == 2
    stories = [i["story_id"] for i in northwind]
    from ops.workspace import resources_of

    settings = load_settings(str(by_service))
    resources = resources_of(settings)
    day = date.fromisoformat(DAY)
    same_events(
        by_service,
        by_desk,
        lambda: acts.same_story(settings, resources, acts.Act(day, "bo"), stories),
        lambda: post(desk(by_desk), "/today/same", story=stories[0], other=stories[1]),
    )
    [together] = [i for i in document(by_desk)["items"] if "Northwind" in i["title"]]
    (own,) = [c["article_id"] for c in northwind[1]["citations"]]
    made = same_events(
        by_service,
        by_desk,
        lambda: acts.two_stories(settings, resources, acts.Act(day, "bo"), together["story_id"], [own]),
        lambda: post(desk(by_desk), "/today/split", story=together["story_id"], apart=own),
    )
    assert {t for t, _, _ in made} >= {"story.split", "brief.published"}
    assert document(by_service)["items"] == document(by_desk)["items"]


# -- a run publishing while an editor corrects -------------------------------------------------


def carries_every_act(config: Path) -> None:
    """Every version published, and every message sent to readers, carries every correction recorded
    before it (the latest of each item's field)."""
    store = store_of(config)
    events = sorted(store.read(), key=lambda e: (e.occurred_at, e.seq))
    corrections = [e for e in events if e.event_type == "brief.corrected"]

    def check(version: int, moment, what: str) -> None:
        items = {i["story_id"]: i for i in document(config, version)["items"]}
        latest: dict[tuple[str, str], str] = {}
        for c in corrections:
            if c.occurred_at < moment:
                latest[(c.payload["story_id"], c.payload["field"])] = c.payload["value"]
        for (story, name), value in latest.items():
            assert items[story][name] == value, f"{what} v{version} lacks the correction to {value!r}"

    for e in events:
        if e.event_type == "brief.published":
            check(e.payload["version"], e.occurred_at, "published")
        elif e.event_type == "brief.delivered" and e.payload["channel"] == "readers":
            check(e.payload["version"], e.occurred_at, "sent")


def test_a_run_composed_before_a_desk_correction_publishes_a_version_with_it(
    built: Path, tmp_path: Path, hook
):
    """The defect as it was met: the run composed its brief, the desk corrected and published v2,
    then the run published; the run's version must carry the correction."""
    from ops.policy import governed_context
    from tasks import steps

    readers = (  # every version at once: each one sent is checked
        "[delivery]\nupdate_after = 0\n"
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\nupdates = true\n'
    )
    config = copy(built, tmp_path / "day", readers)
    settings = load_settings(str(config))
    resources = steps.bootstrap(settings)
    ctx, _ = governed_context(settings, date.fromisoformat(DAY), "run-composed-early", resources)
    outcome = steps.dedup_day(ctx)
    composed, findings, scores = steps.draft(ctx, outcome)
    steps.raise_questions(ctx, outcome, composed, findings, scores)
    composed, _ = steps.run_gates(ctx, outcome, composed)

    story = composed.items[0].story_id
    done = post(desk(config), "/today/correct", story=story, field="title", value="Corrected at the desk")
    assert "correction recorded: v2" in done

    published = steps.publish(ctx, composed, recompose=lambda: steps.recompose(ctx))  # as the run's step
    steps.deliver_day(ctx)
    assert document(config)["items"][0]["title"] == "Corrected at the desk"
    assert published.version in (2, 3)  # the version of the correction, or one more: never without it
    carries_every_act(config)
    assert all("Corrected at the desk" in body["message"] for _, body in hook.posts[1:])


def test_runs_and_desk_corrections_at_once_publish_and_send_no_version_without_an_earlier_act(
    built: Path, tmp_path: Path, hook, prefect_harness: None
) -> None:
    from flows.daily import daily_brief

    readers = (  # every version at once: each one sent is checked
        "[delivery]\nupdate_after = 0\n"
        f'[[delivery.channels]]\nname = "readers"\nurl = "{hook.url("/readers")}"\nupdates = true\n'
    )
    config = copy(built, tmp_path / "day", readers)
    story = document(config)["items"][0]["story_id"]
    running = threading.Event()
    taken: list[int] = []
    failures: list[BaseException] = []

    def corrections() -> None:  # the desk, in a thread; the runs in this one (Prefect's settings)
        client = desk(config)
        try:
            while running.is_set() or not taken:
                take = len(taken) + 1
                post(client, "/today/correct", story=story, field="title", value=f"Headline, take {take}")
                taken.append(take)
        except BaseException as exc:  # reported by the test below
            failures.append(exc)

    running.set()
    editor = threading.Thread(target=corrections)
    editor.start()
    try:
        for _ in range(2):
            daily_brief(DAY, str(config))
    finally:
        running.clear()
        editor.join()
    assert not failures, failures
    n = len(taken)
    assert n >= 2
    carries_every_act(config)
    assert document(config)["items"][0]["title"] == f"Headline, take {n}"


def test_a_story_not_in_the_brief_is_refused_naming_the_briefs_items(built: Path, tmp_path: Path) -> None:
    """The refusal names the items the brief does hold (and where every story's id is listed),
    so that the act can be given again with a right id; nothing is written."""
    config = copy(built, tmp_path / "day")
    items = [item["story_id"] for item in document(config)["items"]]
    before = ids(config)
    done = brief("retract", "st-zzzzzz", "--note", "x", "--date", DAY, "--config", str(config))
    assert done.returncode == 2, done.stderr
    said = done.stderr.strip()
    assert "'st-zzzzzz' is not in the current brief of 2025-08-06 (v1), whose items are " in said, said
    assert (
        all(story in said for story in items[:6])
        and "--projection scores --config " in said
        and "' lists every story" in said
    )
    assert ids(config) == before


def test_the_command_line_and_the_desk_show_the_same_history(pair) -> None:
    """``brief history`` and the desk's History call one service (``ops.history``): for one store,
    after an act at each, they show the same versions with the same lines."""
    import html

    from flows.views.text import short_runs
    from tasks.nouns import counted

    config, _ = pair()
    story = document(config)["items"][0]["story_id"]
    cli(config, "correct", story, "--title", "A better headline", "--note", "a typo")
    post(desk(config), "/today/mark", story=document(config)["items"][-1]["story_id"], mark="off-topic")
    rows = [json.loads(line) for line in cli(config, "history", "--format", "jsonl").splitlines()]
    page = desk(config).get("/history").text
    shown = re.findall(
        r'version=(\d+)" title="published ([^"]+)">v\d+</a> \(([^)]*)\) ?'
        r'(?:<span class="summary"(?: title="([^"]*)")?>([^<]*)</span>)?',
        page,
    )
    printed = [
        (str(r["version"]), r["published_at"], counted(r["items"], "item"), ", ".join(r["types"]), r["said"])
        for r in rows
    ]
    assert [(v, at, n, html.unescape(t), html.unescape(s)) for v, at, n, t, s in shown] == [
        (v, at, n, t, short_runs(s)) for v, at, n, t, s in printed
    ]
    assert [r["version"] for r in rows] == [1, 2, 3], rows
    assert rows[1]["said"].startswith("bo: ") and rows[2]["said"].startswith("ann: "), rows
    table = cli(config, "history")
    assert all(f"v{v} ({n})" in table for v, _, n, _, _ in printed), table
