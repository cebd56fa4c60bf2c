"""The regression set refuses a case that contradicts one it holds (one line, exit 2, nothing
written), and lists its cases, and a policy's failures, in 80 columns with ids and dates whole."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from ops import regress
from tasks.settings import load_settings
from tests.cli import brief
from tests.integration import test_regress as base
from tests.real_days import copy_real_days

WIDE = {"COLUMNS": "80"}


def cells(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def refused(config: Path, case: dict, expect: str, story: str | None = None) -> str:
    done = brief(
        "regress", "add", "--date", case["date"], "--story", story or case["story"], "--expect", expect,
        "--by", "bo", "--config", str(config),
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    return done.stderr


def test_a_case_that_contradicts_one_in_the_set_is_refused(real_days: Path, tmp_path: Path) -> None:
    config, _ = copy_real_days(real_days, tmp_path / "days")
    store = load_settings(str(config)).storage.event_store()
    off_topic = next(c for c in base.CASES if c["expect"] == "off-topic")
    same = next(c for c in base.CASES if c["expect"] == "same-as")
    base.add(config, off_topic)
    base.add(config, same)
    held = {e.payload["expect"]: e for e in regress.cases(store)}
    blobs = sorted((Path(store.base) / "policies" / "blobs").rglob("*.events"))

    for expect in ("lead", "core", "related"):
        said = refused(config, off_topic, expect)
        case = held["off-topic"].payload
        assert f"--expect {expect} contradicts case {case['case_id']}" in said
        assert f"expects off-topic for story {case['story_id']}" in said and "cannot be removed" in said
    # the same story named by its story id rather than its link
    refused(config, off_topic, "lead", story=held["off-topic"].payload["story_id"])
    # the same pair, in either order, cannot also be two stories
    pair = held["same-as"].payload
    said = refused(config, same, f"not-same:{same['other']}")
    assert pair["case_id"] in said and f"the pair {pair['story_id']}, {pair['other_story_id']}" in said
    refused(config, {**same, "story": same["other"]}, f"not-same:{same['story']}")
    assert len(regress.cases(store)) == 2  # nothing written: no case, no frozen facts
    assert sorted((Path(store.base) / "policies" / "blobs").rglob("*.events")) == blobs

    # a correction kept --as-case that contradicts the set: the mark is recorded, the case is not, and it says so
    marked = brief(
        "review", "--date", off_topic["date"], "--mark", f"{off_topic['story']}=core", "--as-case",
        "--config", str(config),
    )  # fmt: skip
    assert marked.returncode == 0, marked.stdout + marked.stderr
    assert (
        "not kept as a regression case: " in marked.stderr
        and held["off-topic"].payload["case_id"] in marked.stderr
    )
    assert len(regress.cases(store)) == 2

    # what does not contradict is still added: the same case again, and another story's case
    assert "already in the set" in base.add(config, off_topic)
    lead = next(c for c in base.CASES if c["expect"] == "lead" and c["date"] == off_topic["date"])
    base.add(config, lead)
    assert len(regress.cases(store)) == 3


def test_cases_and_failures_read_in_80_columns_with_ids_whole(real_days: Path, tmp_path: Path) -> None:
    config, _ = copy_real_days(real_days, tmp_path / "days")
    store = load_settings(str(config)).storage.event_store()
    for case in base.CASES:
        base.add(config, case, "--note", "the labels say so, and the editors agreed after a long discussion")
    found = [regress.describe_case(e) for e in regress.cases(store)]

    listed = brief("regress", "list", "--config", str(config), env=WIDE)
    unfiltered = tmp_path / "rules.toml"
    unfiltered.write_text('[policy]\neditorial_model = "rules"\n')  # every story core: off-topic cases fail
    failing = brief(
        "evaluate", "--regression", "--policy", str(unfiltered), "--config", str(config), env=WIDE
    )
    assert listed.returncode == 0 and failing.returncode == 1, listed.stderr + failing.stderr
    failed = {r["case"] for r in found if r["expected"] == "off-topic"}
    assert failed
    for done, rows in ((listed, found), (failing, [r for r in found if r["case"] in failed])):
        lines = done.stdout.splitlines()
        assert max(map(cells, lines)) <= 80, max(lines, key=cells)
        words = {w for line in lines for w in re.split(r"[\s│┃|]+", line)}
        for row in rows:  # each id, date and expectation whole, on one line
            assert {row["case"], row["date"], row["story"], row["expected"]} <= words, row
