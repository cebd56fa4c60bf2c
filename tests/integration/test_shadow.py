"""Shadow runs (``[policy.shadow]``): each daily run also decides under a candidate and publishes
nothing of it; ``brief stats --shadow`` compares the two over the days run, against marks given
later and hand labels. On the real days 2025-08-05..07 of five outlets."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest

from storage.events import Event
from tasks.settings import load_settings
from tests.cli import brief
from tests.conftest import REPO
from tests.real_days import REAL_DAYS, copy_real_days

# Everything core (the unfitted ranking), and the threshold and rules at 0.5 in place of the live pair
# model: relevance, importance and clustering all decided otherwise on the real days.
CANDIDATE = '[policy]\neditorial_model = "rules"\nstory_model = "rules"\nnear_duplicate_threshold = 0.5\n'


def with_shadow(config: Path, candidate: str = CANDIDATE) -> Path:
    (config.parent / "candidate.toml").write_text(candidate)
    config.write_text(config.read_text() + '\n[policy.shadow]\ncandidate = "candidate.toml"\n')
    return config.parent / "candidate.toml"


def by_run(events: list[Event], run_id: str, event_type: str) -> dict[str, dict]:
    return {
        e.payload["story_id"]: e.payload for e in events if e.run_id == run_id and e.event_type == event_type
    }


@pytest.mark.usefixtures("prefect_harness")
def test_three_days_in_shadow_then_stats_compares_the_policies(
    real_days: Path, shared_data: Path, tmp_path: Path
) -> None:
    from flows.daily import daily_brief

    config, built = copy_real_days(real_days, tmp_path / "days")
    with_shadow(config)
    settings = load_settings(str(config))
    store = settings.storage.event_store()
    live_version = settings.policy_version()
    results = {day: daily_brief(day, str(config)) for day in REAL_DAYS}

    events = store.read(event_types=["story.clustered", "story.scored", "shadow.clustered", "shadow.scored"])
    # the live run's lineage names only events in the log, never the shadow's unstored decisions
    runs = {r.run_id for r in results.values()}
    every = store.read()
    known = {e.event_id for e in every}
    live = [e for e in every if e.run_id in runs and not e.event_type.startswith("shadow.")]
    dangling = [(e.event_type, set(e.source_event_ids) - known) for e in live]
    assert not [d for d in dangling if d[1]], [d for d in dangling if d[1]][:5]
    finished = {e.brief_date.isoformat(): e for e in store.read(event_types=["shadow.finished"])}
    assert sorted(finished) == REAL_DAYS
    candidate_version = finished[REAL_DAYS[0]].payload["candidate"]
    assert candidate_version != live_version
    differed = {
        k: sum(f.payload["differed"][k] for f in finished.values()) for k in ("relevance", "clustering")
    }
    assert differed["relevance"] > 0 and differed["clustering"] > 0, differed
    for day, result in results.items():
        run = result.run_id
        assert finished[day].run_id == run and finished[day].payload["live_policy"] == live_version
        live, shadow = by_run(events, run, "story.scored"), by_run(events, run, "shadow.scored")
        # the candidate's decisions are stored under its version, beside the run's own, which keep theirs
        assert shadow and all(
            e.policy_version == candidate_version
            for e in events
            if e.run_id == run and e.event_type.startswith("shadow.")
        )
        assert all(
            e.policy_version == live_version
            for e in events
            if e.run_id == run and e.event_type.startswith("story.")
        )
        assert {p["outcome"] for p in shadow.values()} == {"core"}  # the rules model keeps everything
        assert "off-topic" in {p["outcome"] for p in live.values()}
        # published: the live policy's decisions only, the same brief as before the shadow existed
        assert not result.changed, day
        brief_items = json.loads(Path(result.files["json"]).read_text())["items"]
        before = json.loads(Path(built[day]["files"]["json"]).read_text())["items"]
        assert [i["story_id"] for i in brief_items] == [i["story_id"] for i in before]
    # the live policy's projections do not see the shadow
    scores = brief(
        "replay",
        "--date",
        REAL_DAYS[2],
        "--projection",
        "scores",
        "--format",
        "jsonl",
        "--config",
        str(config),
    )
    assert scores.returncode == 0, scores.stderr
    replayed = [json.loads(line) for line in scores.stdout.splitlines()]
    live = by_run(events, results[REAL_DAYS[2]].run_id, "story.scored")
    assert {r["story_id"]: r["outcome"] for r in replayed} == {s: p["outcome"] for s, p in live.items()}

    # marks given after the runs: a story the live policy left out, marked off-topic (the candidate
    # kept it), and one both kept, marked core
    day = REAL_DAYS[2]
    run = results[day].run_id
    live = by_run(events, run, "story.scored")
    dropped = sorted(s for s, p in live.items() if p["outcome"] == "off-topic")[0]
    both = sorted(s for s, p in live.items() if p["outcome"] == "core")[0]
    marked = brief(
        "review",
        "--date",
        day,
        "--mark",
        f"{dropped}=off-topic",
        "--mark",
        f"{both}=core",
        "--config",
        str(config),
    )
    assert marked.returncode == 0, marked.stderr

    labels = shared_data / "labels"
    done = brief("stats", "--shadow", "--labels", str(labels), "--format", "jsonl", "--config", str(config))
    assert done.returncode == 0, done.stderr
    [found] = [json.loads(line) for line in done.stdout.splitlines()]
    assert found["candidate"] == candidate_version and found["live"] == [live_version]
    assert found["days"] == REAL_DAYS and found["differed"]["relevance"] == differed["relevance"]
    ours, theirs = found["figures"]["live"], found["figures"]["candidate"]
    assert ours["later marks"] == theirs["later marks"] == 2
    assert ours["mark agreement"] == 1.0 and theirs["mark agreement"] == 0.5
    # the hand labels of the three days: the fitted live policy keeps far fewer off-topic stories
    assert ours["labelled"] == ours["stories"] > 50 and theirs["labelled"] == theirs["stories"]
    assert ours["label precision"] > theirs["label precision"] + 0.3
    assert theirs["label recall (core)"] == 1.0 and theirs["kept"] == theirs["stories"]
    assert ours["same-story pairs"] > 0 and theirs["same-story pairs"] > 0  # the story labels of 08-05/06
    table = brief("stats", "--shadow", "--labels", str(labels), "--config", str(config))
    assert table.returncode == 0, table.stderr
    assert f"candidate {candidate_version}" in table.stdout and f"live {live_version}" in table.stdout
    assert "decided otherwise over 3 days" in table.stdout


@pytest.mark.usefixtures("prefect_harness")
def test_the_shadow_decides_what_the_candidate_would_have_decided_live(
    real_days: Path, tmp_path: Path
) -> None:
    """A day run in shadow and the same day run with the candidate pinned: the same stories, outcomes
    and importance, from the run's own vectors instead of a run of its own."""
    from flows.daily import daily_brief

    day = REAL_DAYS[2]
    shadowed, _ = copy_real_days(real_days, tmp_path / "shadowed")
    with_shadow(shadowed)
    pinned, _ = copy_real_days(real_days, tmp_path / "pinned")
    candidate = with_shadow(pinned)
    pinned.write_text(f'policy_file = "{candidate}"\n' + pinned.read_text().split("\n[policy.shadow]")[0])
    a = daily_brief(day, str(shadowed))
    b = daily_brief(day, str(pinned))
    one = load_settings(str(shadowed)).storage.event_store().read([date.fromisoformat(day)])
    two = load_settings(str(pinned)).storage.event_store().read([date.fromisoformat(day)])
    shadow_scored, live_scored = (
        by_run(one, a.run_id, "shadow.scored"),
        by_run(two, b.run_id, "story.scored"),
    )
    assert shadow_scored.keys() == live_scored.keys()
    for story, payload in live_scored.items():
        mine = shadow_scored[story]
        assert (mine["outcome"], mine["importance"], mine["representative"]) == (
            payload["outcome"],
            payload["importance"],
            payload["representative"],
        ), story
    shadow_clustered = by_run(one, a.run_id, "shadow.clustered")
    live_clustered = by_run(two, b.run_id, "story.clustered")
    assert {s: p["members"] for s, p in shadow_clustered.items()} == {
        s: p["members"] for s, p in live_clustered.items()
    }


