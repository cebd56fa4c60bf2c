"""What a person sees of a run of the sample, as ``brief run`` prints it, and what its readers get.

The sample day is run three times through the command (in this process, on the session's Prefect
server): as it is, again, and with ``--verbose``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tasks.settings import load_settings
from tests.cli import Completed, brief
from tests.conftest import REPO
from tests.unit.test_reader_outputs import OPERATOR_HINT

DAY = "2025-08-06"
STEPS = ["collect", "dedup", "score", "analyze", "factcheck", "questions", "gate", "publish", "compact"]
# what Prefect, Great Expectations and the embedding model print when nobody stops them
NOISE = re.compile(
    r"\| (DEBUG|INFO|WARNING|ERROR) +\||Flow run '|Task run '|Loading weights|it/s\]|Calculating Metrics"
)
WIDE = {"COLUMNS": "80"}


def same_url_duplicates(config: Path) -> list[str]:
    store = load_settings(str(config)).storage.event_store()
    return [
        e.event_id
        for e in store.read(event_types=["article.duplicate_detected"])
        if e.payload["reason"] == "same_url"
    ]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, prefect_harness: None) -> dict:
    folder = tmp_path_factory.mktemp("run-output")
    shutil.copytree(REPO / "samples", folder / "samples")
    config = folder / "samples" / "brief.toml"
    config.write_text(config.read_text().replace('root = "../var/sample-store"', 'root = "store"'))
    first = brief("run", "--config", str(config), "--date", DAY, env=WIDE)
    duplicates_first = same_url_duplicates(config)
    again = brief("run", "--config", str(config), "--date", DAY, env=WIDE)
    duplicates_again = same_url_duplicates(config)
    verbose = brief("run", "--verbose", "--config", str(config), "--date", DAY, env=WIDE)
    return {
        "config": config,
        "first": first,
        "again": again,
        "verbose": verbose,
        "duplicates": (duplicates_first, duplicates_again),
    }


def test_a_run_prints_one_line_per_step_and_the_brief(runs: dict) -> None:
    first: Completed = runs["first"]
    assert first.returncode == 0, first.stdout + first.stderr
    lines = first.stdout.splitlines()
    assert [line.split()[0] for line in lines[: len(STEPS)]] == STEPS, first.stdout
    assert all(re.match(r"^\w+ +\d+\.\d s  \S", line) for line in lines[: len(STEPS)]), first.stdout
    brief_lines = lines[len(STEPS) :]
    assert brief_lines[0].startswith(f"Brief for {DAY} (v1, new version): 5 items in "), first.stdout
    # the last two: "1 left out: … says why", "3 questions for review: 'brief review …' asks them"
    kinds = ["md", "html", "json", "log", "policy", "1", "3"]
    assert [line.split()[0] for line in brief_lines[1:]] == kinds, first.stdout
    assert re.match(r"^  policy [0-9a-f]{12} from the config \(none adopted\)$", brief_lines[-3]), (
        first.stdout
    )
    assert brief_lines[-1] == (
        f"  3 questions for review: 'brief review --date {DAY} --config {runs['config']}' asks them"
    ), first.stdout
    # every line in 80 columns, the steps' too; but paths, which are never broken (copied whole), and
    # the commands that name the config by its path
    path_lines = (
        r"^  (md|html|json|log) |^  \d+ left out: 'brief replay .* --config |^  \d+ questions? for review: "
    )
    assert max(len(line) for line in lines if not re.match(path_lines, line)) <= 80
    assert not NOISE.search(first.stdout + first.stderr), first.stdout + first.stderr
    assert first.stderr == ""
    # everything else went to the run's log file, under the store root
    log = Path(brief_lines[-4].split(maxsplit=1)[1])
    assert log.parent == Path(load_settings(str(runs["config"])).storage.root) / "logs" / DAY
    text = log.read_text()
    assert "Beginning flow run" in text and "Finished in state Completed" in text


def test_verbose_shows_prefects_output_too(runs: dict) -> None:
    verbose: Completed = runs["verbose"]
    assert verbose.returncode == 0, verbose.stdout + verbose.stderr
    assert "Beginning flow run" in verbose.stderr and "Finished in state Completed" in verbose.stderr
    assert [line.split()[0] for line in verbose.stdout.splitlines()[: len(STEPS)]] == STEPS
    assert f"Brief for {DAY} (v1, unchanged)" in verbose.stdout


def test_a_rerun_appends_no_same_url_duplicate_again(runs: dict) -> None:
    assert runs["again"].returncode == 0, runs["again"].stderr
    first, second = runs["duplicates"]
    assert len(first) == 1  # techwire's syndicated copy of the labnotes post
    assert second == first


def test_readers_get_no_operator_hint(runs: dict) -> None:
    root = Path(load_settings(str(runs["config"])).storage.root)
    published = [p for p in (root / "briefs").rglob("*") if p.is_file() and p.suffix != ".lock"]
    assert {p.suffix for p in published} == {".md", ".html", ".json", ".xml"}
    for path in published:
        text = path.read_text()
        assert not OPERATOR_HINT.search(text), (path, OPERATOR_HINT.search(text))
        if path.suffix != ".json":
            assert "off the topic" not in text, path  # the desk's line, not the readers'
    # the run's own output keeps the hint, with the config it was given
    hint = f"brief replay --date {DAY} --projection scores --config {runs['config']}"
    assert f"  1 left out: '{hint}' says why\n" in runs["first"].stdout


def test_a_syndicated_copy_is_not_cited_as_a_second_source(runs: dict) -> None:
    root = Path(load_settings(str(runs["config"])).storage.root)
    document = json.loads((root / "briefs" / f"{DAY}.json").read_text())
    [pippin] = [i for i in document["items"] if "Pippin" in i["title"]]
    cited = [(c["source"], c["url"]) for c in pippin["citations"]]
    assert cited == [
        ("labnotes", "https://labnotes.example/2025/08/pippin-2-release"),
        ("techwire", "https://techwire.example/news/orchard-pippin-2"),  # its own report, not the copy
    ]
    assert "LabNotes.example:443" not in json.dumps(document)


def wide_lines(done: Completed) -> list[str]:
    assert done.returncode == 0, done.stderr
    too_wide = [line for line in done.stdout.splitlines() if len(line) > 80]
    assert not too_wide, done.stdout
    return done.stdout.splitlines()


def test_stats_events_and_questions_read_in_80_columns(runs: dict) -> None:
    config = str(runs["config"])
    stats = "\n".join(wide_lines(brief("stats", "--config", config, env=WIDE)))
    # three runs; the day's 9 items and its one duplicate, whichever run stored them
    assert re.search(rf"^{DAY} +3 +0 completed +9 +0 +1 +6 +1 +1 ", stats, re.MULTILINE), stats

    listed = "\n".join(wide_lines(brief("events", "--config", config, "--limit", "0", env=WIDE)))
    every = [
        json.loads(line)
        for line in brief("events", "--config", config, "--format", "jsonl").stdout.splitlines()
    ]
    for e in every:  # each type, subject and run id whole
        assert e["event_type"] in listed and e["subject_id"] in listed and e["run_id"] in listed, e

    run_id = every[-1]["run_id"]
    one_run = brief(
        "events", "--config", config, "--run", run_id[:8], "--format", "jsonl"
    ).stdout.splitlines()
    assert len(one_run) == sum(e["run_id"] == run_id for e in every)  # the first characters of an id do

    lines = wide_lines(
        brief("replay", "--config", config, "--date", DAY, "--projection", "questions", env=WIDE)
    )
    questions = [
        json.loads(line)
        for line in brief(
            "replay", "--config", config, "--date", DAY, "--projection", "questions", "--format", "jsonl"
        ).stdout.splitlines()
    ]
    assert questions
    flowed = " ".join(line.strip() for line in lines)
    for q in questions:  # each prompt whole, wrapped at its words (a same-story prompt has lines of its own)
        assert q["question_id"] in flowed and " ".join(q["prompt"].split()) in flowed, q["prompt"]

    lines = wide_lines(brief("replay", "--config", config, "--date", DAY, "--projection", "scores", env=WIDE))
    scores = [
        json.loads(line)
        for line in brief(
            "replay", "--config", config, "--date", DAY, "--projection", "scores", "--format", "jsonl"
        ).stdout.splitlines()
    ]
    flowed = " ".join(line.strip() for line in lines)
    for row in scores:  # each story id whole on its line, each title whole, wrapped at its words
        assert any(line.startswith(f"{row['story_id']}  {row['outcome']}") for line in lines), row
        assert " ".join(row["title"].split()) in flowed, row["title"]


def test_a_run_in_shadow_says_the_candidates_decisions_in_one_short_line(
    tmp_path: Path, prefect_harness: None
) -> None:
    """With ``[policy.shadow]``, the shadow step prints one line like the others, in 80 columns."""
    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = tmp_path / "samples" / "brief.toml"
    # everything core, clustering looser: relevance and clustering decided otherwise
    (config.parent / "candidate.toml").write_text(
        '[policy]\neditorial_model = "rules"\nnear_duplicate_threshold = 0.5\n'
    )
    text = config.read_text().replace('root = "../var/sample-store"', 'root = "store"')
    config.write_text(text + '\n[policy.shadow]\ncandidate = "candidate.toml"\n')
    done = brief("run", "--config", str(config), "--date", DAY, env=WIDE)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines[: len(STEPS) + 1]] == [*STEPS[:3], "shadow", *STEPS[3:]]
    [shadow] = [line for line in lines if line.startswith("shadow ")]
    assert re.match(r"^shadow +\d+\.\d s  [0-9a-f]{8}: \d+/\d+ kept; \d+ relevance, \d+ clustering", shadow)
    assert len(shadow) <= 80, shadow
    store = load_settings(str(config)).storage.event_store()
    [finished] = store.read(event_types=["shadow.finished"])
    differed = finished.payload["differed"]
    assert f"{differed['relevance']} relevance, {differed['clustering']} clustering" in shadow
    assert sum(differed.values()) > 0, finished.payload  # the candidate did decide otherwise
