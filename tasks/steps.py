"""The daily run's steps as plain functions over the store: what the Prefect tasks call.

Each step reads what it needs from the event log, decides with the pure functions of
``tasks.dedup`` / ``tasks.analyze`` / ``tasks.write``, and appends its events.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta

import polars as pl

from flows.settings import Settings
from storage.events import Event, new_event, utcnow
from storage.projections import materialize
from storage.store import ParquetEventStore
from tasks import analyze as an
from tasks import dedup as dd
from tasks import factcheck as fc
from tasks import review as rv
from tasks import write as wr
from tasks.collect import Source, Validators, collect_source
from tasks.embed import CachedEmbedder

FOLLOW_UP_DAYS = 7


@dataclass
class RunContext:
    store: ParquetEventStore
    settings: Settings
    day: date
    run_id: str
    embedder: CachedEmbedder
    counts: dict[str, int] = field(default_factory=dict)
    dry_run: bool = False  # evaluate a policy: decide everything, record nothing

    @property
    def policy_version(self) -> str:
        return self.settings.policy.version()

    def emit(
        self,
        event_type: str,
        payload: dict,
        *,
        subject: str,
        producer: str,
        sources: Sequence[str] = (),
        seq: int = 0,
    ) -> Event:
        return new_event(
            event_type,
            payload,
            brief_date=self.day,
            run_id=self.run_id,
            subject_id=subject,
            produced_by=producer,
            occurred_at=utcnow(),
            seq=seq,
            source_event_ids=sources,
            policy_version=self.policy_version,
        )

    def append(self, events: Sequence[Event]) -> int:
        for e in events:
            self.counts[e.event_type] = self.counts.get(e.event_type, 0) + 1
        if self.dry_run:
            return 0
        return self.store.append(events).written


def make_context(settings: Settings, day: date, run_id: str | None = None) -> RunContext:
    """The run's store and cached embedder, from the settings (the one place that wires them)."""
    import uuid

    from tasks.embed import SentenceTransformerEmbedder

    store = ParquetEventStore(settings.storage.root)
    embedder = CachedEmbedder(
        SentenceTransformerEmbedder(settings.embedding.model, settings.embedding.batch_size),
        store.fs,
        store.base,
    )
    return RunContext(store, settings, day, run_id or f"local-{uuid.uuid4().hex[:12]}", embedder)


# -- collect ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SourceOutcome:
    source: str
    items: int
    new_events: int
    error: str | None = None
    message: str | None = None


def collect_one(ctx: RunContext, source_name: str) -> SourceOutcome:
    src = next(s for s in ctx.settings.sources if s.name == source_name)
    source = Source(src.name, src.url, src.language)
    if not source.is_archive and ctx.day != today(ctx.settings):
        # a live feed only knows today: a past date replays the facts already stored for it
        return SourceOutcome(src.name, 0, 0, None, "live feed: replayed stored facts")
    validators = last_validators(ctx, source.url_for(ctx.day))
    events = collect_source(source, ctx.day, ctx.run_id, validators=validators)
    written = ctx.append(events)
    if source.is_archive:
        written += collect_lookback(ctx, source)
    failed = [e for e in events if e.event_type == "feed.failed"]
    items = sum(e.event_type == "article.collected" for e in events)
    if failed:
        return SourceOutcome(src.name, 0, written, failed[0].payload["error"], failed[0].payload["message"])
    return SourceOutcome(src.name, items, written)


