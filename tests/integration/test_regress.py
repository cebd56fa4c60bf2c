"""The regression set on the published real days 2025-08-05..07: cases built from the hand labels
(``tests/fixtures/regression_cases.toml``) are frozen and pass under the shipped policy; a replay of a
day is the run's own decisions; a candidate that breaks a case is refused at adoption, and adopted
with --force (recorded); people's corrections, at the command line and at the desk, become cases."""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from datetime import date
from pathlib import Path

import pytest

from ops import regress
from storage.events import event_from_row
from storage.store import ParquetEventStore
from tasks import steps
from tasks.nouns import counted
from tasks.settings import load_settings
from tests.cli import brief
from tests.conftest import REPO
from tests.real_days import copy_real_days

CASES = tomllib.loads((REPO / "tests" / "fixtures" / "regression_cases.toml").read_text())["cases"]


def labelled(shared_data: Path) -> tuple[dict[str, dict], dict[str, dict[str, str]]]:
    """Relevance labels by link, and per date each link's label story."""
    folder = shared_data / "labels"
    relevance = {lab["id"]: lab for lab in json.loads((folder / "relevance-2025-08-05..07.json").read_text())}
    stories = {}
    for day in {c["date"] for c in CASES}:
        found = json.loads((folder / f"stories-{day}.json").read_text())
        stories[day] = {link: s["story"] for s in found["stories"] for link in s["items"]}
    return relevance, stories


def test_the_cases_say_what_the_labels_say(shared_data: Path) -> None:
    """Every case of the fixture names labelled items of its date and expects what their labels say."""
    relevance, stories = labelled(shared_data)
    assert {c["expect"] for c in CASES} == {"off-topic", "core", "lead", "same-as", "not-same"}
    for case in CASES:
        day, link = case["date"], case["story"]
        assert link in stories[day], case  # an item of that day's feeds
        if case["expect"] in ("same-as", "not-same"):
            assert case["other"] in stories[day], case
            same = stories[day][link] == stories[day][case["other"]]
            assert same == (case["expect"] == "same-as"), case
            continue
        label = relevance[link]
        assert day in label["snapshots"], case
        wanted = {
            "off-topic": ("none", range(0, 1)),
            "core": ("core", range(0, 4)),
            "lead": ("core", range(3, 4)),
        }[case["expect"]]
        assert label["relevance"] == wanted[0] and label["importance"] in wanted[1], case


