"""Two processes publish briefs of one day at once: every version number is taken once, every file is whole."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from storage.store import ParquetEventStore
from tests.conftest import REPO

DAY = "2025-08-06"


def test_two_publishers_of_one_day_take_distinct_versions_and_write_whole_files(tmp_path: Path) -> None:
    root = str(tmp_path / "store")
    rounds = 12
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.integration.publisher", root, DAY, name, str(rounds)],
            cwd=REPO,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("a", "b")
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err[-2000:]
    published = [e.payload for e in ParquetEventStore(root).read(event_types=["brief.published"])]
    versions = sorted(p["version"] for p in published)
    assert versions == list(range(1, 2 * rounds + 1))  # each version once, none skipped
    folder = Path(root) / "briefs" / DAY
    for payload in published:
        brief = json.loads((folder / f"v{payload['version']}.json").read_text())  # whole JSON
        assert brief["version"] == payload["version"]
        assert [i["story_id"] for i in brief["items"]] == payload["stories"]
    latest = json.loads((Path(root) / "briefs" / f"{DAY}.json").read_text())
    assert latest["version"] == 2 * rounds  # the last one published is the one at briefs/D.json
    assert not list(folder.glob(".*.tmp")) and not list((Path(root) / "briefs").glob(".*.tmp"))
