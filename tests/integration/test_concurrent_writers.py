"""Real processes writing one day at once, and a writer killed mid-append.

The racing writers and compactors run against the local disk and against a real S3-compatible
server (moto's server mode, started by the tests). The SIGKILL test is local only: on an object
store there is no temporary file to tear, the PUT is whole or absent.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storage.store import ParquetEventStore
from tests.conftest import REPO
from tests.factories import DAY, store_at


@pytest.fixture(params=["local", "s3"])
def root(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where the racing processes write: a local folder, or a new bucket on the tests' S3 server."""
    return str(tmp_path) if request.param == "local" else request.getfixturevalue("s3_root")


def _writer(
    root: Path | str,
    start: int,
    count: int,
    batch: int,
    pause: float = 0.0,
    append_format: str = "jsonl",
    crash_at: int | None = None,
) -> subprocess.Popen[str]:
    crash = [str(crash_at)] if crash_at else []
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.integration.writer",
            str(root),
            str(start),
            str(count),
            str(batch),
            str(pause),
            append_format,
            *crash,
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _rows(path: Path) -> int:
    """Events in one visible part file, read whole: a torn file would fail to decompress or parse."""
    if path.name.endswith(".parquet"):
        return pq.ParquetFile(path).metadata.num_rows
    return len(pa.CompressedInputStream(pa.OSFile(str(path)), "zstd").read().splitlines())


def test_two_processes_appending_to_one_day_each_event_once(root: str) -> None:
    # Overlapping ranges: 0..2999 and 1500..4499 share 1500 events that both try to write.
    a, b = _writer(root, 0, 3000, 100), _writer(root, 1500, 3000, 100)
    for proc in (a, b):
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
    events = store_at(root).read()
    subjects = sorted(int(e.subject_id.split("-")[1]) for e in events)
    assert subjects == list(range(4500))
    assert len({e.event_id for e in events}) == len(events) == 4500


@pytest.mark.parametrize("append_format", ["jsonl", "parquet"])
def test_writer_killed_mid_append_leaves_nothing_partial(tmp_path: Path, append_format: str) -> None:
    """SIGKILL lands while the third batch is half on disk: readers see whole files only, a rerun completes."""
    day_dir = tmp_path / "events" / f"date={DAY.isoformat()}"
    batch, total = 500, 2_500
    killed = _writer(tmp_path, 0, total, batch, 0.0, append_format, crash_at=3)
    stdout, _ = killed.communicate(timeout=120)
    assert killed.returncode == -signal.SIGKILL
    assert stdout.split() == ["0", "500"]  # two batches acknowledged, the third was being written
    (torn,) = day_dir.glob(".*.tmp")  # half a file, under its temporary name only
    assert torn.stat().st_size > 0
    visible = sorted(day_dir.glob("part-*"))
    assert len(visible) == 2 and all(_rows(p) == batch for p in visible)  # every visible file is whole
    events = ParquetEventStore(str(tmp_path)).read()
    assert sorted(int(e.subject_id.split("-")[1]) for e in events) == list(range(1000))

    rerun = _writer(tmp_path, 0, total, batch, 0.0, append_format)
    _, stderr = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, stderr
    events = ParquetEventStore(str(tmp_path)).read()
    assert len(events) == len({e.event_id for e in events}) == total  # nothing lost, nothing twice
    assert sum(_rows(p) for p in day_dir.glob("part-*")) == total  # the rerun skipped what was there
    assert ParquetEventStore(str(tmp_path)).remove_stale_temporaries(DAY, older_than_s=-1) == 1


def test_readers_read_while_a_writer_appends_and_two_compactors_compact(root: str) -> None:
    """Every read sees whole batches, each id once; at the end every event is there exactly once."""
    batch, total = 50, 2_000
    writer = _writer(root, 0, total, batch, pause=0.01)
    assert writer.stdout is not None
    writer.stdout.readline()  # the day exists before the compactors start
    compactors = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.integration.compactor", root, DAY.isoformat(), "4"],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    reader = store_at(root)
    seen = []
    while any(p.poll() is None for p in (writer, *compactors)):
        ids = reader.query(lambda: reader.scan([DAY]).select("event_id")).get_column("event_id")
        assert ids.n_unique() == len(ids) and len(ids) % batch == 0
        seen.append(len(ids))
    rounds = []
    for proc in (writer, *compactors):
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr
        rounds.append(stdout.strip().splitlines()[-1])
    assert all(int(r) > 0 for r in rounds[1:]), rounds  # both compactors did compact
    assert seen == sorted(seen) and len(seen) > 10  # reads never went backwards
    events = reader.read()
    assert len(events) == len({e.event_id for e in events}) == total
    reader.compact(DAY)
    assert [f.rsplit(".", 1)[-1] for f in reader.files(DAY)] == ["parquet"]  # one compacted file
