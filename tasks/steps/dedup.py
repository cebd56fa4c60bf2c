"""Which articles are news today and how they group into stories (reads the log, appends decisions)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import numpy as np
import polars as pl

from storage.events import Event
from storage.payloads import StoryClustered, StoryMerged, StorySplit
from storage.projections import materialize
from storage.projections.articles import EVIDENCE_FIELDS
from storage.typed import payload_field, payload_of
from tasks import dedup, editorial, pairs
from tasks.settings import PolicySettings
from tasks.steps.context import FOLLOW_UP_DAYS, RunContext
from tasks.steps.corrections import note_acts


@dataclass
class DedupOutcome:
    items: dict[str, dedup.Item]
    stories: list[dedup.Story]
    follow_up_of: dict[str, str]
    window: tuple[datetime, datetime]
    duplicates: int = 0
    news: int = 0
    borderline: list[tuple[str, str, float]] = field(default_factory=list)
    corrected_category: dict[str, str] = field(default_factory=dict)
    corrected_relevance: dict[str, str] = field(default_factory=dict)  # article -> what a person marked
    undated: list[str] = field(default_factory=list)  # today's articles without a publish time
    earlier_sources: dict[str, set[str]] = field(default_factory=dict)  # continued story -> its outlets
    # articles at another article's canonical URL (a syndicated copy): article -> the one it copies
    same_url: dict[str, str] = field(default_factory=dict)
    # lineage: article -> the ``article.collected`` event whose fields the run read
    collected: dict[str, str] = field(default_factory=dict)
    # lineage: (article, field) -> the latest ``article.corrected`` of that field (a person's mark …)
    corrections: dict[tuple[str, str], str] = field(default_factory=dict)

    def collected_events(self, articles: Sequence[str]) -> list[str]:
        """The ``article.collected`` events of ``articles`` (those the run read), in their order."""
        return [self.collected[a] for a in articles if a in self.collected]


def _items(frame: pl.DataFrame) -> dict[str, dedup.Item]:
    return {
        r["article_id"]: dedup.Item(
            r["article_id"],
            r["source"],
            r["title"],
            r["summary"] or "",
            r["canonical_url"],
            r["content_hash"],
            r["published_at"],
            r["language"] or "und",
            r["url"],
            tuple(r["tags"] or ()),
            r.get("kind") or "news",
            r.get("outlet"),
            r.get("discussion_url"),
            tuple((f, r[f]) for f in EVIDENCE_FIELDS if r.get(f) is not None),
        )
        for r in frame.iter_rows(named=True)
    }


def briefed_before(ctx: RunContext) -> dict[str, tuple[str, date]]:
    """Articles that the briefs of the run's earlier days published: article id -> (story id, brief date).

    Only the days the run reads (``RunContext.reach``): an article of today's news window
    can only have been briefed on a day whose window overlaps it.
    """
    earlier = [d for d in ctx.reach if d < ctx.day]
    frame = ctx.store.query(
        lambda: ctx.store.scan(earlier, event_types=["brief.published", "story.clustered"])
    )
    published_runs = {
        (r["run_id"], r["brief_date"])
        for r in frame.iter_rows(named=True)
        if r["event_type"] == "brief.published"
    }
    out: dict[str, tuple[str, date]] = {}
    for r in frame.filter(pl.col("event_type") == "story.clustered").iter_rows(named=True):
        if (r["run_id"], r["brief_date"]) in published_runs:
            story = payload_of(r, StoryClustered)
            for member in story.members:
                out.setdefault(member, (story.story_id, r["brief_date"]))
    return out


def article_events(ctx: RunContext) -> tuple[dict[str, str], dict[tuple[str, str], str]]:
    """Lineage of the articles the run reads: article -> the ``article.collected`` event whose fields
    it reads, and (article, field) -> the latest ``article.corrected`` of that field.

    The collection chosen is the one the ``articles`` projection takes its fields from: the
    latest brief date's, then the latest in event order. Envelope columns only (and a correction's
    field): a small read of the days the run reads.
    """
    frame = ctx.store.query(
        lambda: (
            ctx.store.scan(ctx.reach, event_types=["article.collected", "article.corrected"])
            .select(
                "event_type",
                "subject_id",
                "event_id",
                "brief_date",
                "occurred_at",
                "seq",
                pl.when(pl.col("event_type") == "article.corrected")
                .then(payload_field("article.corrected", "article_id"))
                .alias("article_id"),
                pl.when(pl.col("event_type") == "article.corrected")
                .then(payload_field("article.corrected", "field"))
                .alias("field"),
            )
            .sort("occurred_at", "seq", "event_id")
        )
    )
    collected = frame.filter(pl.col("event_type") == "article.collected").sort(
        "brief_date", "occurred_at", "seq", "event_id", maintain_order=True
    )
    corrected = frame.filter(pl.col("event_type") == "article.corrected")
    return (
        dict(zip(collected["subject_id"], collected["event_id"], strict=True)),
        {(r["article_id"], r["field"]): r["event_id"] for r in corrected.iter_rows(named=True)},
    )


def embed_window(ctx: RunContext) -> int:
    """Embed (and cache) the texts of the day's news window ahead of dedup; returns how many.

    What a run can do before the briefs of earlier days exist: the vectors do not depend on
    them, so a fanned-out backfill computes them while it waits.
    """
    window = dedup.news_window(ctx.day, ctx.settings.zone, ctx.settings.policy.lookback_hours)
    items = _items(materialize(ctx.store, "articles", days=ctx.reach))
    news = [i for i in items.values() if dedup.in_window(i.published_at, window)]
    ctx.embedder.encode([i.text for i in news])
    multilingual_vectors(ctx, news)
    return len(news)


def multilingual_vectors(ctx: RunContext, items: Sequence[dedup.Item]) -> np.ndarray | None:
    """The multilingual model's vectors of ``items`` when one of them is not in English.

    None on a day of English text only (the model is never loaded: such a day is clustered as
    before it existed), or when the settings name no multilingual model.
    """
    if ctx.multilingual is None or not any(dedup.is_non_english(i) for i in items):
        return None
    return ctx.multilingual.encode([i.text for i in items])


def story_policy(ctx: RunContext) -> PolicySettings:
    """The policy the run's stories are decided under: the settings', but with the rules where its
    pair model was fitted on the cosines of other embedding models than the run's (its weights do
    not hold there: ``pairs.fits``)."""
    policy = ctx.settings.policy
    model = pairs.load_pair_model(policy.story_model)
    other = ctx.multilingual.name if ctx.multilingual is not None else None
    if model is None or pairs.fits(model, ctx.embedder.name, other):
        return policy
    return policy.model_copy(update={"story_model": "rules"})


def dedup_day(ctx: RunContext) -> DedupOutcome:
    note_acts(ctx)  # the composition of the day begins here: publish knows what it was made from
    policy = story_policy(ctx)
    window = dedup.news_window(ctx.day, ctx.settings.zone, policy.lookback_hours)
    # partition-pruned to the days the run reads: its cost does not grow with the log
    articles = materialize(ctx.store, "articles", days=ctx.reach)
    items = _items(articles)
    briefed = briefed_before(ctx)
    collected, corrections = article_events(ctx)
    collected_today = _collected_on(ctx, ctx.day)
    events, news = _todays_news(ctx, items, articles, briefed, collected, collected_today, window)
    vectors = ctx.embedder.encode([i.text for i in news])
    multilingual = multilingual_vectors(ctx, news)
    model = pairs.load_pair_model(policy.story_model)
    must, cannot = human_links(ctx, ctx.reach) if not ctx.held_out else (frozenset(), frozenset())
    clustering = cluster_news(policy, news, vectors, must, cannot, multilingual)
    events += [_duplicate_event(ctx, dup, collected) for dup in clustering.duplicates]
    follow = follow_ups(ctx, clustering.stories, items, briefed, clustering_rule(policy), model)
    linked = link_events(ctx, ctx.reach) if must or cannot else {}
    producer = _producer(ctx, policy, multilingual is not None)
    decided = decided_by(policy)
    events += [
        _clustered_event(ctx, story, follow, collected, linked, producer, decided)
        for story in clustering.stories
    ]
    ctx.append(events)
    corrected = {r["article_id"]: r["category"] for r in articles.iter_rows(named=True) if r["category"]}
    marked = (
        {r["article_id"]: r["relevance"] for r in articles.iter_rows(named=True) if r["relevance"]}
        if not ctx.held_out
        else {}
    )
    return DedupOutcome(
        items,
        clustering.stories,
        follow,
        window,
        duplicates=sum(e.event_type == "article.duplicate_detected" for e in events),
        news=len(news),
        borderline=clustering.borderline,
        corrected_category=corrected,
        corrected_relevance=marked,
        undated=sorted(a for a in collected_today if items[a].published_at is None),
        earlier_sources=_earlier_sources(briefed, set(follow.values()), items),
        same_url={d.article_id: d.duplicate_of for d in clustering.duplicates if d.reason == "same_url"},
        collected=collected,
        corrections=corrections,
    )


def _collected_on(ctx: RunContext, day: date) -> set[str]:
    """The articles collected for ``day`` (a repository trending again today is among them)."""
    return set(
        ctx.store.query(lambda: ctx.store.scan([day], event_types=["article.collected"]).select("subject_id"))
        .get_column("subject_id")
        .to_list()
    )


def _todays_news(
    ctx: RunContext,
    items: dict[str, dedup.Item],
    articles: pl.DataFrame,
    briefed: dict[str, tuple[str, date]],
    collected: dict[str, str],
    collected_today: set[str],
    window: tuple[datetime, datetime],
) -> tuple[list[Event], list[dedup.Item]]:
    """The day's news: the window's items that were neither briefed nor news on an earlier day
    (each of those recorded as a duplicate of what it was), in article id order."""
    policy = ctx.settings.policy
    first_day = dict(zip(articles["article_id"], articles["first_brief_date"], strict=True))
    events: list[Event] = []
    news: list[dedup.Item] = []
    for article_id in sorted(items):
        item = items[article_id]
        if not dedup.in_window(item.published_at, window):
            continue  # archive items are facts in the log, not news
        first = first_day[article_id]
        # a repository trending again today is news again, as a follow-up of the story it was
        trending_again = item.kind == "repos" and article_id in collected_today
        if article_id in briefed and not trending_again:
            earlier_story, when = briefed[article_id]
            events.append(_not_news(ctx, article_id, earlier_story, "briefed_before", when, collected))
            continue
        earlier_window = dedup.news_window(first, ctx.settings.zone, policy.lookback_hours)
        if first < ctx.day and dedup.in_window(item.published_at, earlier_window):
            events.append(_not_news(ctx, article_id, article_id, "seen_before", first, collected))
            continue
        news.append(item)
    return events, news


def _duplicate_event(ctx: RunContext, dup: dedup.Duplicate, collected: dict[str, str]) -> Event:
    """``article.duplicate_detected`` for a same-day duplicate (the same link or text)."""
    return ctx.emit(
        "article.duplicate_detected",
        {"article_id": dup.article_id, "duplicate_of": dup.duplicate_of, "reason": dup.reason},
        subject=dup.article_id,
        producer="dedup.exact@1",
        sources=[collected[a] for a in (dup.article_id, dup.duplicate_of) if a in collected],
    )


def _producer(ctx: RunContext, policy: PolicySettings, multilingual: bool) -> str:
    """The clustering's producer: its rule and the models whose vectors it read."""
    producer = f"{producer_of(policy)}:{ctx.embedder.name}"
    if multilingual and ctx.multilingual is not None:
        producer += f"+{ctx.multilingual.name}"
    return producer


