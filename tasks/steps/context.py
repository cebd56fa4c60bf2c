"""The run's context: store, settings, day, run id, embedder; what "today" is."""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from storage.events import Event, new_event, utcnow
from storage.store import ParquetEventStore
from tasks.embed import CachedEmbedder
from tasks.settings import Settings


@dataclass
class RunContext:
    store: ParquetEventStore
    settings: Settings
    day: date
    run_id: str
    embedder: CachedEmbedder
    multilingual: CachedEmbedder | None = None  # what dedup compares pairs with non-English text by
    counts: dict[str, int] = field(default_factory=dict)
    # reads the articles the run's embedder cannot (Chinese, Dutch …) for the editorial judgement;
    # without it, a non-English article's embedding evidence is undecided
    editorial_reader: CachedEmbedder | None = None
    dry_run: bool = False  # evaluate a policy: decide everything, record nothing
    apply_marks: bool = True  # people's relevance marks override the model (evaluate holds them out)
    apply_links: bool = True  # people's same-story answers bind clustering (evaluate holds them out)
    memo: dict[str, tuple[object, object]] = field(default_factory=dict)  # (log position, value) per query
    analyst: Any = None  # the run's language-model analyst (tasks.steps.llm), made on first use
    written_days: set[date] = field(default_factory=set)  # days this run appended to (compaction's work)
    policy_origin: dict[str, Any] | None = None  # where the run's policy came from (ops.policy.governing)
    # the events this run made, by (event type, subject): what its later steps name as their sources
    emitted: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    _counts_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @functools.cached_property
    def policy_version(self) -> str:
        """Hashed once per run (every event carries it); the settings of a run do not change."""
        return self.settings.policy_version()

    @functools.cached_property
    def reach(self) -> list[date]:
        """The days a run reads: its brief date and the ``read_days`` days before it, oldest first.

        A run's cost depends on this window, never on the length of the log. Everything a
        day's brief depends on was written in it: the articles of the news window (collected
        on the brief date and the lookback days before it), the earlier briefs its articles
        may repeat or continue (follow-ups reach ``FOLLOW_UP_DAYS`` back), what those briefs'
        articles were when collected, and what people answered about them.
        """
        days = read_days(self.settings.policy.lookback_hours)
        return [self.day - timedelta(days=k) for k in range(days, -1, -1)]

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
        event = new_event(
            event_type,
            payload,
            brief_date=self.day,
            run_id=self.run_id,
            subject_id=subject,
            produced_by=producer,
            occurred_at=utcnow(),
            seq=seq,
            source_event_ids=list(dict.fromkeys(sources)),
            policy_version=self.policy_version,
        )
        made = self.emitted.setdefault((event_type, subject), [])
        if event.event_id not in made:
            made.append(event.event_id)
        return event

    def made(self, event_type: str, subject: str) -> list[str]:
        """The ids of the ``event_type`` events this run made about ``subject``, in the order it made them
        (what a later step of the run names as its sources: lineage)."""
        return list(self.emitted.get((event_type, subject), ()))

    def fork(self) -> RunContext:
        """A context for one of several tasks running at once: the same store, settings, day, run
        and models, with counts, written days and memo of its own.

        Nothing a task does through it changes this context, which other tasks, and Prefect
        while it hands the context to them, may be reading; ``absorb`` adds what the task
        counted once it is done.
        """
        own = dataclasses.replace(
            self, counts={}, written_days=set(), memo={}, emitted={}, _counts_lock=threading.Lock()
        )
        for name in ("policy_version", "reach"):  # computed once per run, not once per task
            if name in self.__dict__:
                own.__dict__[name] = self.__dict__[name]
        return own

    def absorb(self, counts: Mapping[str, int], days: Iterable[date]) -> None:
        """Add what a task counted and the days it wrote (through its ``fork``) to the run's."""
        with self._counts_lock:
            for event_type, n in counts.items():
                self.counts[event_type] = self.counts.get(event_type, 0) + n
            self.written_days.update(days)

    def append(self, events: Sequence[Event]) -> int:
        with self._counts_lock:  # threads of one step (a backfill's collection) may append at once
            for e in events:
                self.counts[e.event_type] = self.counts.get(e.event_type, 0) + 1
        if self.dry_run:
            return 0
        self.written_days.update(e.brief_date for e in events)
        return self.store.append(events).written


FOLLOW_UP_DAYS = 7  # a story briefed this many days back may be continued today


def lookback_days(lookback_hours: int) -> int:
    """Calendar days the news window reaches back from the brief date (whole days, rounded up)."""
    return -(-lookback_hours // 24)


def read_days(lookback_hours: int) -> int:
    """How many days before the brief date a run reads.

    A story briefed ``FOLLOW_UP_DAYS`` back was news in that day's window, so its articles were
    collected at most ``lookback_days`` (+1 for the timezone's offset) before it.
    """
    return FOLLOW_UP_DAYS + lookback_days(lookback_hours) + 1


def make_context(
    settings: Settings, day: date, run_id: str | None = None, store: ParquetEventStore | None = None
) -> RunContext:
    """The run's store and cached embedders, from the settings (the one place that wires them).

    ``store``: one already open, shared by the contexts of many days (a backfill's collection),
    instead of a new one (and, on S3, a new check of the bucket) per context.
    """
    import uuid

    from tasks.embed import embedder
    from tasks.embed_multilingual import MultilingualEmbedder

    store = store or settings.storage.event_store()
    reach = read_days(settings.policy.lookback_hours)
    days = [day - timedelta(days=k) for k in range(reach + 1)]
    chosen = settings.embedding

    def cached(model: str, setting: str) -> CachedEmbedder:
        inner = embedder(model, chosen.batch_size, setting)
        return CachedEmbedder(inner, store.tree.caches.embeddings(inner.name), day=day, days=days)

    main = cached(chosen.model, "embedding.model")
    multilingual = None
    if chosen.multilingual:
        same = chosen.multilingual == chosen.model
        multilingual = main if same else cached(chosen.multilingual, "embedding.multilingual")
    inner = MultilingualEmbedder()
    reader = CachedEmbedder(inner, store.tree.caches.embeddings(inner.name), day=day, days=days)
    run = run_id or f"local-{uuid.uuid4().hex[:12]}"
    return RunContext(store, settings, day, run, main, multilingual, editorial_reader=reader)


def today(settings: Settings) -> date:
    return datetime.now(UTC).astimezone(settings.zone).date()


def latest_day(settings: Settings) -> date:
    """The latest brief date a run accepts: tomorrow in the configured timezone."""
    return today(settings) + timedelta(days=1)


def refuse_future(day: date, settings: Settings, option: str = "date") -> date:
    """``day``, or an InputError when it is after tomorrow: no feed has that day's news yet, and its
    brief (empty) would become the newest entry of the briefs' feed."""
    from storage.errors import InputError

    latest = latest_day(settings)
    if day > latest:
        raise InputError(
            f"{option} {day} is after tomorrow ({latest} in {settings.timezone}); "
            f"no feed has its news yet: give a date up to {latest}"
        )
    return day


def resolve_day(text: str | None, settings: Settings) -> date:
    from storage.errors import InputError

    if text is None:
        return today(settings)
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InputError(f"date {text!r} is not a date; use YYYY-MM-DD, e.g. 2025-08-06") from None
