"""A writer process for the concurrency tests: appends numbered events in batches.

usage: python -m tests.integration.writer ROOT START COUNT BATCH [PAUSE_S]
"""

from __future__ import annotations

import sys
import time

from storage.store import ParquetEventStore
from tests.factories import collected


def main() -> None:
    root, start, count, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    pause = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    store = ParquetEventStore(root)
    events = [collected(i) for i in range(start, start + count)]
    for first in range(0, count, batch):
        store.append(events[first : first + batch])
        print(first, flush=True)
        if pause:
            time.sleep(pause)


if __name__ == "__main__":
    main()
