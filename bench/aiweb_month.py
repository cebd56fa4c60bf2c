"""A month of the AI world's 14 feeds: March 2026 backfilled from scratch, then again.

    python bench/aiweb_month.py [--data ../shared/data] [--start 2026-03-01] [--end 2026-03-31] [--keep]

The feeds are ``aiweb/feeds/`` (one snapshot per feed and day; some feeds begin later in the
month), configured as the guide gives them (``docs/sources.md``: labs in two languages,
aibase's Chinese digest, HN, GitHub, papers). Each backfill is the one-process backfill
(``flows.backfill.backfill``, archives two at a time, then each date in order) in a child
process of its own, against one local Prefect server.

It checks that every day completes, that the second backfill appends no fact event
(``article.collected``, ``feed.fetched``) and publishes no new version, and that no story
of aibase's digest (a digest link and the story's place in it, ``…/daily/26342#2``) is cited
by two days' briefs: the digest stays in the feed for a week or more, and its entries are
dated anew in each snapshot. A day whose brief is withheld because more than half of the
feeds have no snapshot of it (the first days of the month: some feeds begin later) is shown
as withheld with its reason; any other day that does not complete fails the benchmark.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from storage.brief import read_brief
from tests.real_days import aiweb_config

MONTH = ("2026-03-01", "2026-03-31")
FACTS = ("article.collected", "feed.fetched")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_backfill(config: str, start: str, end: str) -> None:
    from flows.backfill import backfill

    t0 = time.perf_counter()
    outcomes = backfill(start, end, config, 2)
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - t0,
                "outcomes": [o.row() for o in outcomes],
                "peak_mb": peak_mb(),
            }
        )
    )


def spawn(args: list[str], env: dict) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, *args], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def fact_count(root: Path) -> int:
    from storage.store import ParquetEventStore

    store = ParquetEventStore(str(root))
    return store.query(lambda: store.scan(event_types=list(FACTS))).height


def digest_citations(briefs: Path, days: list[str]) -> dict[str, list[str]]:
    """Each digest story a published brief cites (its link and place) -> the dates that cite it."""
    cited: dict[str, list[str]] = defaultdict(list)
    for day in days:
        path = briefs / f"{day}.json"
        if not path.is_file():
            continue
        document = read_brief(path.read_text())
        urls = {c.url for i in document.items for c in i.citations if c.kind == "digest"}
        for url in sorted(urls):
            cited[url].append(day)
    return cited


WITHHELD = re.compile(r"is withheld: (?P<reason>[^;]*)")


def withheld_reason(outcome: dict) -> str | None:
    """Why a failed date's brief was withheld, or None when it failed otherwise."""
    found = WITHHELD.search(outcome["error"] or "")
    return found.group("reason") if found else None


