"""The guard of story identity: fitted with one block of each mix left out, judged on those blocks.

The pair model is fitted on every labelled day but the guard blocks (``GUARD_BLOCKS``:
2026-03-17..19 of the AI world's feeds, 2025-08-05..07 of the tech outlets, the blocks with
the most pairs), nothing of theirs in its training data, and clusters them with the vectors the
run computes (MiniLM, and USE multilingual on a day with other text), once per session.
``GUARD_F1`` is the issue's bar; ``FLOOR_F1`` what the guard holds today: a change that makes
the learnt decision worse on days it never saw fails here, and so does the decision before it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ops import pairs as fitting
from ops.story_days import LabelledDay, load_day, with_vectors
from tasks.dedup import DedupPolicy
from tasks.embed import SentenceTransformerEmbedder, UniversalSentenceEncoder
from tasks.pairs import PairModel
from tests.judgement import story_groups
from tests.real_days import GUARD_BLOCKS

GUARD_F1 = 0.90  # issue 31's bar, not reached yet (see test_the_pair_model_reaches_the_issues_bar)
# what the pair model holds on both guard blocks today, with a little room: pair F1 0.80 on the AI
# world's (2 right, 0 false, 1 missed), 0.941 on the tech outlets' (16 right, 1 false, 1 missed);
# a threshold of 0.05 gives 0.67 and 0.84, the rules at near_duplicate 0.3 give 0.12 and 0.48
FLOOR_F1 = 0.78


def groups() -> dict[str, tuple[str, ...]]:
    return story_groups()


@pytest.fixture(scope="module")
def days(shared_data: Path) -> dict[str, LabelledDay]:
    english, multilingual = SentenceTransformerEmbedder(), UniversalSentenceEncoder()
    return {
        d: with_vectors(load_day(shared_data, d), english, multilingual) for b in groups().values() for d in b
    }


@pytest.fixture(scope="module")
def held_out() -> tuple[str, ...]:
    return tuple(d for block in GUARD_BLOCKS.values() for d in block)


@pytest.fixture(scope="module")
def fitted(days, held_out) -> PairModel:
    """The pair model fitted without the guard blocks, once for the module's tests."""
    return fitting.fit_without(days, groups(), held=held_out)


def f1_per_mix(days: dict[str, LabelledDay], stories: fitting.Clusterer) -> dict[str, fitting.Counts]:
    out = {}
    for mix, block in GUARD_BLOCKS.items():
        judged = fitting.Judged()
        for d in block:
            judged.add(fitting.judge(days[d], stories(days[d])))
        out[mix] = judged.pairs
    return out


def test_the_pair_model_holds_on_the_blocks_it_never_saw(days, fitted) -> None:
    scores = f1_per_mix(days, fitting.model_stories(fitted))
    assert all(c.tp + c.fn > 0 for c in scores.values())  # the blocks do hold same-story pairs
    low = {mix: round(c.f1, 3) for mix, c in scores.items() if c.f1 < FLOOR_F1}
    assert not low, f"pair F1 under {FLOOR_F1} on days the model never saw: {low} ({scores})"


@pytest.mark.parametrize(
    "worse",
    ["threshold 0.05", "rules at near_duplicate 0.3"],
)
def test_a_worse_decision_fails_the_guard(days, fitted, worse: str) -> None:
    if worse.startswith("threshold"):
        from dataclasses import replace

        stories = fitting.model_stories(replace(fitted, threshold=0.05))
    else:
        stories = fitting.rule_stories(DedupPolicy(near_duplicate_threshold=0.3))
    scores = f1_per_mix(days, stories)
    assert min(c.f1 for c in scores.values()) < FLOOR_F1, scores


@pytest.mark.xfail(
    strict=True, reason="issue 31's bar: pair F1 >= 0.90 on both guard blocks is not reached yet"
)
def test_the_pair_model_reaches_the_issues_bar(days, fitted) -> None:
    scores = f1_per_mix(days, fitting.model_stories(fitted))
    assert min(c.f1 for c in scores.values()) >= GUARD_F1, scores