def test_a_bad_candidate_is_one_line_at_config_load_and_nothing_is_written(tmp_path: Path) -> None:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    text = config.read_text().replace("../var/sample-store", "store")
    for candidate, says in (
        (None, "policy.shadow.candidate '{file}': no such file"),
        ("[policy]\ntop_stories = -1\n", "[policy] top_stories must be at least 0, not -1"),
        ('[policy]\neditorial_model = "nowhere.json"\n', "policy.shadow.candidate '{file}': "),
        ("[policy\n", "not valid TOML"),
        ('[policy]\n[policy.shadow]\ncandidate = "x.toml"\n', "a candidate policy has no shadow of its own"),
    ):
        file = tmp_path / "samples" / "candidate.toml"
        file.unlink(missing_ok=True)
        if candidate is not None:
            file.write_text(candidate)
        config.write_text(text + '\n[policy.shadow]\ncandidate = "candidate.toml"\n')
        for args in (("run", "--date", "2025-08-06"), ("stats", "--shadow")):
            done = brief(*args, "--config", str(config))
            assert done.returncode == 2, (candidate, done.stdout)
            assert done.stderr.count("\n") == 1 and says.format(file=file) in done.stderr, done.stderr
    assert not (tmp_path / "samples" / "store").exists()


def test_stats_shadow_without_shadow_runs_and_labels_without_shadow_are_refused(tmp_path: Path) -> None:
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    config.write_text(config.read_text().replace("../var/sample-store", "store"))
    assert brief("collect", "--config", str(config), "--date", "2025-08-06").returncode == 0
    done = brief("stats", "--shadow", "--config", str(config))
    assert done.returncode == 2 and "no shadow runs between 2025-08-06 and 2025-08-06" in done.stderr
    done = brief("stats", "--labels", str(tmp_path), "--config", str(config))
    assert done.returncode == 2 and "--labels only applies with --shadow" in done.stderr
