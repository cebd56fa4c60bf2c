"""The secret searches of the tests can fail: a secret stored in any file the store or an export
writes is found in that file's text, whatever characters it holds."""

from __future__ import annotations

import gzip
from datetime import date
from pathlib import Path

import polars as pl
import pytest

from storage.events import new_event, utcnow
from storage.store import ParquetEventStore
from tests.plaintext import every_file_text

SECRET = 'sk/live+"quoted"\\slash-é-7f3a9c'  # JSON would escape /, " and \


@pytest.mark.parametrize("append_format", ["jsonl", "parquet"])
def test_a_secret_in_an_event_is_found_in_the_stored_files_text(tmp_path: Path, append_format: str) -> None:
    store = ParquetEventStore(str(tmp_path / "store"), append_format=append_format)
    store.append(
        [
            new_event(
                "feed.failed",
                {
                    "source": "s",
                    "url": "https://x.example/",
                    "error": "E",
                    "retryable": False,
                    "message": SECRET,
                },
                brief_date=date(2025, 8, 6),
                run_id="r",
                subject_id="s",
                produced_by="test",
                occurred_at=utcnow(),
            )
        ]
    )
    [(_, text)] = every_file_text(tmp_path / "store").items()  # one segment, or one Parquet file
    assert SECRET in text
    store.compact(date(2025, 8, 6))  # one zstd Parquet file: the payload is a value of a row
    # (and, on a local disk, the day's empty lock file that compaction holds)
    texts = every_file_text(tmp_path / "store")
    assert all(text == "" for path, text in texts.items() if path.suffix == ".lock")
    [(path, text)] = [(path, text) for path, text in texts.items() if path.suffix != ".lock"]
    assert path.suffix == ".parquet" and SECRET in text


def test_a_secret_in_a_parquet_column_or_a_gzip_file_is_found(tmp_path: Path) -> None:
    pl.DataFrame({"nested": [{"deep": [SECRET]}]}).write_parquet(tmp_path / "a.parquet", compression="zstd")
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(SECRET.encode()))
    texts = every_file_text(tmp_path)
    assert all(SECRET in text for text in texts.values()), texts
