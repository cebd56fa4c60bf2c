"""One story across days, folded from the log: its days, articles, outlets and languages, the
stories that followed it up, the briefs it was in, and every decision about it.

Each part is a projection (``storage/projections``) folded over the events that name the story or
one of its articles, read from every day of the log with the filter pushed into the scan: the
story's own ``story.clustered`` events give its days and members, and the members' ids pick the
articles and the decisions. The articles are the members' rows of the ``articles`` projection of
the whole log, which the store folds once per state of the log and keeps while it keeps its files
decoded (``ParquetEventStore.derived``: the desk's), so a story's page does not fold it again. No
index and no copy of the log on disk.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import cast

import polars as pl

from ops.changes import act_words
from ops.reads import document
from storage.brief import Item, Retracted
from storage.errors import InputError
from storage.payloads import (
    ArticleCorrected,
    BriefCorrected,
    BriefPublished,
    ConfirmationRequested,
    ConfirmationResolvedV2,
    Payload,
    StoryMergedV2,
    StoryRestored,
    StoryRetracted,
    StoryScored,
    StorySplitV2,
)
from storage.projections import project
from storage.projections.articles import ArticlesProjection
from storage.projections.scores import ScoresProjection
from storage.projections.stories import StoriesProjection
from storage.store import ParquetEventStore
from storage.typed import payload_field, payload_of
from tasks.render import without_tracking
from tasks.write import safe_url

DECISIONS = (
    "story.scored",
    "story.merged",
    "story.split",
    "article.corrected",
    "brief.corrected",
    "story.retracted",
    "story.restored",
    "confirmation.requested",
    "confirmation.resolved",
)
MANY_AT_ONCE = ("confirmation.requested", "confirmation.resolved")  # several stand side by side
LINKED_BY_PAYLOAD = ("story.merged", "story.split", "confirmation.requested", "confirmation.resolved")


@dataclass
class Day:
    day: date
    members: list[str]
    follow_up_of: str | None
    score: dict | None = None
    versions: list[int] = field(default_factory=list)  # the published versions that held it
    item: Item | None = None  # the item as the current brief has it (None: not in it)
    retracted: Retracted | None = None


@dataclass
class Timeline:
    story_id: str
    days: list[Day]
    articles: list[dict]
    outlets: list[str]
    languages: list[str]
    followed_by: list[tuple[date, str]]
    decisions: list[dict]

    @property
    def headline(self) -> str:
        """The story's headline: its item in the latest brief that held it, else its first article's."""
        for d in reversed(self.days):
            if d.item is not None:
                return d.item.title
        return next((str(a["title"]) for a in self.articles if a.get("title")), self.story_id)


def story_timeline(store: ParquetEventStore, story_id: str) -> Timeline | None:
    """The story's timeline, or None when no day clustered a story of that id."""
    named = pl.col("subject_id") == story_id
    clustered = store.query(
        lambda: store.scan(event_types=["story.clustered"]).filter(
            named | (payload_field("story.clustered", "follow_up_of") == story_id)
        )
    )
    own = clustered.filter(named)
    if not own.height:
        return None
    per_day = (
        StoriesProjection().fold(own.lazy())["days"].sort("brief_date").collect()  # the latest per day
    )
    members = sorted({a for row in per_day["members"] for a in row})
    followed_by = sorted(
        (row["brief_date"], row["subject_id"]) for row in clustered.filter(~named).iter_rows(named=True)
    )
    keys = [story_id, *members]
    article_types = list(ArticlesProjection.event_types)
    # the rest in three reads, each testing payload text only on the few rows of its kinds: the
    # events about the story or its articles, the links and questions naming one of them, the
    # versions that held it
    found = (
        pl.concat(
            [
                store.query(
                    lambda: store.scan(event_types=list(DECISIONS)).filter(pl.col("subject_id").is_in(keys))
                ),
                _naming(store, LINKED_BY_PAYLOAD, keys),
                _naming(store, ("brief.published",), [f'"{story_id}"']),
            ]
        )
        .unique("event_id", keep="first", maintain_order=True)
        .sort("occurred_at", "seq")
    )
    # every article's projection, folded once per state of the log and kept by the desk's store (a
    # store that keeps nothing folds the members' articles only)
    every = store.derived(
        "articles",
        article_types,
        lambda events: project(ArticlesProjection(), events),
        narrow=pl.col("subject_id").is_in(members),
    )
    articles = every.filter(pl.col("article_id").is_in(members)).sort(
        "published_at", "article_id", nulls_last=True
    )
    events = found.filter(pl.col("event_type").is_in(DECISIONS))
    published = found.filter(pl.col("event_type") == "brief.published")
    scores = {
        r["brief_date"]: r
        for r in project(ScoresProjection(), events.lazy().filter(named)).collect().iter_rows(named=True)
    }
    days = [
        Day(r["brief_date"], list(r["members"]), r["follow_up_of"], scores.get(r["brief_date"]))
        for r in per_day.iter_rows(named=True)
    ]
    _add_briefs(store, story_id, days, published)
    rows = [r for r in articles.iter_rows(named=True)]
    titles = {str(r["article_id"]): str(r["title"] or "") for r in rows}  # a link says its reports' headlines
    for r in rows:
        r["href"] = safe_url(without_tracking(r["url"] or ""))
    return Timeline(
        story_id,
        days,
        rows,
        sorted({r["outlet"] or r["source"] for r in rows}),
        sorted({r["language"] for r in rows if r["language"]}),
        followed_by,
        collapse([_decision(r, titles) for r in events.iter_rows(named=True)]),
    )


