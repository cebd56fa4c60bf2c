"""A run's context for tests: the hashing embedder (instant, no model to load), through the
composition root's own parts (``Resources``, ``open_run``), as a run is made."""

from __future__ import annotations

from datetime import date

from storage.store import ParquetEventStore
from tasks import steps
from tasks.embed import Embedder, HashingEmbedder
from tasks.settings import Settings
from tasks.steps.context import Models


def hashing_run(
    store: ParquetEventStore | str,
    settings: Settings,
    day: date,
    run_id: str = "run",
    *,
    multilingual: Embedder | None = None,
    clock: steps.Clock = steps.SYSTEM_CLOCK,
    cached: bool = False,
    recorder: steps.Recorder = steps.LIVE,
) -> steps.RunContext:
    """A live run of ``day`` on ``store`` (or the store at that root) embedding by hashing.

    ``multilingual``: the model dedup compares non-English pairs with (none by default), no
    editorial reader; ``cached``: the vectors kept in the store's embedding cache (by default none
    is); ``clock``: what today is for the run (a test that depends on the date gives a fixed one);
    ``recorder``: where its events go (live: the store).
    """
    store = ParquetEventStore(store) if isinstance(store, str) else store
    models = Models(HashingEmbedder(), multilingual)
    resources = steps.Resources(store, models, clock, store.tree.caches if cached else None)
    return steps.open_run(resources, settings, day, run_id, recorder=recorder)
