"""A compactor process for the concurrency tests: compacts one day over and over (every 10 ms).

usage: python -m tests.integration.compactor ROOT DAY SECONDS
"""

from __future__ import annotations

import sys
import time
from datetime import date

from tests.factories import store_at


def main() -> None:
    root, day, seconds = sys.argv[1], date.fromisoformat(sys.argv[2]), float(sys.argv[3])
    store = store_at(root)
    deadline = time.monotonic() + seconds
    rounds = 0
    while time.monotonic() < deadline:
        store.compact(day)
        rounds += 1
        time.sleep(0.01)
    print(rounds, flush=True)


if __name__ == "__main__":
    main()