def add(config: Path, case: dict, *more: str) -> str:
    expect = case["expect"] + (f":{case['other']}" if case.get("other") else "")
    done = brief(
        "regress",
        "add",
        "--date",
        case["date"],
        "--story",
        case["story"],
        "--expect",
        expect,
        "--note",
        "from the labels",
        "--by",
        "labels",
        *more,
        "--config",
        str(config),
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_real_day_cases_pass_and_replay_without_the_days(real_days: Path, tmp_path: Path) -> None:
    config, _ = copy_real_days(real_days, tmp_path / "days")
    for case in CASES:
        said = add(config, case)
        assert "the policy in force" in said and "passes" in said, said
    store = load_settings(str(config)).storage.event_store()
    found = regress.cases(store)
    assert len(found) == len(CASES)
    assert {e.brief_date.isoformat() for e in found} == {c["date"] for c in CASES}
    # cases of one day frozen with nothing new between them share one frozen copy
    assert len({e.payload["facts"]["digest"] for e in found}) == 3

    replayed = brief("evaluate", "--regression", "--config", str(config))
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert f"{counted(len(CASES), 'case')}, {len(CASES)} pass" in replayed.stdout

    # the cases leave with the log: their events, and the facts they froze, one file each
    exported = brief(
        "export", "events", "--start", "2025-08-05", "--end", "2025-08-07", "--format", "jsonl",
        "--out", str(tmp_path / "export"), "--config", str(config),
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    manifest = json.loads((tmp_path / "export" / "manifest.json").read_text())
    assert manifest["counts"]["2025-08-06"]["regression.case_added"] >= 1
    for case in found:
        facts = case.payload["facts"]
        lines = (tmp_path / "export" / manifest["regression_facts"][facts["digest"]]).read_text().splitlines()
        assert len(lines) == facts["events"] and any('"article.collected"' in line for line in lines)

    # the same case again writes nothing
    again = add(config, CASES[0])
    assert "already in the set" in again
    assert len(regress.cases(store)) == len(CASES)

    # a root that holds only the cases and their frozen facts: no day's partitions at all
    bare = ParquetEventStore(str(tmp_path / "bare"))
    bare.append(found)
    shutil.copytree(Path(store.base) / "policies" / "blobs", tmp_path / "bare" / "policies" / "blobs")
    assert {d.isoformat() for d in bare.days()} == {c["date"] for c in CASES}
    assert not bare.read(event_types=["article.collected"])
    settings = load_settings(str(config))
    results = regress.replay(settings, steps.bootstrap(settings, bare), regress.cases(bare))
    assert all(r.passed for r in results), [regress.describe(r) for r in results if not r.passed]


def test_a_replay_decides_as_the_run_did(real_days: Path, tmp_path: Path) -> None:
    """Replaying a frozen day under the policy a run used gives that run's stories, outcomes and lead."""
    config, results = copy_real_days(real_days, tmp_path / "days")
    settings = load_settings(str(config))
    store = settings.storage.event_store()
    day = date(2025, 8, 6)
    run = results[day.isoformat()]["run_id"]
    scored = {
        e.payload["story_id"]: e.payload["outcome"]
        for e in store.read([day], event_types=["story.scored"])
        if e.run_id == run
    }
    clustered = {
        tuple(e.payload["members"])
        for e in store.read([day], event_types=["story.clustered"])
        if e.run_id == run
    }
    facts = regress.freeze(store, settings, day)
    replayed = regress.replay_day(settings, steps.bootstrap(settings, store), day, regress.thaw(store, facts))
    assert set(replayed.scores) == clustered
    assert {s.story_id: s.outcome for s in replayed.scores.values()} == scored
    published = json.loads(Path(results[day.isoformat()]["files"]["json"]).read_text())
    assert replayed.lead == published["items"][0]["story_id"]
    assert len(scored) > 50 and "off-topic" in scored.values()


def candidate(folder: Path, **settings: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "tasks" / "models" / "ai.json", folder / "model.json")
    lines = [
        "[policy]",
        'editorial_model = "model.json"',
        *(f"{k} = {json.dumps(v)}" for k, v in settings.items()),
    ]
    (folder / "candidate.toml").write_text("\n".join(lines) + "\n")
    return folder / "candidate.toml"


def test_a_candidate_that_breaks_a_case_is_refused_unless_forced(real_days: Path, tmp_path: Path) -> None:
    config, _ = copy_real_days(real_days, tmp_path / "days")
    store = load_settings(str(config)).storage.event_store()
    off_topic = next(c for c in CASES if c["expect"] == "off-topic")
    same = next(c for c in CASES if c["expect"] == "same-as")  # clustering: no editorial model changes it
    add(config, off_topic)
    add(config, same)
    [case_id] = [e.payload["case_id"] for e in regress.cases(store) if e.payload["expect"] == "off-topic"]
    # no topic filter: every story is core, the off-topic case is broken
    unfiltered = tmp_path / "rules.toml"
    unfiltered.write_text('[policy]\neditorial_model = "rules"\n')
    listed = brief("evaluate", "--regression", "--policy", str(unfiltered), "--config", str(config))
    assert listed.returncode == 1
    assert "candidate policy" in listed.stdout and "2 cases, 1 pass" in listed.stdout
    assert (
        "it breaks 1 the policy in force passes" in listed.stdout
        and "broken by the candidate" in listed.stdout
    )
    assert case_id in listed.stdout and "off-topic" in listed.stdout

    refused = brief("policy", "adopt", str(unfiltered), "--reason", "no filter", "--config", str(config))
    assert refused.returncode == 2
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert case_id in refused.stderr and "--force" in refused.stderr
    assert not store.read(event_types=["policy.adopted"])
    assert not (Path(store.base) / "policies" / "adopted").exists()

    # a candidate that keeps every case is adopted, and says so
    kept = brief(
        "policy",
        "adopt",
        str(candidate(tmp_path / "c", quick_links=7)),
        "--reason",
        "shorter",
        "--by",
        "ana",
        "--config",
        str(config),
    )
    assert kept.returncode == 0, kept.stderr
    assert "regression: 2 of 2 cases kept" in kept.stdout
    [first] = store.read(event_types=["policy.adopted"])
    assert first.schema_version == 2
    assert first.payload["regression"] == {
        "cases": 2,
        "passed_current": 2,
        "passed_candidate": 2,
        "broken": [],
        "forced": False,
    }

    forced = brief(
        "policy",
        "adopt",
        str(unfiltered),
        "--force",
        "--reason",
        "trying no filter for a week",
        "--by",
        "bo",
        "--config",
        str(config),
    )
    assert forced.returncode == 0, forced.stderr
    said = " ".join(forced.stdout.split())  # in 80 columns, wrapped between words
    assert f"broke 1 the policy before passed: {case_id} (adopted with --force)" in said
    last = store.read(event_types=["policy.adopted"])[-1]
    assert last.payload["reason"] == "trying no filter for a week" and last.payload["by"] == "bo"
    assert last.payload["regression"] == {
        "cases": 2,
        "passed_current": 2,
        "passed_candidate": 1,
        "broken": [case_id],
        "forced": True,
    }
    shown = brief("policy", "show", "--config", str(config))
    assert "adopted with --force" in " ".join(shown.stdout.split())


def test_an_adoption_made_before_the_regression_set_reads_back(tmp_path: Path) -> None:
    """A v1 ``policy.adopted`` row is upcast: no regression check recorded."""
    row = {
        "event_id": "0" * 32,
        "event_type": "policy.adopted",
        "schema_version": 1,
        "occurred_at": "2025-08-06T10:00:00+00:00",
        "seq": 0,
        "brief_date": date(2025, 8, 6),
        "run_id": "policy-x",
        "subject_id": "policy-v",
        "source_event_ids": [],
        "produced_by": "policy@1",
        "policy_version": "v",
        "payload": json.dumps(
            {"version": "v", "policy": {}, "artefacts": [], "by": "ana", "reason": "r", "source": "f"}
        ),
    }
    from datetime import datetime

    row["occurred_at"] = datetime.fromisoformat(row["occurred_at"])
    event = event_from_row(row)
    assert event.schema_version == 2 and event.payload["regression"] is None


def test_bad_cases_are_refused_in_one_line_and_write_nothing(real_days: Path, tmp_path: Path) -> None:
    config, _ = copy_real_days(real_days, tmp_path / "days")
    store = load_settings(str(config)).storage.event_store()
    blobs = Path(store.base) / "policies" / "blobs"
    link = CASES[0]["story"]
    archive = "https://www.anthropic.com/news/claude-2"  # collected from the feed's archive: not news
    collected = {
        e.payload.get("url") for e in store.read([date(2025, 8, 5)], event_types=["article.collected"])
    }
    assert archive in collected
    tries = [
        (("--date", "2025-08-05", "--story", link, "--expect", "important"), "is not an expectation"),
        (("--date", "2025-08-05", "--story", link, "--expect", "same-as"), "names no other story"),
        (("--date", "2025-08-05", "--story", link, "--expect", "core:x"), "only same-as and not-same"),
        (("--date", "2025-08-05", "--story", link, "--expect", f"not-same:{link}"), "the same article"),
        (("--date", "2025-08-05", "--story", "st-0000", "--expect", "core"), "no story, article or link"),
        (("--date", "2025-08-05", "--story", archive, "--expect", "core"), "was not news on 2025-08-05"),
        (("--date", "2025-09-01", "--story", link, "--expect", "core"), "no stories on 2025-09-01"),
        (("--date", "08/05", "--story", link, "--expect", "core"), "is not a date"),
    ]
    for args, said in tries:
        done = brief("regress", "add", *args, "--config", str(config))
        assert done.returncode == 2, (args, done.stdout)
        assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not regress.cases(store)
    assert not blobs.exists() or not any(blobs.glob("*.events"))
    empty = brief("evaluate", "--regression", "--config", str(config))
    assert empty.returncode == 0 and "no regression cases yet" in empty.stdout
    neither = brief("evaluate", "--config", str(config))
    assert neither.returncode == 2 and "--regression" in neither.stderr


def test_corrections_become_cases_at_the_command_line_and_at_the_desk(
    real_days: Path, tmp_path: Path
) -> None:
    """A mark given with --as-case, and a mark and a same-story answer given at the desk with the box
    ticked, are cases whose source is the correction; the mark against the model fails under it."""
    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    config, _ = copy_real_days(real_days, tmp_path / "days")
    settings = load_settings(str(config))
    store = settings.storage.event_store()
    day = "2025-08-06"
    genie = next(c for c in CASES if c["date"] == day and c["expect"] == "core")["story"]
    marked = brief(
        "review", "--date", day, "--mark", f"{genie}=off-topic", "--as-case", "--config", str(config)
    )
    assert marked.returncode == 0, marked.stderr
    assert "kept as regression case" in marked.stdout
    [case] = regress.cases(store)
    [mark] = [e for e in store.read(event_types=["article.corrected"]) if e.payload["field"] == "relevance"]
    assert case.payload["expect"] == "off-topic" and case.payload["correction"] == mark.event_id
    assert case.source_event_ids == (mark.event_id,)
    # the model calls it core: with people's marks held out, the policy in force fails the case
    failing = brief("evaluate", "--regression", "--config", str(config))
    assert failing.returncode == 1 and "1 case, 0 pass" in failing.stdout

    desk = TestClient(create_app(settings, "127.0.0.1", "ann"), base_url="http://127.0.0.1:8484")
    page = desk.get(f"/today?date={day}").text
    assert 'name="as_case"' in page
    stories = re.findall(r'data-story="([^"]+)"', page)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    done = desk.post(
        "/today/mark", data={"story": stories[1], "mark": "lead", "date": day, "csrf": csrf, "as_case": "1"}
    )
    assert done.status_code == 200 and "kept as 1 example later scoring is checked against" in done.text
    page = desk.get(f"/today?date={day}").text
    done = desk.post(
        "/today/same",
        data={"story": stories[2], "other": stories[3], "date": day, "csrf": csrf, "as_case": "1"},
    )
    assert done.status_code == 200, done.text
    plain = desk.post("/today/mark", data={"story": stories[4], "mark": "core", "date": day, "csrf": csrf})
    assert plain.status_code == 200 and "kept as" not in plain.text
    found = regress.cases(store)
    assert [c.payload["expect"] for c in found] == ["off-topic", "lead", "same-as"]
    assert all(c.payload["correction"] for c in found)
    assert found[1].payload["by"] == "ann" and found[1].payload["via"] == "desk"
    assert found[1].payload["story_id"] == stories[1]


@pytest.mark.parametrize("expect", ["off-topic", "same-as:x"])
def test_expectations_parse(expect: str) -> None:
    parsed = regress.parse_expectation(expect)
    assert parsed.kind == expect.split(":")[0] and (parsed.other == "x") == (":" in expect)
