"""A run: who it is (``RunIdentity``), what it uses (``Resources``, built once by ``bootstrap``, the
composition root), how it records (a ``Recorder``: live, dry, capturing), and what it counted.

Replay is an argument of ``open_run`` (a recorder, people's answers held out or not), never a flag
set on a context afterwards: a ``RunContext`` is frozen; only its tallies (counts, memo, the days
it wrote, the events it made) grow as it runs.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Generic, Protocol, TypeVar

from storage.events import Event, new_event, utcnow
from storage.root.caches import Caches
from storage.store import ParquetEventStore
from tasks.embed import CachedEmbedder, Embedder
from tasks.settings import EmbeddingSettings, Settings

T = TypeVar("T")


class Clock(Protocol):
    """What "now" is: every decision that depends on today asks the run's clock."""

    def now(self) -> datetime: ...


@dataclass(frozen=True)
class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)


@dataclass(frozen=True)
class FixedClock:
    """Always ``at`` (timezone-aware): a test's today, whatever day it runs on."""

    at: datetime

    def now(self) -> datetime:
        return self.at


SYSTEM_CLOCK: Clock = SystemClock()


@dataclass(frozen=True)
class Models:
    """The embedding models a run uses, made once (each loads its weights on first use)."""

    run: Embedder  # the run's embedder ([embedding] model)
    multilingual: Embedder | None = None  # what dedup compares pairs with non-English text by
    # reads the articles the run's embedder cannot (Chinese, Dutch …) for the editorial judgement;
    # without it, a non-English article's embedding evidence is undecided
    reader: Embedder | None = None


@dataclass(frozen=True)
class Resources:
    """What runs use and do not own, built once by ``bootstrap``: the store, the models, the clock,
    and where the models' vectors are cached (a store root's caches; None: not cached)."""

    store: ParquetEventStore
    models: Models
    clock: Clock = SYSTEM_CLOCK
    caches: Caches | None = None
    embedding: EmbeddingSettings | None = None  # what the models were made from (``for_settings``)

    def with_store(self, store: ParquetEventStore) -> Resources:
        """These models, clock and caches over another store (a replay's frozen events, which caches
        its vectors in the real root)."""
        return dataclasses.replace(self, store=store)

    def for_settings(self, settings: Settings) -> Resources:
        """The resources a differently-configured run uses (a trial or candidate policy, the policy
        in force): these, when ``settings`` name the same embedding models; else the models they
        name made (``bootstrap``), over this store, clock and caches."""
        if settings.embedding == self.embedding:
            return self
        return bootstrap(settings, self.store, self.clock, self.caches)

    def embedders(self, day: date, days: Sequence[date]) -> Embedders:
        """The models as a run of ``day`` uses them: new vectors cached under ``day``, ``days`` loaded."""
        made: dict[int, CachedEmbedder] = {}  # a model named twice is one cached embedder

        def cached(model: Embedder | None) -> CachedEmbedder | None:
            if model is None:
                return None
            if id(model) not in made:
                cache = self.caches.embeddings(model.name) if self.caches is not None else None
                made[id(model)] = CachedEmbedder(model, cache, day=day, days=days)
            return made[id(model)]

        run = cached(self.models.run)
        assert run is not None
        return Embedders(run, cached(self.models.multilingual), cached(self.models.reader))


def bootstrap(
    settings: Settings,
    store: ParquetEventStore | None = None,
    clock: Clock | None = None,
    caches: Caches | None = None,
) -> Resources:
    """The composition root: the store (``store``: one already open, shared by many days' runs),
    the embedding models the settings name and the clock, each made once. The vectors are cached
    under the store's root, or in ``caches`` (a replay over frozen events caches in the real root)."""
    from tasks.embed import Remembered, embedder
    from tasks.embed_multilingual import DIMENSIONS, MultilingualEmbedder

    chosen = settings.embedding
    run = embedder(chosen.model, chosen.batch_size, "embedding.model")
    multilingual = None
    if chosen.multilingual:
        same = chosen.multilingual == chosen.model
        multilingual = (
            run if same else embedder(chosen.multilingual, chosen.batch_size, "embedding.multilingual")
        )
    models = Models(run, multilingual, Remembered(MultilingualEmbedder(), DIMENSIONS))
    with _MADE_LOCK:
        _MADE.update({m.name for m in (models.run, models.multilingual, models.reader) if m is not None})
    store = store or settings.storage.event_store()
    return Resources(store, models, clock or SYSTEM_CLOCK, caches or store.tree.caches, chosen)