def _naming(store: ParquetEventStore, kinds: tuple[str, ...], texts: list[str]) -> pl.DataFrame:
    """The events of ``kinds`` whose payload holds one of ``texts``: the kinds read first, then
    their payloads searched (a search over every kind's payloads costs more than the page)."""
    frame = store.query(lambda: store.scan(event_types=list(kinds)))
    return frame.filter(pl.col("payload").str.contains_any(texts))


def collapse(decisions: list[dict]) -> list[dict]:
    """Decisions in order, a decision made again unchanged (each re-render of the day scores the
    story and asks its questions again) folded into the row where it was first made: ``times``,
    ``last`` at and every event id. A decision that changed in between is not folded over: core,
    then off-topic, then core again shows three rows. Questions stand side by side: an unchanged
    one folds into its own row whatever was asked between."""
    out: list[dict] = []
    same = ("day", "type", "what", "by", "via")
    for d in decisions:
        folded = None
        for row in reversed(out):
            if all(row[k] == d[k] for k in same):
                folded = row
                break
            if row["day"] == d["day"] and row["type"] == d["type"] and d["type"] not in MANY_AT_ONCE:
                break  # the same kind of decision, changed since: not folded over
        if folded is not None:
            folded["times"] += 1
            folded["last"] = d["at"]
            folded["event_ids"].append(d["event_id"])
        else:
            out.append({**d, "times": 1, "last": d["at"], "event_ids": [d["event_id"]]})
    return out


def _add_briefs(store: ParquetEventStore, story_id: str, days: list[Day], published: pl.DataFrame) -> None:
    """Which published versions of each day held the story, and its item in the current one."""
    for row in published.iter_rows(named=True):
        brief = payload_of(row, BriefPublished)
        for d in days:
            if d.day == row["brief_date"] and story_id in brief.stories:
                d.versions.append(brief.version)
    for d in days:
        if not d.versions:
            continue
        try:
            current = document(store, d.day)
        except InputError:  # the files gone (a purge): the log still says it was there
            continue
        d.item = next((i for i in current.items if i.story_id == story_id), None)
        d.retracted = next((r for r in current.retracted or [] if r.story_id == story_id), None)


def _said(kind: str, p: Payload, titles: Mapping[str, str]) -> tuple[str, str]:
    """What a decision of ``kind`` says, in the desk's words for it (``ops.changes.act_words``), and
    who said it; ``titles``: the story's articles' headlines, which a link names its reports by."""
    if isinstance(p, StoryScored):
        what = (
            f"{act_words(kind)} {p.outcome} (relevance {p.relevance:.2f}, importance {p.importance:.2f})"
            + (f": {'; '.join(p.reasons)}" if p.reasons else "")
        )
        return what, p.marked_by or "the daily run"
    if isinstance(p, StoryMergedV2 | StorySplitV2):
        named = [titles.get(a, "") for a in p.article_ids]
        linked = act_words(kind, said=", ".join(p.article_ids), titles=named if all(named) else ())
        return linked, p.person or ("an answer" if p.question_id else "")
    if isinstance(p, ArticleCorrected):  # a relevance mark (lead is one) says "marked lead"
        what = act_words(kind, p.field, p.value or "") + (f" ({p.reason})" if p.reason else "")
        return what, p.by
    if isinstance(p, BriefCorrected):
        return act_words(kind, p.field, p.value) + (f" ({p.note})" if p.note else ""), p.by
    if isinstance(p, StoryRetracted):
        return act_words(kind, said=p.note), p.by
    if isinstance(p, StoryRestored):
        return f"{act_words(kind)}: back in the brief" + (f" ({p.note})" if p.note else ""), p.by
    if isinstance(p, ConfirmationRequested):
        return f"{act_words(kind)}: {p.prompt}", "the daily run"
    resolved = cast(ConfirmationResolvedV2, p)
    answer = act_words(kind, resolved.field, resolved.answer)
    if resolved.field != "same_story":  # a same-story question proposes a probability, not an answer
        answer += f" (proposed: {resolved.value})"
    return answer, resolved.person or resolved.by


def _decision(row: dict, titles: Mapping[str, str]) -> dict:
    """A decision as a line: what was decided, by whom (a person, or the run's model)."""
    kind = row["event_type"]
    p = payload_of(row, Payload)  # one of the DECISIONS types: _said reads it by its model
    what, who = _said(kind, p, titles)
    at: datetime = row["occurred_at"]
    return {
        "day": row["brief_date"],
        "at": at.strftime("%Y-%m-%d %H:%M"),
        "type": kind,
        "what": what,
        "by": who,
        "via": getattr(p, "via", None) or "",
        "event_id": row["event_id"],
        # for auditors, in the row's title: the model that scored it, the article a mark was made on
        "detail": f"model {p.model}"
        if isinstance(p, StoryScored) and not p.marked_by
        else f"article {p.article_id}"
        if isinstance(p, ArticleCorrected)
        else "",
    }
