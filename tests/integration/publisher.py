"""A publisher process for the concurrent-publish test: publishes ROUNDS different briefs of one day.

usage: python -m tests.integration.publisher ROOT DAY NAME ROUNDS
"""

from __future__ import annotations

import sys
from datetime import date

from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import parse_settings
from tests.factories import brief, brief_item
from tests.runs import hashing_run


def main(root: str, day: str, name: str, rounds: int) -> None:
    settings = parse_settings({"storage": {"root": root}})
    ctx = hashing_run(ParquetEventStore(root), settings, date.fromisoformat(day), f"publisher-{name}")
    for n in range(rounds):
        title = f"{name} round {n} " + "x" * 4000  # big enough that a torn file would show
        document = brief(brief_item(f"st-{name}-{n}", title, section="top"), day=date.fromisoformat(day))
        steps.publish(ctx, document)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