def collect_lookback(ctx: RunContext, source: Source) -> int:
    """For a dated archive, also the days the lookback window reaches back into, when they exist.

    A brief then rests on the same facts whatever order dates are run in: an article of the
    day before is known as the day before's news even if that day was never run. Facts
    already in the log are not written again; a day without an archive file is skipped
    without a failure (it is not the day being briefed).
    """
    days_back = -(-ctx.settings.policy.lookback_hours // 24)
    written = 0
    for back in range(1, days_back + 1):
        day = ctx.day - timedelta(days=back)
        events = collect_source(source, day, ctx.run_id, retries=1)
        if any(e.event_type == "feed.failed" for e in events):
            continue
        written += ctx.store.append(events).written
    return written


def last_validators(ctx: RunContext, url: str) -> Validators | None:
    """ETag / Last-Modified of the latest successful fetch of ``url``, remembered in the log."""
    frame = ctx.store.query(
        lambda: ctx.store.scan(event_types=["feed.fetched"]).filter(
            pl.col("payload").str.contains(url, literal=True)
        )
    )
    for payload in reversed(frame.get_column("payload").to_list()):
        data = json.loads(payload)
        if data["url"] == url and (data.get("etag") or data.get("last_modified")):
            return Validators(data.get("etag"), data.get("last_modified"), data["content_hash"])
    return None


# -- dedup -----------------------------------------------------------------------------


@dataclass
class DedupOutcome:
    items: dict[str, dd.Item]
    stories: list[dd.Story]
    follow_up_of: dict[str, str]
    window: tuple[datetime, datetime]
    duplicates: int = 0
    news: int = 0
    borderline: list[tuple[str, str, float]] = field(default_factory=list)
    corrected_category: dict[str, str] = field(default_factory=dict)
    undated: list[str] = field(default_factory=list)  # today's articles without a publish time


def _items(frame: pl.DataFrame) -> dict[str, dd.Item]:
    return {
        r["article_id"]: dd.Item(
            r["article_id"],
            r["source"],
            r["title"],
            r["summary"] or "",
            r["canonical_url"],
            r["content_hash"],
            r["published_at"],
            r["language"] or "und",
            r["url"],
        )
        for r in frame.iter_rows(named=True)
    }


def briefed_before(ctx: RunContext) -> dict[str, tuple[str, date]]:
    """Articles that earlier brief dates published: article id -> (story id, brief date)."""
    earlier = [d for d in ctx.store.days() if d < ctx.day]
    if not earlier:
        return {}
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
            payload = json.loads(r["payload"])
            for member in payload["members"]:
                out.setdefault(member, (payload["story_id"], r["brief_date"]))
    return out


def dedup_day(ctx: RunContext) -> DedupOutcome:
    policy = ctx.settings.policy
    window = dd.news_window(ctx.day, ctx.settings.zone, policy.lookback_hours)
    days = [d for d in ctx.store.days() if d <= ctx.day]
    articles = materialize(ctx.store, "articles", days=days)
    items = _items(articles)
    briefed = briefed_before(ctx)
    events: list[Event] = []
    news: list[dd.Item] = []
    first_day = dict(zip(articles["article_id"], articles["first_brief_date"], strict=True))
    for article_id in sorted(items):
        item = items[article_id]
        if not dd.in_window(item.published_at, window):
            continue  # archive items are facts in the log, not news
        first = first_day[article_id]
        if article_id in briefed:
            earlier_story, when = briefed[article_id]
            events.append(_not_news(ctx, article_id, earlier_story, "briefed_before", when))
            continue
        earlier_window = dd.news_window(first, ctx.settings.zone, policy.lookback_hours)
        if first < ctx.day and dd.in_window(item.published_at, earlier_window):
            events.append(_not_news(ctx, article_id, article_id, "seen_before", first))
            continue
        news.append(item)
    vectors = ctx.embedder.encode([i.text for i in news])
    dedup_policy = dd.DedupPolicy(
        policy.near_duplicate_threshold, policy.same_source_threshold, policy.min_shared_names
    )
    must, cannot = human_links(ctx, days)
    clustering = dd.cluster(news, vectors, dedup_policy, must, cannot, policy.question_margin)
    for dup in clustering.duplicates:
        events.append(
            ctx.emit(
                "article.duplicate_detected",
                {"article_id": dup.article_id, "duplicate_of": dup.duplicate_of, "reason": dup.reason},
                subject=dup.article_id,
                producer="dedup.exact@1",
            )
        )
    follow = follow_ups(ctx, clustering.stories, items, briefed, dedup_policy)
    for story in clustering.stories:
        story_id = follow.get(story.story_id, story.story_id)
        events.append(
            ctx.emit(
                "story.clustered",
                {
                    "story_id": story_id,
                    "members": list(story.members),
                    "representative": story.representative,
                    "follow_up_of": follow.get(story.story_id),
                    "pair_scores": [list(p) for p in story.pair_scores],
                },
                subject=story_id,
                producer=f"dedup.embedding@1:{ctx.embedder.name}",
            )
        )
    ctx.append(events)
    today = set(
        ctx.store.query(
            lambda: ctx.store.scan([ctx.day], event_types=["article.collected"]).select("subject_id")
        )
        .get_column("subject_id")
        .to_list()
    )
    corrected = {r["article_id"]: r["category"] for r in articles.iter_rows(named=True) if r["category"]}
    return DedupOutcome(
        items,
        clustering.stories,
        follow,
        window,
        duplicates=sum(e.event_type == "article.duplicate_detected" for e in events),
        news=len(news),
        borderline=clustering.borderline,
        corrected_category=corrected,
        undated=sorted(a for a in today if items[a].published_at is None),
    )


def _not_news(ctx: RunContext, article_id: str, duplicate_of: str, reason: str, first: date) -> Event:
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
    )