def _clustered_event(
    ctx: RunContext,
    story: dedup.Story,
    follow: dict[str, str],
    collected: dict[str, str],
    linked: dict[str, list[str]],
    producer: str,
    decided: str,
) -> Event:
    """``story.clustered`` for one story: its members, and the earlier story it follows up."""
    story_id = follow.get(story.story_id, story.story_id)
    links = [i for a in story.members for i in linked.get(a, ())]
    return ctx.emit(
        "story.clustered",
        {
            "story_id": story_id,
            "members": list(story.members),
            "representative": story.representative,
            "follow_up_of": follow.get(story.story_id),
            "pair_scores": [list(p) for p in story.pair_scores],
            "decided_by": decided,
        },
        subject=story_id,
        producer=producer,
        sources=[collected[a] for a in story.members if a in collected] + links,
    )


def _earlier_sources(
    briefed: dict[str, tuple[str, date]], continued: set[str], items: dict[str, dedup.Item]
) -> dict[str, set[str]]:
    """The outlets that reported each followed-up story on earlier days."""
    earlier: dict[str, set[str]] = {}
    for article_id, (story_id, _) in briefed.items():
        if story_id in continued and article_id in items:
            earlier.setdefault(story_id, set()).add(editorial.outlet_of(items[article_id]))
    return earlier


