"""A backfill embeds the texts of all its dates at once; each date's run then computes none."""

from __future__ import annotations

import shutil
from datetime import date, timedelta
from pathlib import Path

import numpy as np

from tests.conftest import REPO

DAYS = [date(2025, 8, 5) + timedelta(days=k) for k in range(3)]


def _resources(settings):
    from storage.store import ParquetEventStore
    from tasks.embed import HashingEmbedder
    from tasks.steps.context import Models, Resources

    store = ParquetEventStore(settings.storage.root)
    return Resources(store, Models(HashingEmbedder()), caches=store.tree.caches)


def test_the_dates_runs_find_every_vector_the_range_embedded(tmp_path: Path) -> None:
    from prefect.logging import disable_run_logger

    from flows.backfill import collect_archives_task
    from tasks.embed import HashingEmbedder
    from tasks.settings import load_settings
    from tasks.steps import dedup_day, open_run
    from tasks.steps.embed_range import date_texts, embed_range

    shutil.copytree(REPO / "samples", tmp_path / "samples")
    settings = load_settings(str(tmp_path / "samples" / "brief.toml"))
    with disable_run_logger():
        collect_archives_task.fn(DAYS, settings, 2, "backfill-test")

    resources = _resources(settings)
    first = embed_range([open_run(resources, settings, d, "backfill-test") for d in DAYS])
    wanted = {d: date_texts(open_run(resources, settings, d)).run for d in DAYS}
    unique = {t for texts in wanted.values() for t in texts}
    assert first.dates == 3
    assert first.computed == first.texts == len(unique) > 1  # the sample's news and the topic, once

    for day in DAYS:  # a date's run, in a process of its own: only the cache on disk
        ctx = open_run(_resources(settings), settings, day, f"run-{day}")
        texts = list(wanted[day])
        assert all(ctx.embedder.holds(t) for t in texts), day  # filed under a day the run reads
        vectors = ctx.embedder.encode(texts)
        np.testing.assert_array_equal(vectors, HashingEmbedder().encode(texts))
        assert ctx.embedder.computed == 0

    ctx = open_run(_resources(settings), settings, date(2025, 8, 6), "run-dedup")
    outcome = dedup_day(ctx)
    assert outcome.news > 0
    assert ctx.embedder.computed == 0  # dedup found every vector it needed

    again = embed_range([open_run(_resources(settings), settings, d, "again") for d in DAYS])
    assert (again.texts, again.computed) == (first.texts, 0)  # nothing new: nothing computed