def without_snapshot(reason: str, day: str, feeds: Path) -> bool:
    """Whether every source a withholding names as failed has no snapshot of the day."""
    names = re.search(r"\((.*)\)", reason)
    return bool(names) and all(not (feeds / n / f"{day}.xml").is_file() for n in names.group(1).split(", "))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--start", default=MONTH[0])
    parser.add_argument("--end", default=MONTH[1])
    parser.add_argument("--keep", action="store_true", help="keep the store (its folder is printed)")
    parser.add_argument("--child-backfill", nargs=3)
    args = parser.parse_args()
    if args.child_backfill:
        return child_backfill(*args.child_backfill)

    aiweb = Path(args.data) / "aiweb"
    if not (aiweb / "feeds").is_dir():
        raise SystemExit(
            f"no AI-world feeds at {aiweb / 'feeds'}; pass --data pointing at the shared data folder"
        )
    work = Path(tempfile.mkdtemp(prefix="bench-aiweb-month-"))
    env = {
        **os.environ,
        "PREFECT_HOME": str(work / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }
    from flows.serve import start_local_server

    server = start_local_server(work / "prefect-server", services=False)
    env["PREFECT_API_URL"] = server.api_url
    config = aiweb_config(work / "month", aiweb)
    store = work / "month" / "store"
    try:
        print(f"backfilling {args.start} .. {args.end} from scratch ...", file=sys.stderr, flush=True)
        first = spawn(["--child-backfill", str(config), args.start, args.end], env)
        facts = fact_count(store)
        print("... and again", file=sys.stderr, flush=True)
        second = spawn(["--child-backfill", str(config), args.start, args.end], env)
        facts_again = fact_count(store)
        days = [o["date"] for o in first["outcomes"]]
        sources = {
            day: sum(
                (aiweb / "feeds" / name / f"{day}.xml").is_file() for name in os.listdir(aiweb / "feeds")
            )
            for day in days
        }
        completed = [o for o in first["outcomes"] if o["status"] == "completed"]
        cited = digest_citations(store / "briefs", [o["date"] for o in completed])
    finally:
        server.stop()
        if args.keep:
            print(f"the store is kept in {store}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)

    new_versions = sum(bool(o["changed"]) for o in second["outcomes"])
    twice = {url: dates for url, dates in cited.items() if len(dates) > 1}
    items = [o["items"] for o in completed]
    seconds = [o["seconds"] for o in completed]
    withheld = {o["date"]: withheld_reason(o) for o in first["outcomes"] if o["status"] != "completed"}
    explained = {d for d, why in withheld.items() if why and without_snapshot(why, d, aiweb / "feeds")}
    print(f"# the AI world's month ({args.start} .. {args.end}, 14 feeds; {os.cpu_count()} cores)\n")
    print(
        "| backfill | days published | withheld | wall time | per day | fact events appended | new versions | peak RSS MB |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for label, run, appended, versions in (
        ("from scratch", first, facts, "-"),
        ("again", second, facts_again - facts, new_versions),
    ):
        done = sum(o["status"] == "completed" for o in run["outcomes"])
        held = sum(bool(withheld_reason(o)) for o in run["outcomes"])
        print(
            f"| {label} | {done}/{len(days)} | {held} | {run['seconds']:.0f} s | {run['seconds'] / len(days):.1f} s | "
            f"{appended} | {versions} | {run['peak_mb']:.0f} |"
        )
    print(
        "\n| items per published day (min / median / max) | a date's run (min / median / max) "
        "| digest stories cited | cited by two days' briefs |"
    )
    print("|---|---|---|---|")
    print(
        f"| {min(items, default=0)} / {statistics.median(items) if items else 0:g} / {max(items, default=0)} | "
        f"{min(seconds, default=0):.1f} / {statistics.median(seconds) if seconds else 0:.1f} / "
        f"{max(seconds, default=0):.1f} s | {len(cited)} | **{len(twice)}** |"
    )
    print("\n| date | feeds with a snapshot | outcome | items | run |")
    print("|---|---|---|---|---|")
    for o in first["outcomes"]:
        if o["status"] == "completed":
            outcome = "published"
        elif withheld[o["date"]]:
            outcome = f"withheld: {withheld[o['date']]}"
        else:
            outcome = f"**failed**: {o['error']}"
        run = f"{o['seconds']:.1f} s" if o["seconds"] is not None else "-"
        print(f"| {o['date']} | {sources[o['date']]} | {outcome} | {o['items']} | {run} |")
    for url, dates in sorted(twice.items()):
        print(f"- {url}: cited on {', '.join(dates)}")
    failed = sorted(set(withheld) - explained)
    print(
        f"\nmonth: {len(completed)} of {len(days)} days published, {len(explained)} withheld for feeds "
        f"without a snapshot, {len(failed)} failed{' (' + ', '.join(failed) + ')' if failed else ''}; "
        f"second backfill: {facts_again - facts} new fact event(s), {new_versions} new version(s); "
        f"{len(twice)} digest stor{'y' if len(twice) == 1 else 'ies'} in two days' briefs"
    )
    if failed or facts_again != facts or new_versions or twice:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
