"""A backfill's collection opens the store once, not once per (date, source)."""

from __future__ import annotations

import shutil
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import pytest

from storage.store import ParquetEventStore
from tests.conftest import REPO


def test_collecting_the_archives_of_a_range_opens_the_store_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from prefect.logging import disable_run_logger

    import storage.store.parquet as parquet
    from flows.backfill import collect_archives_task
    from tasks.settings import load_settings

    shutil.copytree(REPO / "samples", tmp_path / "samples")
    config = str(tmp_path / "samples" / "brief.toml")
    opened: Counter[str] = Counter()  # where a store resolves its root: on S3, the bucket check
    real = parquet.resolve_filesystem

    def counting(root: str, **options: object):
        opened[root] += 1
        return real(root, **options)

    monkeypatch.setattr(parquet, "resolve_filesystem", counting)
    days = [date(2025, 8, 4) + timedelta(days=k) for k in range(4)]  # 4 dates x 2 archives
    settings = load_settings(config)
    with disable_run_logger():
        collect_archives_task.fn(days, settings, 2, "backfill-test")

    assert sum(opened.values()) == 1, opened  # was one per job: 8
    store = ParquetEventStore(str(tmp_path / "var" / "sample-store"))
    collected = Counter(e.payload["source"] for e in store.read(event_types=["feed.fetched"]))
    assert collected == {"labnotes": 1, "techwire": 1}  # only 2025-08-06 has archives
    failed = Counter(e.payload["source"] for e in store.read(event_types=["feed.failed"]))
    assert failed == {"labnotes": 1, "techwire": 1}  # 2025-08-07's archive is missing
    skipped = Counter(e.payload["source"] for e in store.read(event_types=["feed.skipped"]))
    assert skipped == {"labnotes": 2, "techwire": 2}  # the archives start after 08-04 and 08-05
