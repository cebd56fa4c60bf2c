"""Hand labels for ``brief learn`` and ``brief evaluate``: files for any day and files for one day."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

from ops.learn import label_of, read_labels


def write(folder: Path, name: str, rows: list[dict]) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(json.dumps(rows))


def test_a_days_file_labels_that_day_and_a_spanning_file_every_day(tmp_path: Path) -> None:
    write(
        tmp_path,
        "relevance-2025-08-05..07.json",
        [{"id": "https://a/1", "relevance": "core", "importance": 2}],
    )
    day_rows = [
        {"id": "https://a/1", "relevance": "related", "importance": 1, "story": "s1"},
        {
            "id": "https://d/9",
            "relevance": "core",
            "importance": 3,
            "story": "s2",
            "digest": True,
            "covers": ["s1"],
        },
    ]
    write(tmp_path, "aiweb-2026-03-18.json", day_rows)
    write(tmp_path, "stories-2026-03-18.json", [{"not": "relevance labels"}])
    labels = read_labels(tmp_path)
    assert len(labels) == 3
    assert labels.on(date(2026, 3, 18))["https://a/1"].relevance == "related"  # the day's own file wins
    assert labels.on(date(2026, 3, 19))["https://a/1"].relevance == "core"
    assert "https://d/9" not in labels.on(date(2026, 3, 17))
    assert not labels.keep(lambda _day, lab: lab.id == "nothing")
    on_day = labels.on(date(2026, 3, 18))
    digest = label_of(on_day, "https://d/9#2")  # a digest's second story is labelled by its digest
    assert digest is not None and digest.digest and digest.covers == ["s1"]
    assert label_of(on_day, "https://d/8#2") is None