def _not_news(
    ctx: RunContext, article_id: str, duplicate_of: str, reason: str, first: date, collected: dict[str, str]
) -> Event:
    """``article.duplicate_detected`` for an article that was news (or briefed) on an earlier day."""
    return ctx.emit(
        "article.duplicate_detected",
        {
            "article_id": article_id,
            "duplicate_of": duplicate_of,
            "reason": reason,
            "first_brief_date": first.isoformat(),
        },
        subject=article_id,
        producer="dedup.cross_day@1",
        sources=[collected[article_id]] if article_id in collected else [],
    )


def linked_articles(row: dict) -> list[str]:
    """The articles a ``story.merged`` or ``story.split`` row names."""
    if row["event_type"] == "story.merged":
        return payload_of(row, StoryMerged).article_ids
    return payload_of(row, StorySplit).article_ids


def human_links(ctx: RunContext, days: Sequence[date]) -> tuple[frozenset, frozenset]:
    """Article pairs people said are (``story.merged``) or are not (``story.split``) one story."""
    frame = ctx.store.query(lambda: ctx.store.scan(days, event_types=["story.merged", "story.split"]))
    must: set[frozenset[str]] = set()
    cannot: set[frozenset[str]] = set()
    for row in frame.iter_rows(named=True):
        ids = linked_articles(row)
        pairs = {frozenset((a, b)) for i, a in enumerate(ids) for b in ids[i + 1 :]}
        (must if row["event_type"] == "story.merged" else cannot).update(pairs)
    return frozenset(must - cannot), frozenset(cannot)