def human_links(ctx: RunContext, days: Sequence[date]) -> tuple[frozenset, frozenset]:
    """Article pairs people said are (``story.merged``) or are not (``story.split``) one story."""
    frame = ctx.store.query(lambda: ctx.store.scan(days, event_types=["story.merged", "story.split"]))
    must: set[frozenset[str]] = set()
    cannot: set[frozenset[str]] = set()
    for row in frame.iter_rows(named=True):
        ids = json.loads(row["payload"])["article_ids"]
        pairs = {frozenset((a, b)) for i, a in enumerate(ids) for b in ids[i + 1 :]}
        (must if row["event_type"] == "story.merged" else cannot).update(pairs)
    return frozenset(must - cannot), frozenset(cannot)


def follow_ups(
    ctx: RunContext,
    stories: Sequence[dd.Story],
    items: dict[str, dd.Item],
    briefed: dict[str, tuple[str, date]],
    policy: dd.DedupPolicy,
) -> dict[str, str]:
    """Today's stories that continue a story briefed in the last days: new story id -> earlier story id."""
    since = ctx.day - timedelta(days=FOLLOW_UP_DAYS)
    earlier = sorted((a, s) for a, (s, d) in briefed.items() if d >= since and a in items)
    if not earlier or not stories:
        return {}
    heads = [items[s.representative] for s in stories]
    old = [items[a] for a, _ in earlier]
    vectors = ctx.embedder.encode([i.text for i in heads + old])
    sims = vectors[: len(heads)] @ vectors[len(heads) :].T
    orgs = {
        i.article_id: (dd.organisations(i.title), dd.organisations(f"{i.title} {i.summary}"))
        for i in heads + old
    }
    out = {}
    for h, story in enumerate(stories):
        best = None
        for o, (article_id, earlier_story) in enumerate(earlier):
            signals = dd.pair_signals(heads[h], items[article_id], float(sims[h, o]), orgs=orgs)
            link, _, score = dd.decide(signals, policy)
            if link and (best is None or score > best[0]):
                best = (score, earlier_story)
        if best:
            out[story.story_id] = best[1]
    return out


# -- analyze ---------------------------------------------------------------------------


def analyze_stories(ctx: RunContext, outcome: DedupOutcome) -> list[dict]:
    policy = ctx.settings.policy
    rules = [an.CategoryRule(c.name, tuple(c.keywords), c.weight) for c in policy.categories]
    weights = {c.name: c.weight for c in policy.categories}
    source_weights = {s.name: s.weight for s in ctx.settings.sources}
    analyses, events = [], []
    for story in outcome.stories:
        members = [outcome.items[a] for a in story.members]
        story_id = outcome.follow_up_of.get(story.story_id, story.story_id)
        category, confidence = an.categorise(
            " ".join(f"{m.title} {m.title} {m.summary}" for m in members), rules
        )
        if story.representative in outcome.corrected_category:  # a person said so
            category, confidence = outcome.corrected_category[story.representative], 1.0
        facts = an.dedupe_facts([f for m in members for f in an.extract_facts(m, ctx.day.year)])
        newest = max((m.published_at for m in members if m.published_at), default=None)
        score = an.importance(
            [m.source for m in members],
            source_weights,
            weights.get(category, 0.8),
            newest,
            outcome.window[1],
            policy.lookback_hours,
        )
        payload = {
            "story_id": story_id,
            "category": category,
            "confidence": confidence,
            "importance": score,
            "facts": [f.as_payload() for f in facts],
            "sources": sorted({m.source for m in members}),
        }
        events.append(ctx.emit("story.analyzed", payload, subject=story_id, producer="analyze.rules@1"))
        analyses.append({**payload, "story": story})
    ctx.append(events)
    return analyses


