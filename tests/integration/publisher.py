"""A publisher process for the concurrent-publish test: publishes ROUNDS different briefs of one day.

usage: python -m tests.integration.publisher ROOT DAY NAME ROUNDS
"""

from __future__ import annotations

import sys
from datetime import date

from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import parse_settings
from tests.runs import hashing_run


def main(root: str, day: str, name: str, rounds: int) -> None:
    settings = parse_settings({"storage": {"root": root}})
    ctx = hashing_run(ParquetEventStore(root), settings, date.fromisoformat(day), f"publisher-{name}")
    for n in range(rounds):
        document = {
            "date": day,
            "version": 1,
            "language": "en",
            "policy_version": "test",
            "window": {"start": f"{day}T00:00:00+00:00", "end": f"{day}T23:59:59+00:00"},
            "topic": "AI",
            "left_out": {"off_topic": 0},
            "items": [
                {
                    "story_id": f"st-{name}-{n}",
                    "title": f"{name} round {n} " + "x" * 4000,  # big enough that a torn file would show
                    "category": "models",
                    "category_confidence": 1.0,
                    "importance": 0.5,
                    "relevance": "core",
                    "summary": "",
                    "facts": [],
                    "citations": [],
                    "follow_up_of": None,
                    "flags": [],
                    "section": "top",
                }
            ],
        }
        steps.publish(ctx, document)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
