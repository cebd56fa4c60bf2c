"""`brief export finetune --task summarize --format preference` on the sample: a person's correction
of a summary is the preferred output and the text the run wrote the other; with no correction the
command says why it wrote no pair."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.cli import brief
from tests.conftest import REPO

DAY = "2025-08-06"
NORTHWIND = "Northwind AI raises $120M Series B to build robot arms"


def test_a_corrected_summary_is_preferred_over_the_one_the_run_wrote(
    tmp_path: Path, prefect_harness: None
) -> None:
    from flows.daily import daily_brief

    shutil.copytree(REPO / "samples" / "feeds", tmp_path / "feeds")
    config = tmp_path / "brief.toml"
    config.write_text(
        (REPO / "samples" / "brief.toml").read_text().replace('"../var/sample-store"', '"store"')
    )
    daily_brief(DAY, str(config))

    def export(name: str):
        out = tmp_path / name
        done = brief(
            "export", "finetune", "--config", str(config), "--task", "summarize", "--format", "preference",
            "--out", str(out), env={"COLUMNS": "200"},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done, [json.loads(line) for line in out.read_text().splitlines()]

    done, pairs = export("none.jsonl")
    assert pairs == []
    assert "0 records" in done.stdout
    assert (
        "no pair: none of the 5 summarize decisions of 2025-08-06 .. 2025-08-06 was corrected" in done.stdout
    )
    assert "brief correct STORY --summary TEXT" in done.stdout

    published = json.loads((tmp_path / "store" / "briefs" / f"{DAY}.json").read_text())
    item = next(i for i in published["items"] if i["title"] == NORTHWIND)
    written = item["summary"]
    for summary in ("Northwind AI raised $120 million.", "Northwind AI raised $120 million in a Series B."):
        fixed = brief(
            "correct", item["story_id"], "--summary", summary, "--date", DAY, "--by", "ana",
            "--config", str(config),
        )  # fmt: skip
        assert fixed.returncode == 0, fixed.stderr

    done, pairs = export("corrected.jsonl")
    assert "1 record (1 human-labelled)" in done.stdout and "no pair" not in done.stdout
    [pair] = pairs
    preferred = json.loads(pair["preferred_output"][0]["content"])
    other = json.loads(pair["non_preferred_output"][0]["content"])
    # the latest correction over what the run wrote (not over the first correction)
    assert preferred == {"title": NORTHWIND, "summary": "Northwind AI raised $120 million in a Series B."}
    assert other == {"title": NORTHWIND, "summary": written}
    assert pair["metadata"]["subject"] == item["story_id"] and len(pair["metadata"]["event_ids"]) == 3