# -- write and publish -----------------------------------------------------------------


def injection_flags(members: Sequence[dd.Item]) -> list[str]:
    """``instructions_to_ai`` when a cited text talks to an AI system (kept, shown as quoted data)."""
    return (
        ["instructions_to_ai"]
        if any(fc.looks_like_instructions(f"{m.title} {m.summary}") for m in members)
        else []
    )


def compose(ctx: RunContext, outcome: DedupOutcome, analyses: Sequence[dict]) -> dict:
    """The brief document (the JSON contract)."""
    policy = ctx.settings.policy
    decisions = {key: row["answer"] for key, row in answered(ctx).items()}
    items = []
    for analysis in analyses:
        story: dd.Story = analysis["story"]
        rep = outcome.items[story.representative]
        citations = []
        for article_id in story.members:
            m = outcome.items[article_id]
            citations.append(
                {
                    "article_id": article_id,
                    "url": m.canonical_url or m.url,
                    "source": m.source,
                    "published": m.published_at.astimezone(UTC).isoformat() if m.published_at else None,
                }
            )
        items.append(
            {
                "story_id": analysis["story_id"],
                "title": rep.title,
                "category": analysis["category"],
                "category_confidence": analysis["confidence"],
                "importance": analysis["importance"],
                "summary": wr.short_summary(rep.summary),
                "facts": [
                    f
                    for f in fc.stated_facts(analysis["facts"], ctx.day)
                    if decisions.get((analysis["story_id"], f"claim:{f['kind']}", f["text"])) != "remove"
                ],
                "citations": citations,
                "follow_up_of": outcome.follow_up_of.get(story.story_id),
                "flags": injection_flags([outcome.items[a] for a in story.members]),
            }
        )
    quotas = {c.name: c.quota for c in policy.categories}
    arranged = wr.arrange(items, top=policy.top_stories, quotas=quotas, quick_links=policy.quick_links)
    return {
        "date": ctx.day.isoformat(),
        "version": 1,
        "language": ctx.settings.language,
        "policy_version": ctx.policy_version,
        "window": {"start": outcome.window[0].isoformat(), "end": outcome.window[1].isoformat()},
        "items": arranged,
    }


def factcheck(ctx: RunContext, outcome: DedupOutcome, document: dict) -> tuple[dict, list[fc.Finding]]:
    """Check every item against its sources; record failures; mark (or drop) what failed."""
    decisions = {key: row["answer"] for key, row in answered(ctx).items()}
    findings = [
        f
        for f in fc.check_brief(document, outcome.items, ctx.day)
        if decisions.get((f.story_id, f"claim:{f.kind}", f.claim)) != "keep"  # a person confirmed it
    ]
    action = "dropped" if ctx.settings.policy.unverified == "drop" else "marked_unverified"
    ctx.append(
        [
            ctx.emit(
                "factcheck.failed",
                {**f.as_payload(), "action": action},
                subject=f.story_id,
                producer="factcheck@1",
            )
            for f in findings
        ]
    )
    failed = {f.story_id for f in findings}
    items = []
    for item in document["items"]:
        if item["story_id"] in failed and action == "dropped":
            continue
        items.append({**item, "verified": item["story_id"] not in failed})
    return {**document, "items": items}, findings


