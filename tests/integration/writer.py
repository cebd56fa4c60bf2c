"""A writer process for the concurrency tests: appends numbered events in batches.

usage: python -m tests.integration.writer ROOT START COUNT BATCH [PAUSE_S [FORMAT [CRASH_AT]]]

CRASH_AT=N makes the process die by SIGKILL in the middle of its N-th file write: half the
bytes are on disk under the temporary name, the rest never come. The kill is real; only
its moment is chosen, by wrapping ``open`` for the atomic-write module.
"""

from __future__ import annotations

import builtins
import os
import signal
import sys
import time
from typing import Any

import storage.store
from tests.factories import collected, store_at


class _DiesMidWrite:
    def __init__(self, handle: Any) -> None:
        self.handle = handle

    def __enter__(self) -> _DiesMidWrite:
        return self

    def __exit__(self, *exc: object) -> None:
        self.handle.close()

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        self.handle.write(view[: len(view) // 2])
        self.handle.flush()
        os.fsync(self.handle.fileno())
        os.kill(os.getpid(), signal.SIGKILL)
        raise AssertionError("unreachable")


def crash_at(n: int) -> None:
    writes = 0

    def opening(path: str, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        nonlocal writes
        handle = builtins.open(path, mode, *args, **kwargs)  # noqa: SIM115 - returned to the caller
        if "w" in mode and str(path).endswith(".tmp"):
            writes += 1
            if writes == n:
                return _DiesMidWrite(handle)
        return handle

    storage.atomic.open = opening  # type: ignore[attr-defined]


def main() -> None:
    root, start, count, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    pause = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    append_format = sys.argv[6] if len(sys.argv) > 6 else "jsonl"
    if len(sys.argv) > 7:
        crash_at(int(sys.argv[7]))
    store = store_at(root, append_format=append_format)
    events = [collected(i) for i in range(start, start + count)]
    for first in range(0, count, batch):
        store.append(events[first : first + batch])
        print(first, flush=True)
        if pause:
            time.sleep(pause)


if __name__ == "__main__":
    main()
