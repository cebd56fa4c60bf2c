"""The story pair model refitted from stored days (``brief learn``) and judged on days it never saw
(``brief evaluate``).

A stored day is replayed (nothing is written) for the articles that were news on it, with the
vectors the run computes; the hand labels of a labels folder say which of them report one event
(``story``, ``digest`` and ``covers`` of a ``<name>-YYYY-MM-DD.json`` file, or the stories of a
``stories-YYYY-MM-DD.json`` file), and people's same-story and two-stories answers
(``story.merged`` / ``story.split``) add pairs of their own, each weighing as much as
``ANSWER_WEIGHT`` labelled pairs. The model is fitted as ``ops/pairs.py`` fits it: a group per
block of consecutive days (neighbouring days share their items), the threshold chosen leaving one
group out, and its card gives the figures of each block left out and judged.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path

import numpy as np

from ops import pairs as fitting
from ops.story_days import Entry, LabelledDay
from tasks import dedup, pairs, steps
from tasks.settings import Settings
from tasks.steps.dedup import multilingual_vectors

ANSWER_WEIGHT = 5  # a person's answer weighs five labelled pairs, as in the editorial fit
_DAY_FILE = re.compile(r"(?P<name>.+)-(?P<day>\d{4}-\d{2}-\d{2})\.json")


def read_story_labels(folder: Path) -> dict[date, dict[str, Entry]]:
    """Link -> labelled entry of each day a file of ``folder`` labels stories for."""
    out: dict[date, dict[str, Entry]] = {}
    for path in sorted(folder.glob("*.json")):
        named = _DAY_FILE.fullmatch(path.name)
        if not named:
            continue
        try:
            day = date.fromisoformat(named["day"])
            body = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue  # not a day's file; ``brief learn`` reports a bad labels file itself
        into = out.setdefault(day, {})
        if named["name"] == "stories" and isinstance(body, dict):
            for story in body.get("stories", []):
                for link in story.get("items", []):
                    into[link] = Entry(link, str(story["story"]))
        elif isinstance(body, list):
            for row in body:
                if isinstance(row, dict) and row.get("story") and row.get("id"):
                    into[row["id"]] = Entry(
                        row["id"],
                        str(row["story"]),
                        bool(row.get("digest")),
                        frozenset(row.get("covers") or ()),
                    )
        if not into:
            del out[day]
    return out


def _entry_of(labels: dict[str, Entry], url: str) -> Entry | None:
    """A digest's story (``…#2``) is labelled by its digest's entry."""
    return labels.get(url) or (labels.get(url.split("#", 1)[0]) if "#" in url else None)


@dataclass
class StoredDay:
    """A stored day's news as the run clusters it, what the labels say of it, and people's answers."""

    labelled: LabelledDay
    same: frozenset[frozenset[str]] = frozenset()  # article pairs a person said are one story
    apart: frozenset[frozenset[str]] = frozenset()  # … are two


def replay(settings: Settings, resources: steps.Resources, day: date, labels: dict[str, Entry]) -> StoredDay:
    """The day's news (dry run: nothing written), its vectors, its labelled entries and people's answers."""
    # held out: people's answers are pairs to learn from, not joins made beforehand
    run = f"stories-{day.isoformat()}"
    ctx = steps.open_run(resources, settings, day, run, recorder=steps.Dry(), held_out=True)
    outcome = steps.dedup_day(ctx)
    news = [outcome.items[a] for s in outcome.stories for a in s.members]
    vectors = ctx.embedder.encode([i.text for i in news]) if news else np.zeros((0, 1))
    entry = {i.article_id: _entry_of(labels, i.url) for i in news}
    same, apart = steps.human_links(ctx, ctx.reach)
    day_of = LabelledDay(day.isoformat(), "stored", news, entry, vectors=vectors)
    return StoredDay(replace(day_of, multilingual=multilingual_vectors(ctx, news)), same, apart)


def answer_rows(stored: StoredDay, leave_out: frozenset[str] = frozenset()) -> tuple[np.ndarray, np.ndarray]:
    """Feature rows of the pairs people answered about (1: one story, 0: two), each ``ANSWER_WEIGHT``
    times, leaving out an article whose id or link is in ``leave_out``."""
    day = stored.labelled
    index = {i.article_id: k for k, i in enumerate(day.items)}
    banned = {i.article_id for i in day.items if {i.article_id, i.url, i.canonical_url} & leave_out}
    found: list[tuple[int, int, int]] = []
    for said, answers in ((1, stored.same), (0, stored.apart)):
        for pair in answers:
            a, b = sorted(pair)
            if a in index and b in index and not {a, b} & banned:
                found.append((index[a], index[b], said))
    if not found or day.vectors is None:
        return np.zeros((0, len(pairs.FEATURES))), np.zeros(0, dtype=int)
    english = day.vectors @ day.vectors.T
    other = None if day.multilingual is None else day.multilingual @ day.multilingual.T
    rows = pairs.feature_rows(day.items, english, other, [(x, y) for x, y, _ in found])
    labels = np.array([s for *_, s in found], dtype=int)
    return np.repeat(rows, ANSWER_WEIGHT, axis=0), np.repeat(labels, ANSWER_WEIGHT)


def blocks_of(days: Sequence[date]) -> dict[str, tuple[date, ...]]:
    """Runs of consecutive days: neighbouring days share items, so they are left out together."""
    out: list[list[date]] = []
    for day in sorted(days):
        if out and day - out[-1][-1] <= timedelta(days=1):
            out[-1].append(day)
        else:
            out.append([day])
    return {block[0].isoformat(): tuple(block) for block in out}


def _has_pairs(stored: StoredDay) -> bool:
    _, labels = fitting.training_pairs(stored.labelled)
    return bool(labels.sum()) or bool(stored.same)


def _groups(
    stored: dict[date, StoredDay], blocks: dict[str, tuple[date, ...]], held: Sequence[date] = ()
) -> dict[str, list[tuple[np.ndarray, np.ndarray]]]:
    leave_out = frozenset().union(*(fitting.day_keys(stored[d].labelled) for d in held))
    groups: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for name, block in blocks.items():
        for d in block:
            if d not in held:
                groups.setdefault(name, []).append(fitting.training_pairs(stored[d].labelled, leave_out))
                groups[name].append(answer_rows(stored[d], leave_out))
    return groups


@dataclass(frozen=True)
class StoryFit:
    """A refitted pair model, the days it learnt from, and its figures on each block left out."""

    model: pairs.PairModel
    days: list[date]
    held_out: dict[str, dict[str, float | int]] = field(default_factory=dict)


def learn_stories(
    settings: Settings,
    days: Sequence[date],
    labels: dict[date, dict[str, Entry]],
    note: str,
    progress: Callable[[date], None] | None = None,
    *,
    resources: steps.Resources,
) -> StoryFit | None:
    """The pair model fitted on the labelled stories and people's answers of ``days``; None when fewer
    than two blocks of days hold a same-story pair (no threshold can be chosen leaving one out).
    ``resources``: the caller's; one store and one set of models for every day."""
    resources = resources.for_settings(settings)
    stored: dict[date, StoredDay] = {}
    for day in days:
        if progress is not None:
            progress(day)
        stored[day] = replay(settings, resources, day, labels.get(day, {}))
    embedding = {"english": settings.embedding.model, "multilingual": settings.embedding.multilingual or None}
    return fit_stored(stored, note, embedding)