def gate(ctx: RunContext, outcome: DedupOutcome, document: dict) -> tuple[dict, list]:
    """Great Expectations suites on the day's articles, the brief items and the day's events.

    Results are ``validation.completed`` events. A failed blocking suite raises ``GateFailed``
    (the run fails, naming suite, expectation and rows); a failed warning suite quarantines its
    rows: quarantined articles are no longer cited, items left without a citation and
    quarantined items leave the brief.
    """
    import pandas as pd

    from storage.registry import REGISTRY
    from validations import gate as gx_gate

    today = ctx.store.query(lambda: ctx.store.scan([ctx.day]))
    collected = set(today.filter(pl.col("event_type") == "article.collected")["subject_id"].to_list())
    articles = pd.DataFrame(
        [
            {
                "article_id": a.article_id,
                "url": a.url or None,
                "title": a.title,
                "source": a.source,
                "published_at": a.published_at,
            }
            for a in outcome.items.values()
            if a.article_id in collected
        ],
        columns=["article_id", "url", "title", "source", "published_at"],
    )
    items = pd.DataFrame(
        [
            {
                "story_id": i["story_id"],
                "category": i["category"],
                "category_confidence": i["category_confidence"],
                "importance": i["importance"],
                "citations": len(i["citations"]),
                "title": i["title"],
            }
            for i in document["items"]
        ],
        columns=["story_id", "category", "category_confidence", "importance", "citations", "title"],
    )
    events = today.select(
        "event_id", "event_type", pl.col("brief_date").cast(pl.String), "run_id"
    ).to_pandas()
    modes = ctx.settings.gates
    suites = {
        "articles": (
            modes.articles,
            articles,
            "url",
            gx_gate.article_suite([s.name for s in ctx.settings.sources], ctx.day),
        ),
        "items": (
            modes.items,
            items,
            "story_id",
            gx_gate.item_suite([c.name for c in ctx.settings.policy.categories]),
        ),
        "events": (modes.events, events, "event_id", gx_gate.event_suite(REGISTRY.types(), ctx.day)),
    }
    results = gx_gate.validate(suites)
    ctx.append(
        [
            ctx.emit(
                "validation.completed",
                {
                    "suite": r.suite,
                    "mode": r.mode,
                    "success": r.success,
                    "rows": r.rows,
                    "expectations": r.evaluated,
                    "failures": [
                        {"expectation": f.expectation, "column": f.column, "rows": list(f.rows)}
                        for f in r.failures
                    ],
                    "quarantined": r.quarantined,
                },
                subject=f"suite-{r.suite}",
                producer="gate.gx@1",
            )
            for r in results
        ]
    )
    message = gx_gate.blocking_message(results)
    if message:
        raise gx_gate.GateFailed(message)
    bad_urls = {u for r in results if r.suite == "articles" for u in r.quarantined}
    dropped_articles = {a.article_id for a in outcome.items.values() if str(a.url or None) in bad_urls}
    dropped_items = {s for r in results if r.suite == "items" for s in r.quarantined}
    kept = []
    for item in document["items"]:
        citations = [c for c in item["citations"] if c["article_id"] not in dropped_articles]
        if citations and item["story_id"] not in dropped_items:
            kept.append({**item, "citations": citations})
    return {**document, "items": kept}, results


@dataclass(frozen=True)
class Published:
    version: int
    files: dict[str, str]
    changed: bool
    markdown: str
    items: int


def publish(ctx: RunContext, document: dict) -> Published:
    """Write the brief files; a new version only when the content changed (version 1 stays)."""
    labels = {
        c.name: (c.label_zh if ctx.settings.language == "zh" else c.label_en) or c.name
        for c in ctx.settings.policy.categories
    }
    previous = ctx.store.query(lambda: ctx.store.scan([ctx.day], event_types=["brief.published"]))
    versions = [json.loads(p) for p in previous.get_column("payload").to_list()]
    digest = wr.content_hash(document)
    same = [v for v in versions if v["content_hash"] == digest]
    version = same[0]["version"] if same else max((v["version"] for v in versions), default=0) + 1
    document = {**document, "version": version}
    markdown = wr.render_markdown(document, labels)
    rendered = {
        "md": markdown,
        "html": wr.render_html(document, labels),
        "json": json.dumps(document, ensure_ascii=False, indent=2) + "\n",
    }
    base = f"{ctx.store.base.rstrip('/')}/briefs"
    files = {}
    for ext, text in rendered.items():
        for path in (f"{base}/{ctx.day.isoformat()}/v{version}.{ext}", f"{base}/{ctx.day.isoformat()}.{ext}"):
            _write_text(ctx.store, path, text)
        files[ext] = f"{base}/{ctx.day.isoformat()}.{ext}"
    if not same:
        ctx.append(
            [
                ctx.emit(
                    "brief.published",
                    {
                        "brief_date": ctx.day.isoformat(),
                        "version": version,
                        "items": len(document["items"]),
                        "stories": [i["story_id"] for i in document["items"]],
                        "files": files,
                        "content_hash": digest,
                    },
                    subject=f"brief-{ctx.day.isoformat()}",
                    producer="write@1",
                )
            ]
        )
    return Published(version, files, not same, markdown, len(document["items"]))


