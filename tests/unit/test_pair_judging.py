"""Judging story decisions against the labels: follow-ups across days, doubtful links apart."""

from __future__ import annotations

import numpy as np

from ops import pairs as fitting
from ops.story_days import Entry, LabelledDay
from tests.unit.test_dedup import item


def labelled(day: str, ids: list[str], stories: list[str], **extra) -> LabelledDay:
    items = [item(i, "techcrunch", f"Report {i}") for i in ids]
    entry: dict[str, Entry | None] = {
        i: Entry(f"https://techcrunch.example/{i}", s) for i, s in zip(ids, stories, strict=True)
    }
    return LabelledDay(day, "tech", items, entry, vectors=np.eye(len(ids), 4), **extra)


def test_a_follow_up_the_labels_call_doubtful_is_counted_apart() -> None:
    previous = labelled("2025-08-05", ["p1", "p2", "p3"], ["s1", "s2", "s3"])
    day = labelled(
        "2025-08-06",
        ["n1", "n2", "n3"],
        ["t1", "t2", "t3"],
        previous={"t1": "s1"},
        previous_uncertain=frozenset({("t2", "s2")}),
    )
    strength = {("n1", "p1"): 0.9, ("n2", "p2"): 0.8, ("n3", "p3"): 0.7}

    def link(heads, old, *_) -> np.ndarray:
        return np.array([[strength.get((h.article_id, o.article_id), -1.0) for o in old] for h in heads])

    stories = [("n1",), ("n2",), ("n3",)]
    doubtful = fitting.Counts()
    counts = fitting.follow_ups(day, previous, stories, link, doubtful)
    # n1 -> p1 is the labels' link; n3 -> p3 one they do not make; n2 -> p2 one they doubt
    assert (counts.tp, counts.fp, counts.fn) == (1, 1, 0)
    assert (doubtful.tp, doubtful.fp, doubtful.fn) == (0, 1, 0)
    # without a place for doubtful links they are left out, not counted false
    assert fitting.follow_ups(day, previous, stories, link).fp == 1
    # as the labels decide, a doubtful link is one they do not make: false
    labelled_counts = fitting.Judged(follow_ups=counts, follow_ups_uncertain=doubtful).follow_ups_as_labelled
    assert (labelled_counts.tp, labelled_counts.fp, labelled_counts.fn) == (1, 2, 0)


def test_a_definite_follow_up_linked_to_a_doubtful_story_instead_is_missed() -> None:
    previous = labelled("2025-08-05", ["p1", "p2"], ["s1", "s2"])
    day = labelled(
        "2025-08-06",
        ["n1", "n2"],
        ["t1", "t2"],
        previous={"t1": "s1", "t2": "s2"},
        previous_uncertain=frozenset({("t1", "s2")}),
    )
    # n1 continues s1 for the labels, but the decision links it to s2, a link the labels doubt
    strength = {("n1", "p2"): 0.9, ("n1", "p1"): 0.5}

    def link(heads, old, *_) -> np.ndarray:
        return np.array([[strength.get((h.article_id, o.article_id), -1.0) for o in old] for h in heads])

    doubtful = fitting.Counts()
    counts = fitting.follow_ups(day, previous, [("n1",), ("n2",)], link, doubtful)
    # both definite links are missed (n2 was linked to nothing); the doubtful link is false apart
    assert (counts.tp, counts.fp, counts.fn) == (0, 0, 2)
    assert (doubtful.tp, doubtful.fp, doubtful.fn) == (0, 1, 0)