_MADE: Counter[str] = Counter()
_MADE_LOCK = threading.Lock()


def models_made() -> Counter[str]:
    """How many times this process's composition root made each embedding model (by name): a
    process that builds its resources once makes each once, whatever it runs with them."""
    with _MADE_LOCK:
        return Counter(_MADE)


@dataclass(frozen=True)
class Embedders:
    run: CachedEmbedder
    multilingual: CachedEmbedder | None = None
    reader: CachedEmbedder | None = None


@dataclass(frozen=True)
class RunIdentity:
    """Which run this is: its brief date, its id, the policy it decides under and the days it reads."""

    day: date
    run_id: str
    policy_version: str  # every event the run writes carries it
    reach: tuple[date, ...]  # the days a run reads, oldest first (``reach``)
    policy_origin: dict[str, Any] | None = None  # where the run's policy came from (ops.policy.governing)

    @classmethod
    def of(
        cls, settings: Settings, day: date, run_id: str, origin: dict[str, Any] | None = None
    ) -> RunIdentity:
        return cls(day, run_id, settings.policy_version(), tuple(reach(settings, day)), origin)


def reach(settings: Settings, day: date) -> list[date]:
    """The days a run reads: its brief date and the ``read_days`` days before it, oldest first.

    A run's cost depends on this window, never on the length of the log. Everything a
    day's brief depends on was written in it: the articles of the news window (collected
    on the brief date and the lookback days before it), the earlier briefs its articles
    may repeat or continue (follow-ups reach ``FOLLOW_UP_DAYS`` back), what those briefs'
    articles were when collected, and what people answered about them.
    """
    days = read_days(settings.policy.lookback_hours)
    return [day - timedelta(days=k) for k in range(days, -1, -1)]


class Recorder:
    """Where a run's events go. Live: appended to the store."""

    keeps = True  # what the run fetches is kept (raw bodies)

    def record(self, store: ParquetEventStore, events: Sequence[Event]) -> int:
        return store.append(events).written


class Dry(Recorder):
    """A replay that decides everything and records nothing (evaluate, learn, regression)."""

    keeps = False

    def record(self, store: ParquetEventStore, events: Sequence[Event]) -> int:
        return 0


class Capturing(Recorder):
    """Keeps what the run would append in memory (``captured``), stores nothing (a shadow's decisions)."""

    keeps = False

    def __init__(self) -> None:
        self.captured: list[Event] = []

    def record(self, store: ParquetEventStore, events: Sequence[Event]) -> int:
        self.captured.extend(events)
        return 0


LIVE = Recorder()


class Once(Generic[T]):
    """A value made on first use, then the same one (a run's analyst)."""

    def __init__(self) -> None:
        self._value: T | None = None
        self._lock = threading.RLock()

    def get(self, make: Callable[[], T]) -> T:
        with self._lock:
            if self._value is None:
                self._value = make()
            return self._value