def cluster_news(
    policy: PolicySettings,
    news: Sequence[dedup.Item],
    vectors: np.ndarray,
    must: frozenset,
    cannot: frozenset,
    multilingual: np.ndarray | None,
) -> dedup.Clustering:
    """Today's news in stories under a policy: by its pair model, or by the threshold and rules."""
    model = pairs.load_pair_model(policy.story_model)
    if model is None:
        rule = clustering_rule(policy)
        return dedup.cluster(
            news, vectors, rule, must, cannot, policy.question_margin, multilingual=multilingual
        )
    return pairs.cluster(
        news, vectors, model, must, cannot, policy.question_margin, multilingual=multilingual
    )


def decided_by(policy: PolicySettings) -> str:
    """What a ``story.clustered`` says decided it: ``rules``, or ``pairs:<the model's digest>``."""
    return (
        "rules" if policy.story_model == "rules" else f"pairs:{pairs.pair_model_digest(policy.story_model)}"
    )


def producer_of(policy: PolicySettings) -> str:
    return "dedup.embedding@1" if policy.story_model == "rules" else "dedup.pairs@1"


def clustering_rule(policy: PolicySettings) -> dedup.DedupPolicy:
    """The clustering thresholds a policy sets (the run's, or a shadow candidate's)."""
    return dedup.DedupPolicy(
        policy.near_duplicate_threshold,
        policy.same_source_threshold,
        policy.min_shared_names,
        policy.cross_language_threshold,
    )


def link_events(ctx: RunContext, days: Sequence[date]) -> dict[str, list[str]]:
    """Lineage of the people's links: article -> the ``story.merged`` / ``story.split`` events that
    name it (a story names those of its members: they bound how it was clustered)."""
    frame = ctx.store.query(lambda: ctx.store.scan(days, event_types=["story.merged", "story.split"]))
    out: dict[str, list[str]] = {}
    for row in frame.iter_rows(named=True):
        for article_id in linked_articles(row):
            out.setdefault(article_id, []).append(row["event_id"])
    return out


def follow_ups(
    ctx: RunContext,
    stories: Sequence[dedup.Story],
    items: dict[str, dedup.Item],
    briefed: dict[str, tuple[str, date]],
    policy: dedup.DedupPolicy,
    model: pairs.PairModel | None = None,
) -> dict[str, str]:
    """Today's stories that continue a story briefed in the last days: new story id -> earlier story id.

    The pair model decides when the policy names one (its probability that today's story's first
    report and an earlier article report one event), else the threshold and rules."""
    since = ctx.day - timedelta(days=FOLLOW_UP_DAYS)
    earlier = sorted((a, s) for a, (s, d) in briefed.items() if d >= since and a in items)
    if not earlier or not stories:
        return {}
    heads = [items[s.representative] for s in stories]
    old = [items[a] for a, _ in earlier]
    vectors = ctx.embedder.encode([i.text for i in heads + old])
    sims = vectors[: len(heads)] @ vectors[len(heads) :].T
    both = multilingual_vectors(ctx, heads + old)
    cross = None if both is None else both[: len(heads)] @ both[len(heads) :].T
    candidates: list[tuple[float, str, str]] = []
    if model is not None:
        probabilities = pairs.follow_up_probabilities(heads, old, vectors, both, model)
        for h, story in enumerate(stories):
            for o, (_, earlier_story) in enumerate(earlier):
                if probabilities[h, o] >= model.threshold:
                    candidates.append((-float(probabilities[h, o]), story.story_id, earlier_story))
    else:
        found = dedup.evidence_index(heads + old)
        # only the pairs the rule may link: the others' signals would say no link
        for h, o in dedup.linkable(heads, old, sims, cross, found, policy, policy.near_duplicate_threshold):
            signals = dedup.pair_signals(
                heads[h],
                old[o],
                float(sims[h, o]),
                evidence=found,
                multilingual=None if cross is None else float(cross[h, o]),
            )
            link, _, score = dedup.decide(signals, policy)
            if link:
                candidates.append((-score, stories[h].story_id, earlier[o][1]))
    # One new story continues one earlier story, strongest link first: two of today's stories
    # never take the same id (the others stay stories of their own).
    out: dict[str, str] = {}
    for _, story_id, earlier_story in sorted(candidates):
        if story_id not in out and earlier_story not in out.values():
            out[story_id] = earlier_story
    return out
