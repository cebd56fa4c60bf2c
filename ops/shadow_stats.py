"""``brief stats --shadow``: each candidate run in shadow beside the live policy, over the days run.

A day counts once per candidate: its latest run with a shadow (``shadow.finished``). Both
policies' decisions of that run (``story.clustered`` / ``story.scored`` and ``shadow.clustered``
/ ``shadow.scored``, same run id) are judged by what people said after the run (relevance marks,
same-story answers: judgements neither policy saw) and by hand labels (``--labels``, the folder
``brief evaluate`` takes). How many articles each run decided otherwise is the run's own count.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

import polars as pl

from ops.learn import RelevanceLabel
from ops.shadow import SHADOW_TYPES, Decisions
from storage.errors import InputError
from storage.events import Event, event_from_row
from storage.payloads import (
    ArticleCorrected,
    ShadowFinished,
    StoryClustered,
    StoryMerged,
    StoryScored,
    StorySplit,
)
from storage.store import EventStore
from storage.typed import payload_of
from tasks import dedup
from tasks.nouns import counted
from tasks.steps.context import read_days


@dataclass
class _Tally:
    """One policy's figures over the days compared."""

    stories: int = 0
    kept: int = 0
    marks: list[int] = field(default_factory=lambda: [0, 0])  # agreed, judged
    marks_kept: list[int] = field(default_factory=lambda: [0, 0])  # kept and a person says belongs, kept
    labels: list[int] = field(default_factory=lambda: [0, 0])
    labels_kept: list[int] = field(default_factory=lambda: [0, 0])
    core_kept: list[int] = field(default_factory=lambda: [0, 0])  # core-labelled stories kept
    links: list[int] = field(default_factory=lambda: [0, 0, 0])  # same-story pairs: tp, fp, fn

    def figures(self) -> dict[str, float | int | None]:
        tp, fp, fn = self.links
        return {
            "stories": self.stories,
            "kept": self.kept,
            "later marks": self.marks[1],
            "mark agreement": _share(self.marks),
            "mark precision": _share(self.marks_kept),
            "labelled": self.labels[1],
            "label agreement": _share(self.labels),
            "label precision": _share(self.labels_kept),
            "label recall (core)": _share(self.core_kept),
            "same-story pairs": tp + fp + fn,
            "cluster precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "cluster recall": round(tp / (tp + fn), 4) if tp + fn else None,
        }


def _share(pair: list[int]) -> float | None:
    return round(pair[0] / pair[1], 4) if pair[1] else None


@dataclass(frozen=True)
class Judgements:
    """What people and labels said of one day, after its run decided."""

    marks: dict[str, str]  # article -> off-topic / related / core / lead
    must: set[frozenset[str]]  # article pairs people said are one story
    cannot: set[frozenset[str]]
    labels: dict[str, RelevanceLabel]  # link -> hand label
    stories: dict[str, str]  # article -> its story in the day's story labels
    url_of: dict[str, str]


def tally(into: _Tally, decided: Decisions, said: Judgements) -> None:
    """Add one day's decisions of one policy, judged by ``said``."""
    from ops.evaluate import OUTCOME_OF_LABEL
    from ops.learn import RANK, label_of

    story_of = decided.story_of()
    for story, members in decided.members.items():
        outcome = decided.outcome[story]
        kept = outcome != "off-topic"
        into.stories += 1
        into.kept += kept
        mark = next((said.marks[a] for a in members if a in said.marks), None)
        if mark is not None:
            wanted = "core" if mark == "lead" else mark
            into.marks[0] += outcome == wanted
            into.marks[1] += 1
            if kept:
                into.marks_kept[0] += wanted != "off-topic"
                into.marks_kept[1] += 1
        found = [
            lab
            for a in members
            if a in said.url_of and (lab := label_of(said.labels, said.url_of[a])) is not None
        ]
        if found:
            best = max(found, key=lambda lab: (RANK[lab.relevance], lab.importance))
            wanted = OUTCOME_OF_LABEL[best.relevance]
            into.labels[0] += outcome == wanted
            into.labels[1] += 1
            if kept:
                into.labels_kept[0] += wanted != "off-topic"
                into.labels_kept[1] += 1
            if wanted == "core":
                into.core_kept[0] += kept
                into.core_kept[1] += 1
    for pair in said.must | said.cannot:
        a, b = sorted(pair)
        if a in story_of and b in story_of:
            same = story_of[a] == story_of[b]
            if pair in said.must:
                into.links[0] += same
                into.links[2] += not same
            else:
                into.links[1] += same
    tp, fp, fn = dedup.pairwise_scores(list(decided.members.values()), said.stories)
    into.links[0] += tp
    into.links[1] += fp
    into.links[2] += fn


@dataclass
class Comparison:
    """A candidate beside the live policy over the days it ran in shadow."""

    candidate: str
    file: str
    live: list[str]  # the live policy versions of those days
    days: list[date]
    figures: dict[str, dict[str, float | int | None]]  # "live" / "candidate" -> figures
    differed: dict[str, int]
    articles: int

    def line(self) -> str:
        d = self.differed
        return (
            f"decided otherwise over {counted(len(self.days), 'day')}, of {self.articles} news articles: "
            f"{d.get('relevance', 0)} relevance, {d.get('clustering', 0)} clustering, "
            f"{d.get('top', 0)} top"
        )

    def record(self) -> dict:
        """The comparison as one JSON object (``--format jsonl``)."""
        return {
            "candidate": self.candidate,
            "file": self.file,
            "live": self.live,
            "days": [d.isoformat() for d in self.days],
            "articles": self.articles,
            "differed": self.differed,
            "figures": self.figures,
        }

    def table(self) -> pl.DataFrame:
        metrics = list(self.figures["live"])
        return pl.DataFrame(
            {
                "metric": metrics,
                f"live {'/'.join(self.live)}": [_fmt(self.figures["live"][m]) for m in metrics],
                f"candidate {self.candidate}": [_fmt(self.figures["candidate"][m]) for m in metrics],
            }
        )