@dataclass(frozen=True)
class RunContext:
    """One run of one day: its identity, settings, resources and recorder, and what it counted.

    ``held_out``: people's relevance marks and same-story answers do not bind the decisions (a
    replay scored against them: evaluate, the regression set).
    """

    identity: RunIdentity
    settings: Settings
    resources: Resources
    embedders: Embedders
    recorder: Recorder = LIVE
    held_out: bool = False
    analyst: Once[Any] = field(default_factory=Once)  # the run's language-model analyst (tasks.steps.llm)
    counts: dict[str, int] = field(default_factory=dict)
    memo: dict[str, tuple[object, object]] = field(default_factory=dict)  # (log position, value) per query
    written_days: set[date] = field(default_factory=set)  # days this run appended to (compaction's work)
    # the events this run made, by (event type, subject): what its later steps name as their sources
    emitted: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    _counts_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def day(self) -> date:
        return self.identity.day

    @property
    def run_id(self) -> str:
        return self.identity.run_id

    @property
    def policy_version(self) -> str:
        return self.identity.policy_version

    @property
    def reach(self) -> list[date]:
        return list(self.identity.reach)

    @property
    def store(self) -> ParquetEventStore:
        return self.resources.store

    @property
    def embedder(self) -> CachedEmbedder:
        return self.embedders.run

    @property
    def multilingual(self) -> CachedEmbedder | None:
        return self.embedders.multilingual

    @property
    def editorial_reader(self) -> CachedEmbedder | None:
        return self.embedders.reader

    def today(self) -> date:
        """Today in the configured timezone, by the run's clock."""
        return today(self.settings, self.resources.clock)

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
        """A context for one of several tasks running at once: the same identity, settings, resources,
        embedders, recorder and analyst, with counts, written days, memo and record of its own.

        Nothing a task does through it changes this context, which other tasks, and Prefect
        while it hands the context to them, may be reading; ``absorb`` adds what the task
        counted once it is done.
        """
        return dataclasses.replace(
            self, counts={}, written_days=set(), memo={}, emitted={}, _counts_lock=threading.Lock()
        )

    def under(self, settings: Settings, recorder: Recorder) -> RunContext:
        """The same day and run under other settings (a shadow's candidate): its own identity (the
        candidate's policy version and reach), analyst and tallies, the run's embedders (the vectors
        they remember) and a copy of the run's record of what it made (the live run's events it
        reads stay named; what it makes is its own)."""
        identity = RunIdentity.of(settings, self.day, self.run_id)
        emitted = {key: list(ids) for key, ids in self.emitted.items()}
        return RunContext(identity, settings, self.resources, self.embedders, recorder, emitted=emitted)

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
        if self.recorder.keeps:
            self.written_days.update(e.brief_date for e in events)
        return self.recorder.record(self.store, events)


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


def open_run(
    resources: Resources,
    settings: Settings,
    day: date,
    run_id: str | None = None,
    *,
    recorder: Recorder = LIVE,
    held_out: bool = False,
    origin: dict[str, Any] | None = None,
) -> RunContext:
    """A run of ``day`` under ``settings`` with ``resources``: live by default; a replay says how it
    records (``Dry``, ``Capturing``) and whether people's answers are ``held_out``."""
    identity = RunIdentity.of(settings, day, run_id or f"local-{uuid.uuid4().hex[:12]}", origin)
    read = [day - timedelta(days=k) for k in range(read_days(settings.policy.lookback_hours) + 1)]
    embedders = resources.embedders(day, read)
    return RunContext(identity, settings, resources, embedders, recorder, held_out)


def make_context(
    settings: Settings,
    day: date,
    run_id: str | None = None,
    store: ParquetEventStore | None = None,
    *,
    recorder: Recorder = LIVE,
    held_out: bool = False,
) -> RunContext:
    """A run of ``day`` with resources of its own (``bootstrap``); ``store``: one already open."""
    return open_run(bootstrap(settings, store), settings, day, run_id, recorder=recorder, held_out=held_out)


def today(settings: Settings, clock: Clock = SYSTEM_CLOCK) -> date:
    return clock.now().astimezone(settings.zone).date()


def latest_day(settings: Settings, clock: Clock = SYSTEM_CLOCK) -> date:
    """The latest brief date a run accepts: tomorrow in the configured timezone."""
    return today(settings, clock) + timedelta(days=1)


def refuse_future(day: date, settings: Settings, option: str = "date", clock: Clock = SYSTEM_CLOCK) -> date:
    """``day``, or an InputError when it is after tomorrow: no feed has that day's news yet, and its
    brief (empty) would become the newest entry of the briefs' feed."""
    from storage.errors import InputError

    latest = latest_day(settings, clock)
    if day > latest:
        raise InputError(
            f"{option} {day} is after tomorrow ({latest} in {settings.timezone}); "
            f"no feed has its news yet: give a date up to {latest}"
        )
    return day


def resolve_day(text: str | None, settings: Settings, clock: Clock = SYSTEM_CLOCK) -> date:
    """The day ``text`` names (a flow's ``date_``), else today by ``clock``."""
    from tasks.dates import parse_date

    return parse_date(text, "date") or today(settings, clock)
