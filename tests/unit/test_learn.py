"""``brief learn``: hand labels (files for any day and files for one day) and the embedding heads."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import numpy as np

from ops.learn import Example, _fit_heads, label_of, read_labels


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


def example(day: int, relevant: list[int], languages: list[str], vectors: np.ndarray) -> Example:
    return Example(
        date(2026, 3, day), f"s{day}", {}, {}, vectors, relevant, "core", 1, "label", languages, vectors * 2
    )


def test_the_multilingual_head_learns_from_english_on_the_english_heads_scale() -> None:
    rng = np.random.default_rng(7)
    english = rng.normal(size=(80, 4))
    english[:, 3] = 0.0  # the fourth dimension: the language (0 for English)
    relevant = (english[:, 0] > 0).astype(int).tolist()
    chinese = np.column_stack([rng.normal(size=(10, 3)), np.ones(10)])  # all on topic, all Chinese
    train = [
        example(17, relevant, ["en"] * 80, english),
        example(18, [1] * 10, ["zh"] * 10, chinese),
    ]
    heads = _fit_heads(train)
    coef, intercept = heads.multilingual  # type: ignore[misc]
    assert coef[3] == 0.0  # it never saw Chinese: the language cannot have become the topic
    ours = heads.english.decision_function(english)
    theirs = english * 2 @ coef + intercept
    assert np.isclose(theirs.mean(), ours.mean()) and np.isclose(theirs.std(), ours.std())
    # an English article is read by the English head, a Chinese one by the multilingual head
    values = heads.article_values(train[1])
    assert values == [float(v @ coef + intercept) for v in chinese * 2]