def fit_stored(stored: dict[date, StoredDay], note: str, embedding: dict | None = None) -> StoryFit | None:
    """The pair model fitted on the days' labelled pairs and answers (``learn_stories`` after the
    replay); ``embedding``: the models whose cosines it reads, named in its card (``pairs.fits``)."""
    stored = {d: s for d, s in stored.items() if _has_pairs(s)}
    blocks = blocks_of(list(stored))
    if len(blocks) < 2:
        return None
    model = fitting.fit(_groups(stored, blocks), note, [d.isoformat() for d in stored])
    held_out: dict[str, dict[str, float | int]] = {}
    pooled = fitting.Judged()
    for name, block in blocks.items():
        rest = {n: b for n, b in blocks.items() if n != name}
        if len(rest) < 2:
            break  # one block left to fit on: no threshold chosen leaving one out
        fold = fitting.fit(_groups(stored, rest, block), f"without {name}", [])
        judged = fitting.Judged()
        for d in block:
            judged.add(fitting.judge(stored[d].labelled, fitting.model_stories(fold)(stored[d].labelled)))
        pooled.add(judged)
        held_out[name] = _figures(judged.pairs)
    if held_out:
        held_out["pooled"] = _figures(pooled.pairs)
    card = {**model.card, "leave_one_block_out": {"stored days": held_out}, "kind": "brief learn"}
    if embedding is not None:
        card["embedding"] = embedding
    return StoryFit(replace(model, card=card), sorted(stored), held_out)


def _figures(c: fitting.Counts) -> dict[str, float | int]:
    return {
        "precision": round(c.precision, 4),
        "recall": round(c.recall, 4),
        "right": c.tp,
        "false": c.fp,
        "missed": c.fn,
    }


def fitted_days(model: pairs.PairModel | None) -> frozenset[str]:
    """The days a pair model learnt from (its card's), none for the rules."""
    return frozenset(model.card.get("fitted_on", {}).get("days", [])) if model is not None else frozenset()


def judge_stored(
    day: date, stories: Sequence[Sequence[str]], items: dict[str, dedup.Item], labels: dict[str, Entry]
) -> fitting.Judged:
    """A replay's stories of ``day`` against its labelled entries, pairs counted as ``ops/pairs.judge``."""
    news = [items[a] for s in stories for a in s]
    entry = {i.article_id: _entry_of(labels, i.url) for i in news}
    return fitting.judge(LabelledDay(day.isoformat(), "stored", news, entry), stories)