def _write_text(store: ParquetEventStore, path: str, text: str) -> None:
    directory = path.rsplit("/", 1)[0]
    store.fs.create_dir(directory, recursive=True)
    temporary = f"{directory}/.{path.rsplit('/', 1)[1]}.tmp"
    with store.fs.open_output_stream(temporary) as out:
        out.write(text.encode())
    store.fs.move(temporary, path)


# -- run lifecycle and report ------------------------------------------------------------


def today(settings: Settings) -> date:
    return datetime.now(UTC).astimezone(settings.zone).date()


def resolve_day(text: str | None, settings: Settings) -> date:
    from storage.errors import InputError

    if text is None:
        return today(settings)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InputError(f"date {text!r} is not a date; use YYYY-MM-DD, e.g. 2025-08-06") from None


class RunReport:
    """Times each step, writes run.started / run.finished, and tabulates what happened."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        self.started = 0.0
        self.seconds: dict[str, float] = {}
        self.sources: list[SourceOutcome] = []
        self.outcome: DedupOutcome | None = None
        self.published: Published | None = None

    def start(self) -> None:
        import time

        self.started = time.perf_counter()
        self.ctx.append(
            [
                self.ctx.emit(
                    "run.started",
                    {
                        "flow": "daily-brief",
                        "parameters": {
                            "date": self.ctx.day.isoformat(),
                            "policy_version": self.ctx.policy_version,
                        },
                    },
                    subject=self.ctx.run_id,
                    producer="flow.daily@1",
                )
            ]
        )

    def step(self, name: str):
        import contextlib
        import time

        @contextlib.contextmanager
        def timed():
            from storage.errors import StepFailed

            t = time.perf_counter()
            try:
                yield
            except StepFailed:
                raise
            except Exception as exc:
                raise StepFailed(name, exc) from exc
            finally:
                self.seconds[name] = round(time.perf_counter() - t, 3)

        return timed()

    def finish(self, outcome: DedupOutcome, published: Published) -> None:
        self.outcome, self.published = outcome, published
        counts = {
            **self.ctx.counts,
            "news": outcome.news,
            "stories": len(outcome.stories),
            "items": published.items,
            "version": published.version,
            "embeddings_computed": self.ctx.embedder.computed,
        }
        self.ctx.append(
            [
                self.ctx.emit(
                    "run.finished",
                    {"status": "completed", "step_seconds": self.seconds, "counts": counts},
                    subject=self.ctx.run_id,
                    producer="flow.daily@1",
                )
            ]
        )

    def table(self) -> list[dict]:
        return [
            {
                "source": s.source,
                "items": s.items,
                "new events": s.new_events,
                "status": f"{s.error}: {s.message}" if s.error else (s.message or "ok"),
            }
            for s in self.sources
        ]

    def summary(self) -> str:
        failed = [s.source for s in self.sources if s.error]
        steps_text = ", ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        dedup = ""
        if self.outcome is not None:
            dedup = (
                f"; {self.outcome.news} new articles in {len(self.outcome.stories)} stories, "
                f"{self.outcome.duplicates} duplicates dropped"
            )
        return (
            f"{self.ctx.day}: {len(self.sources) - len(failed)}/{len(self.sources)} sources ok"
            + (f" (failed: {', '.join(failed)})" if failed else "")
            + dedup
            + f"; {steps_text}"
        )


# -- review (interview protocol) ---------------------------------------------------------


def answered(ctx: RunContext) -> dict[tuple[str, str, str], dict]:
    """Every answer given up to this day: (subject, field, value) -> the resolved question row."""
    days = [d for d in ctx.store.days() if d <= ctx.day]
    frame = materialize(ctx.store, "questions", days=days).filter(pl.col("status") == "resolved")
    return {
        (r["subject"], r["field"], r["value"]): r for r in frame.sort("resolved_at").iter_rows(named=True)
    }


def raise_questions(
    ctx: RunContext, outcome: DedupOutcome, document: dict, findings: Sequence[fc.Finding]
) -> dict:
    """Ask what the run could not settle; apply earlier answers to questions asked before."""
    titles = {i["story_id"]: i["title"] for i in document["items"]}
    categories = [c.name for c in ctx.settings.policy.categories]
    questions = [
        rv.same_story_question(a, outcome.items[a].title, b, outcome.items[b].title, s)
        for a, b, s in outcome.borderline
    ]
    questions += [
        rv.category_question(i["story_id"], i["title"], i["category"], i["category_confidence"], categories)
        for i in document["items"]
        if i["category"] != "other" and i["category_confidence"] < ctx.settings.policy.min_category_confidence
    ]
    questions += [
        rv.claim_question(f.story_id, titles.get(f.story_id, f.story_id), f.kind, f.claim, f.reason)
        for f in findings
        if f.kind != "citation"
    ]
    questions += [rv.publish_time_question(a, outcome.items[a].title) for a in outcome.undated]
    earlier = answered(ctx)
    today = {r["question_id"] for r in earlier.values() if r["brief_date"] == ctx.day}
    events, counts = [], {"asked": 0, "applied": 0}
    for batch_id, q in rv.batch(questions, ctx.day)[: ctx.settings.policy.max_questions]:
        if q.question_id in today:
            continue
        before = earlier.get(q.key)
        if before is not None:
            events.append(
                ctx.emit(
                    "confirmation.resolved",
                    {
                        "question_id": q.question_id,
                        "subject": q.subject,
                        "field": q.field,
                        "value": q.value,
                        "answer": before["answer"],
                        "by": "earlier-answer",
                        "applied_from": before["question_id"],
                    },
                    subject=q.subject,
                    producer="review@1",
                )
            )
            counts["applied"] += 1
        else:
            events.append(
                ctx.emit(
                    "confirmation.requested", q.payload(batch_id), subject=q.subject, producer="review@1"
                )
            )
            counts["asked"] += 1
    ctx.append(events)
    return counts


def open_questions(ctx: RunContext) -> pl.DataFrame:
    frame = materialize(ctx.store, "questions", days=[d for d in ctx.store.days() if d <= ctx.day])
    return frame.filter((pl.col("status") == "open") & (pl.col("brief_date") == ctx.day))


def resolve(ctx: RunContext, question: dict, answer: str, by: str) -> list[Event]:
    """The answer as a fact, and the correction it implies."""
    from storage.events import new_event

    events = [
        ctx.emit(
            "confirmation.resolved",
            {
                "question_id": question["question_id"],
                "subject": question["subject"],
                "field": question["field"],
                "value": question["value"],
                "answer": answer,
                "by": by,
            },
            subject=question["subject"],
            producer="review@1",
        )
    ]

    def fact(event_type: str, payload: dict, subject: str) -> Event:
        return new_event(
            event_type,
            payload,
            brief_date=ctx.day,
            run_id=ctx.run_id,
            subject_id=subject,
            produced_by=f"review@1:{by}",
            occurred_at=utcnow(),
            source_event_ids=[events[0].event_id],
        )

    field_ = question["field"]
    if field_ == "same_story":
        ids = question["subject"].split("|")
        kind = "story.merged" if answer == "yes" else "story.split"
        events.append(fact(kind, {"article_ids": ids, "question_id": question["question_id"]}, ids[0]))
    elif field_ == "category" and answer != question["value"]:
        stories = materialize(ctx.store, "stories", days=[ctx.day])
        rows = stories.filter(pl.col("story_id") == question["subject"])
        if rows.height:
            article = rows["representative"][0]
            events.append(
                fact(
                    "article.corrected",
                    {
                        "article_id": article,
                        "field": "category",
                        "value": answer,
                        "reason": f"answer to {question['question_id']}",
                        "by": by,
                    },
                    article,
                )
            )
    elif field_ == "published_at" and answer not in ("", "skip"):
        events.append(
            fact(
                "article.corrected",
                {
                    "article_id": question["subject"],
                    "field": "published_at",
                    "value": f"{answer}T00:00:00+00:00",
                    "reason": f"answer to {question['question_id']}",
                    "by": by,
                },
                question["subject"],
            )
        )
    return events


def rebrief(ctx: RunContext) -> Published:
    """The day's brief again from stored facts and answers (no collection); a new version if it changed."""
    outcome = dedup_day(ctx)
    analyses = analyze_stories(ctx, outcome)
    document, findings = factcheck(ctx, outcome, compose(ctx, outcome, analyses))
    raise_questions(ctx, outcome, document, findings)
    document, _ = gate(ctx, outcome, document)
    return publish(ctx, document)