def _fmt(value: float | int | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _decisions(events: Sequence[Event], clustered: str, scored: str) -> Decisions:
    stories = [payload_of(e, StoryClustered) for e in events if e.event_type == clustered]
    members = {s.story_id: tuple(s.members) for s in stories}
    scores = {p.story_id: p for e in events if e.event_type == scored for p in [payload_of(e, StoryScored)]}
    return Decisions(
        {s: m for s, m in members.items() if s in scores},
        {s: scores[s].outcome for s in members if s in scores},
        {s: scores[s].importance for s in members if s in scores},
    )


def compare(
    store: EventStore, start: date | None, end: date | None, labels: Path | None, lookback_hours: int
) -> list[Comparison]:
    """Every candidate run in shadow between ``start`` and ``end``, beside the live policy: each
    day's latest run with a shadow, judged by the marks and same-story answers people gave after
    it, and by the hand labels in ``labels``."""
    from ops.learn import Labels, read_labels

    stored = store.days()
    days = [d for d in stored if (start is None or d >= start) and (end is None or d <= end)]
    latest: dict[tuple[str, date], Event] = {}
    for event in store.read(days, event_types=["shadow.finished"]):
        key = (payload_of(event, ShadowFinished).candidate, event.brief_date)
        if key not in latest or event.occurred_at >= latest[key].occurred_at:
            latest[key] = event
    if not latest:
        span = f"between {days[0]} and {days[-1]}" if days else "in that range"
        raise InputError(
            f'no shadow runs {span}; name a candidate under [policy.shadow] (candidate = "FILE") '
            "and run those days"
        )
    runs = {e.run_id for e in latest.values()}
    run_days = sorted({d for _, d in latest})
    decided = store.query(
        lambda: store.scan(run_days, event_types=["story.clustered", "story.scored", *SHADOW_TYPES]).filter(
            pl.col("run_id").is_in(sorted(runs))
        )
    )
    by_run: dict[str, list[Event]] = {}
    for row in decided.iter_rows(named=True):
        by_run.setdefault(row["run_id"], []).append(event_from_row(row))
    said = _judgements(store, run_days, stored, labels, lookback_hours)
    read = read_labels(labels) if labels is not None else Labels()
    out = []
    for candidate in sorted({c for c, _ in latest}):
        mine = sorted((e for (c, _), e in latest.items() if c == candidate), key=lambda e: e.brief_date)
        tallies = {"live": _Tally(), "candidate": _Tally()}
        differed: dict[str, int] = {}
        for finished in mine:
            events = by_run.get(finished.run_id, [])
            day = finished.brief_date
            judged = said(day, finished.occurred_at, read.on(day))
            tally(tallies["live"], _decisions(events, "story.clustered", "story.scored"), judged)
            tally(tallies["candidate"], _decisions(events, "shadow.clustered", "shadow.scored"), judged)
            for k, v in payload_of(finished, ShadowFinished).differed.items():
                differed[k] = differed.get(k, 0) + v
        out.append(
            Comparison(
                candidate,
                payload_of(mine[-1], ShadowFinished).file,
                sorted({payload_of(e, ShadowFinished).live_policy for e in mine}),
                [e.brief_date for e in mine],
                {k: t.figures() for k, t in tallies.items()},
                differed,
                sum(payload_of(e, ShadowFinished).articles for e in mine),
            )
        )
    return out


def _judgements(
    store: EventStore, run_days: list[date], stored: list[date], labels: Path | None, lookback: int
) -> Callable[[date, datetime, dict], Judgements]:
    """``said(day, after, day's labels)``: what people said after ``after`` (marks and same-story
    answers, from the run's day on: a mark lands in the stream of the day it was given for) and
    the day's labels, for the articles of that day's window."""
    from storage.projections import materialize

    later = [d for d in stored if d >= run_days[0]]
    acts = store.read(later, event_types=["article.corrected", "story.merged", "story.split"])
    reach = read_days(lookback)
    window = sorted({d - timedelta(days=k) for d in run_days for k in range(reach + 1)})
    url_of = {
        r["article_id"]: r["url"]
        for r in materialize(store, "articles", days=window).select("article_id", "url").iter_rows(named=True)
    }

    def said(day: date, after: datetime, on_day: dict) -> Judgements:
        marks: dict[str, str] = {}
        must: set[frozenset[str]] = set()
        cannot: set[frozenset[str]] = set()
        for act in acts:  # in event order: a later mark of an article replaces an earlier one
            if act.occurred_at <= after:
                continue
            if act.event_type == "article.corrected":
                corrected = payload_of(act, ArticleCorrected)
                if corrected.field == "relevance":
                    marks[corrected.article_id] = corrected.value  # type: ignore[assignment]
                continue
            link = (
                payload_of(act, StoryMerged)
                if act.event_type == "story.merged"
                else payload_of(act, StorySplit)
            )
            ids = link.article_ids
            pairs = {frozenset((a, b)) for i, a in enumerate(ids) for b in ids[i + 1 :]}
            (must if act.event_type == "story.merged" else cannot).update(pairs)
        stories: dict[str, str] = {}
        path = labels / f"stories-{day.isoformat()}.json" if labels is not None else None
        if path is not None and path.is_file():
            by_link = {
                link: s["story"] for s in json.loads(path.read_text())["stories"] for link in s["items"]
            }
            stories = {a: by_link[u] for a, u in url_of.items() if u in by_link}
        return Judgements(marks, must - cannot, cannot, on_day, stories, url_of)

    return said
