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


def test_an_archive_in_the_log_with_the_bytes_it_holds_now_is_not_read_again(
    shared_data: Path, tmp_path: Path
) -> None:
    """A backfill's collection skips a date's archive when its file, and those of the days its
    lookback reaches, are each in the log with their present bytes; a file changed since is read."""
    from tasks.settings import load_settings
    from tasks.steps import bootstrap, collect_one, open_run
    from tasks.steps.collect import archive_collected
    from tests.real_days import archive_config

    feeds = tmp_path / "feeds" / "arstechnica"
    feeds.mkdir(parents=True)
    for day in range(6, 13):
        name = f"2025-07-{day:02d}.xml"
        shutil.copy(shared_data / "month" / "feeds" / "arstechnica" / name, feeds / name)
    settings = load_settings(str(archive_config(tmp_path, tmp_path / "feeds", ["arstechnica"])))
    resources = bootstrap(settings)

    def collected_already() -> bool:
        return archive_collected(open_run(resources, settings, date(2025, 7, 12), "t"), "arstechnica", {})

    assert not collected_already()  # nothing in the log yet
    outcome = collect_one(open_run(resources, settings, date(2025, 7, 12), "t"), "arstechnica")
    assert outcome.new_events > 0 and outcome.error is None
    assert collected_already()
    again = collect_one(open_run(resources, settings, date(2025, 7, 12), "t2"), "arstechnica")
    assert again.new_events == 0  # what the skip spares: a read that appends nothing
    with (feeds / "2025-07-11.xml").open("ab") as archive:  # a lookback day's file changed since
        archive.write(b"\n<!-- amended -->\n")
    assert not collected_already()
