"""The lock on an object store (a lease object on S3, on moto's server): one holder at a time, a
crashed holder blocks others only for its lease's ttl."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from storage.atomic import exclusive
from storage.lease import LeaseLost, s3_lease
from storage.store import ParquetEventStore
from tests.conftest import REPO


def store_of(root: str, endpoint: str) -> ParquetEventStore:
    return ParquetEventStore(root, endpoint_url=endpoint)


def test_of_two_acquirers_of_a_lease_on_s3_one_wins(s3_root: str, s3_server: str) -> None:
    store = store_of(s3_root, s3_server)
    path = f"{store.base}/briefs/.2025-08-06.lock"
    first, second = s3_lease(store.fs, path), s3_lease(store.fs, path)
    assert first.try_acquire()
    assert not second.try_acquire()  # the conditional create refused it: the first holds it
    assert not second.try_acquire()
    first.release()
    assert second.try_acquire()  # free again once the first let go
    assert not first.try_acquire()
    second.release()


def test_exclusive_on_s3_admits_one_holder_at_a_time(s3_root: str, s3_server: str) -> None:
    """Threads with a store each (as processes on several hosts would have) enter one at a time."""
    path = f"{store_of(s3_root, s3_server).base}/briefs/.2025-08-06.delivery.lock"
    inside, most, entries = [0], [0], []
    count = threading.Lock()
    errors: list[BaseException] = []

    def holder(name: str) -> None:
        fs = store_of(s3_root, s3_server).fs
        try:
            for n in range(4):
                with exclusive(fs, path, poll_s=0.02):
                    with count:
                        inside[0] += 1
                        most[0] = max(most[0], inside[0])
                    time.sleep(0.03)  # a critical section long enough for a second holder to walk in
                    entries.append((name, n))
                    with count:
                        inside[0] -= 1
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=holder, args=(f"h{k}",)) for k in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors
    assert most[0] == 1, f"{most[0]} holders were inside the lock at once"
    assert len(entries) == 20
    bucket, _, key = path.partition("/")
    import boto3

    listed = boto3.client("s3", endpoint_url=s3_server).list_objects_v2(Bucket=bucket, Prefix=key)
    assert listed.get("KeyCount", 0) == 0  # released: the lease object is gone


HOLD_AND_HANG = """
import sys, time
from storage.lease import s3_lease
from storage.store import ParquetEventStore
store = ParquetEventStore(sys.argv[1], endpoint_url=sys.argv[2])
s3_lease(store.fs, sys.argv[3], ttl_s=float(sys.argv[4])).acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_a_crashed_holder_blocks_the_lock_for_its_ttl_only(s3_root: str, s3_server: str) -> None:
    store = store_of(s3_root, s3_server)
    path = f"{store.base}/briefs/.2025-08-06.lock"
    ttl = 2.0
    crashed = subprocess.Popen(
        [sys.executable, "-c", HOLD_AND_HANG, s3_root, s3_server, path, str(ttl)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    try:
        assert crashed.stdout is not None and crashed.stdout.readline().strip() == "held"
        time.sleep(ttl / 3 + 0.5)  # it renewed its lease at least once while alive
        assert not s3_lease(store.fs, path).try_acquire()  # a live holder's lease is not taken
        crashed.send_signal(signal.SIGKILL)
        crashed.wait(timeout=10)
        started = time.monotonic()
        with exclusive(store.fs, path, poll_s=0.1):
            waited = time.monotonic() - started
    finally:
        crashed.kill()
        crashed.wait(timeout=10)
    assert waited < ttl + 3  # the stale lease was taken over, not waited on forever


def test_a_holder_whose_lease_was_taken_over_is_told_before_acting(s3_root: str, s3_server: str) -> None:
    store = store_of(s3_root, s3_server)
    path = f"{store.base}/briefs/.2025-08-06.lock"
    stalled = s3_lease(store.fs, path, ttl_s=1.5)
    assert stalled.try_acquire()  # and does not renew it: a holder paused past its ttl
    time.sleep(2.6)
    successor = s3_lease(store.fs, path, ttl_s=30).acquire()  # takes the stale lease over
    assert not stalled.renew()  # the paused holder's next renewal is refused
    with pytest.raises(LeaseLost, match="taken over by another holder"):
        stalled.check()
    stalled.release()  # never deletes the successor's lease
    assert not s3_lease(store.fs, path).try_acquire()
    successor.release()
