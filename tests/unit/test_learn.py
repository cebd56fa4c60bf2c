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


def test_neighbouring_days_are_one_block_as_the_benchmark_and_the_guard_hold_them_out() -> None:
    from ops.learn import day_blocks
    from tests.real_days import BLOCKS

    days = [date.fromisoformat(d) for blocks in BLOCKS.values() for block in blocks for d in block]
    expected = sorted(
        tuple(date.fromisoformat(d) for d in block) for blocks in BLOCKS.values() for block in blocks
    )
    assert sorted(day_blocks(reversed(days))) == expected
    assert day_blocks([date(2026, 3, 1), date(2026, 3, 3), date(2026, 3, 6)]) == [
        (date(2026, 3, 1), date(2026, 3, 3)),
        (date(2026, 3, 6),),
    ]


def story(day: int, relevance: str, kw: float, head: float = 0.0) -> Example:
    return Example(
        date(2026, 3, day), f"s{day}-{kw}", {"kw_title": kw, "emb_head": head}, {}, np.zeros((0, 0)), [],
        relevance, 1, "label",
    )  # fmt: skip


def test_the_threshold_is_chosen_over_blocks_of_days_each_decided_by_the_others() -> None:
    from ops.learn import choose_threshold

    rng = np.random.default_rng(3)
    train = []
    for day in (1, 5, 9, 13):  # four blocks
        for _ in range(30):
            on = rng.random() < 0.3
            train.append(story(day, "core" if on else "none", float(on) + rng.normal(0, 0.6)))
    values = [0.0] * len(train)
    chosen = choose_threshold(train, values, ["kw_title"])
    assert 0.2 <= chosen <= 0.8
    assert choose_threshold([e for e in train if e.day.day == 1], values, ["kw_title"]) == 0.5  # one block


def test_a_fitted_model_carries_its_threshold_and_its_card_the_blocks_left_out() -> None:
    from ops.learn import fit

    rng = np.random.default_rng(5)
    train = []
    for day in (1, 5, 9):
        for k in range(40):
            on = k % 3 == 0
            e = story(day, "core" if on else "none", float(on) + rng.normal(0, 0.4))
            e.importance = 2 if on else 0
            train.append(e)
    fitted = fit(train, "t", "AI", "none", features=["kw_title", "emb_head"])
    assert fitted.model.relevance is not None and fitted.model.relevance.features == ["kw_title", "emb_head"]
    assert 0.2 <= fitted.model.threshold <= 0.8
    figures = fitted.model.card["leave_one_block_out"]
    assert figures["blocks"] == 3 and figures["stories"] == len(train) and figures["precision"] > 0.8
