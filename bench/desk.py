"""How fast the desk's pages answer on a store holding a month of real days.

    python bench/desk.py [--runs 20]                  # backfills the shared month (2025-07) first (~4 min)
    python bench/desk.py --month 2026-03              # the AI world's March 2026 instead (~7 min)
    python bench/desk.py --config STORE/brief.toml   # a store already backfilled
    python bench/desk.py --real-days DIR --correct   # the tests' three real days (2025-08-05..07, ~3 min), kept in DIR

The shared month is ``month/`` of the shared data (four real feeds, 2025-07-01..31) backfilled with
``bench/history.py``'s one-process backfill; March 2026 is the AI world's 14 feeds backfilled as
``bench/aiweb_month.py`` does first.

Each page is asked ``--runs`` times in this process through the desk's ASGI application (no
network between: what is measured is the server's own work, reading the run's store), after one
warm-up request. Pages: the latest day's Today, Questions and Hold, History, a diff where a day has
two versions (on a store it backfilled, or with ``--correct``, the bench first makes a second version
of the latest day by correcting its lead's headline at the desk), Runs, the story pages of the month's longest-running stories and of the latest day's lead,
a search over the whole range for a few names, and Sources. Prints one Markdown table of p50, p95
and max milliseconds per page, then the size of the latest day's Today page (bytes, items, bytes
per item: each item's Edit panel repeats per item).

Then Today at 10, 40 and 80 items (``--sizes``): briefs made of the month's own items (each story
once, newest day first) in a store of their own beside the month's, so a page's size and time are
those of its items. For each: its bytes and bytes per item (linear: the same per item at every
size), the server's p50 and p95 in process, and, in Debian's Chromium over HTTP from the desk served
by uvicorn in a process of its own on 127.0.0.1 (``--browser-runs`` loads after a warm-up), the time from navigation start to
DOMContentLoaded and to load (median and p95). ``--no-browser`` leaves the browser out.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MONTHS = {
    "2025-07": {"span": ("2025-07-01", "2025-07-31"), "searches": ("Kimi", "OpenAI", "Grok", "Windsurf")},
    "2026-03": {
        "span": ("2026-03-01", "2026-03-31"),
        "searches": ("Kimi", "OpenAI", "Claude Code", "DeepSeek"),
    },
}
SHARED_SOURCES = ("arstechnica", "techcrunch", "tweakers", "wired")  # as bench/history.py


def pages(settings, searches: tuple[str, ...]) -> list[str]:
    import polars as pl

    from ops import reads
    from storage.projections import materialize

    store = settings.storage.event_store()
    day = reads.latest_day(store)
    if day is None:
        raise SystemExit("no brief is published in this store; backfill a month first")
    days = store.days()
    out = [
        f"/today?date={day}",
        f"/questions?date={day}",
        f"/hold?date={day}",
        "/history",
        "/sources",
        "/runs",
    ]
    for d, versions in reads.versions(store).items():
        if len(versions) > 1:
            out.append(f"/diff?date={d}&a={versions[0].version}&b={versions[-1].version}")
            break
    stories = materialize(store, "stories").sort(pl.col("days").list.len(), descending=True)
    out += [f"/story?id={s}" for s in stories["story_id"].head(3)]
    lead = reads.document(store, day).items[0].story_id
    out.append(f"/story?id={lead}")
    out += [f"/search?q={q.replace(' ', '+')}&start={days[0]}&end={days[-1]}" for q in searches]
    return out


SIZES = (10, 40, 80)


def sized_todays(settings, folder: Path, sizes: tuple[int, ...]) -> tuple[object, dict[int, str]]:
    """Briefs of ``sizes`` items made of the month's own items (each story once, newest day first),
    each published as a day of a store of its own in ``folder``; its settings and each size's day."""
    from datetime import timedelta

    from ops import reads
    from storage.brief import brief_json
    from tasks.settings import load_settings

    store = settings.storage.event_store()
    latest = reads.latest_day(store)
    template = reads.document(store, latest)
    pool, seen = [], set()
    for day in sorted(store.days(), reverse=True):
        try:
            document = reads.document(store, day)
        except Exception:  # a day without a brief (withheld)
            continue
        for item in document.items:
            if item.story_id not in seen:
                seen.add(item.story_id)
                pool.append(item)
    if len(pool) < max(sizes):
        raise SystemExit(f"the month holds {len(pool)} distinct items, fewer than {max(sizes)}")
    config = folder / "brief.toml"
    config.write_text('[storage]\nroot = "store"\n')
    sized = load_settings(str(config))
    briefs = sized.storage.event_store().tree.briefs
    days = {}
    for k, n in enumerate(sizes):
        day = latest + timedelta(days=k + 1)
        items = [item.model_copy(update={"lead": j == 0}) for j, item in enumerate(pool[:n])]
        document = template.model_copy(update={"items": items, "date": day.isoformat(), "retracted": None})
        text = brief_json(document)
        briefs.write(briefs.current(day), text)
        briefs.write(briefs.version(day, document.version), text)
        days[n] = day.isoformat()
    return sized, days


SERVE = """
import sys, uvicorn
from flows.desk.app import create_app
from tasks.settings import load_settings
uvicorn.run(create_app(load_settings(sys.argv[1]), "127.0.0.1", "bench", flush_every=None),
            host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"""


def in_chromium(config: Path, paths: list[str], runs: int) -> dict[str, dict[str, list[float]]]:
    """Each page loaded ``runs`` times in Debian's Chromium (after one warm-up) from the desk served by
    uvicorn in a process of its own on 127.0.0.1, as ``brief desk`` serves it: milliseconds from
    navigation start to the response's end, to DOMContentLoaded and to load."""
    import shutil
    import socket
    import subprocess

    import httpx
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("no chromium on PATH (Debian's package); or pass --no-browser")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-c", SERVE, str(config), str(port)], cwd=REPO)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/static/desk.css", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    out: dict[str, dict[str, list[float]]] = {}
    timing = (
        "(() => { const n = performance.getEntriesByType('navigation')[0];"
        " return [n.responseEnd, n.domContentLoadedEventEnd, n.loadEventEnd]; })()"
    )
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1000, "height": 760})
            for path in paths:
                url = f"http://127.0.0.1:{port}{path}"
                page.goto(url, wait_until="load")  # warm-up
                got: dict[str, list[float]] = {"response": [], "dcl": [], "load": []}
                for _ in range(runs):
                    page.goto("about:blank")
                    page.goto(url, wait_until="load")
                    response, dcl, load = page.evaluate(timing)
                    got["response"].append(response)
                    got["dcl"].append(dcl)
                    got["load"].append(load)
                out[path] = got
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    return out


def percentile95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def sizes_table(settings, sizes: tuple[int, ...], runs: int, browser_runs: int | None) -> float:
    """Today at each of ``sizes`` items: bytes, bytes per item, server and browser times. Returns
    the worst server p95."""
    import tempfile

    from fastapi.testclient import TestClient

    from flows.desk.app import create_app

    folder = Path(tempfile.mkdtemp(prefix="bench-desk-sizes-"))
    sized, days = sized_todays(settings, folder, sizes)
    config = folder / "brief.toml"
    app = create_app(sized, "127.0.0.1", "bench", flush_every=None)
    desk = TestClient(app, base_url="http://127.0.0.1:8484")
    paths = {n: f"/today?date={day}" for n, day in days.items()}
    browser = in_chromium(config, list(paths.values()), browser_runs) if browser_runs else {}
    print("\n## Today by its number of items\n")
    print(
        "The month's own items, each story once, in briefs of 10, 40 and 80 items. Server: in process,"
        f" {runs} times after a warm-up. Browser: Debian's Chromium at 1000 px over HTTP from the desk"
        f" served by uvicorn in a process of its own on 127.0.0.1, {browser_runs or 0} loads after a"
        " warm-up, from navigation start.\n"
    )
    print(
        "| items | bytes | bytes per item | server p50 ms | server p95 ms | response end p50 ms "
        "| DOMContentLoaded p50 ms | DOMContentLoaded p95 ms | load p50 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    worst = 0.0
    sizes_seen = {}
    for n, path in paths.items():
        first = desk.get(path)
        shown_items = first.text.count('class="item"')
        if first.status_code != 200 or shown_items != n:
            raise SystemExit(f"{path}: HTTP {first.status_code}, {shown_items} items shown of {n}")
        size = len(first.content)
        sizes_seen[n] = size
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            desk.get(path)
            times.append((time.perf_counter() - t0) * 1000)
        worst = max(worst, percentile95(times))
        seen = browser.get(path)
        browsed = "– | – | – | –"
        if seen:
            median = {k: statistics.median(v) for k, v in seen.items()}
            browsed = (
                f"{median['response']:.0f} | {median['dcl']:.0f} | {percentile95(seen['dcl']):.0f}"
                f" | {median['load']:.0f}"
            )
        print(
            f"| {n} | {size} | {size / n:.0f} | {statistics.median(times):.0f} | {percentile95(times):.0f} | {browsed} |"
        )
    low, high = min(sizes_seen), max(sizes_seen)
    print(
        f"\nEach item past {low} adds {(sizes_seen[high] - sizes_seen[low]) / (high - low):.0f} bytes"
        f" ({low} -> {high} items)."
    )
    return worst


def reads_latest(settings):
    from ops import reads

    return reads.latest_day(settings.storage.event_store())


def build_real_days(folder: Path, data: Path) -> Path:
    """The tests' three real days (``tests/real_days.py``: five real feeds and a broken one), built
    into ``folder`` once and reused after."""
    from flows.serve import start_local_server
    from tests.real_days import build_real_days as build

    config = folder / "brief.toml"
    if (folder / "results.json").exists():
        return config
    server = start_local_server(folder.parent / f"{folder.name}-prefect-server", services=False)
    os.environ.update({"PREFECT_API_URL": server.api_url, "PREFECT_LOGGING_LEVEL": "WARNING"})
    print(f"building the real days into {folder} ...", file=sys.stderr, flush=True)
    try:
        build(folder, data / "feeds")
    finally:
        server.stop()
    return config


def backfill_month(work: Path, data: Path, month: str) -> Path:
    """``month`` backfilled once into ``work``: the shared month's four feeds (as ``bench/history.py``
    does) or the AI world's 14 (as ``bench/aiweb_month.py`` does first)."""
    import subprocess

    from flows.serve import start_local_server
    from tests.real_days import aiweb_config, archive_config

    if month == "2025-07":
        feeds = data / "month" / "feeds"
        if not feeds.is_dir():
            raise SystemExit(f"no month of feeds at {feeds}; pass --data or --config")
        config = archive_config(work / "month", feeds, SHARED_SOURCES)
        child = REPO / "bench" / "history.py"
    else:
        aiweb = data / "aiweb"
        if not (aiweb / "feeds").is_dir():
            raise SystemExit(f"no AI-world feeds at {aiweb / 'feeds'}; pass --data or --config")
        config = aiweb_config(work / "month", aiweb)
        child = REPO / "bench" / "aiweb_month.py"
    server = start_local_server(work / "prefect-server", services=False)
    env = {
        **os.environ,
        "PREFECT_API_URL": server.api_url,
        "PREFECT_HOME": str(work / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }
    start, end = MONTHS[month]["span"]
    print(f"backfilling {start} .. {end} ...", file=sys.stderr, flush=True)
    t0 = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(child), "--child-backfill", str(config), start, end],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        server.stop()
    if done.returncode != 0:
        raise SystemExit(f"the backfill failed:\n{done.stderr[-3000:]}")
    print(
        f"backfilled in {time.perf_counter() - t0:.0f} s; store at {config.parent}",
        file=sys.stderr,
        flush=True,
    )
    return config


def second_version(desk, settings) -> None:
    """A second version of the latest day, as an editor makes one: its lead's headline corrected."""
    import re

    from ops import reads

    store = settings.storage.event_store()
    day = reads.latest_day(store)
    lead = reads.document(store, day).items[0]
    page = desk.get(f"/today?date={day}").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    done = desk.post(
        "/today/correct",
        data={
            "story": lead.story_id,
            "field": "title",
            "value": lead.title + " (corrected)",
            "note": "a correction for the bench",
            "csrf": csrf,
            "date": str(day),
        },
    )
    if done.status_code != 200 or "correction recorded: v2" not in done.text:
        raise SystemExit(f"the bench's correction failed: HTTP {done.status_code}\n{done.text[:500]}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--config", help="a backfilled store's config (default: backfill --month)")
    parser.add_argument("--month", choices=sorted(MONTHS), default="2025-07")
    parser.add_argument("--real-days", help="a folder for the tests' three real days (built there once)")
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="Today's item counts to measure")
    parser.add_argument("--browser-runs", type=int, default=15)
    parser.add_argument("--no-browser", action="store_true", help="leave Chromium out")
    parser.add_argument("--sizes-only", action="store_true", help="measure only Today by its number of items")
    parser.add_argument(
        "--correct",
        action="store_true",
        help="when no day has two versions, first correct the latest lead's headline at the desk (it writes"
        " to the store: for a store made for the bench; always done on a store the bench backfills)",
    )
    args = parser.parse_args()
    import tempfile

    from fastapi.testclient import TestClient

    from flows.desk.app import create_app
    from tasks.settings import load_settings

    if args.real_days:
        args.config = str(build_real_days(Path(args.real_days).resolve(), Path(args.data)))
    config = args.config or str(
        backfill_month(Path(tempfile.mkdtemp(prefix="bench-desk-")), Path(args.data), args.month)
    )
    settings = load_settings(config)
    desk = TestClient(create_app(settings, "127.0.0.1", "bench"), base_url="http://127.0.0.1:8484")
    store = settings.storage.event_store()
    sizes = tuple(int(n) for n in args.sizes.split(",") if n)
    browser_runs = None if args.no_browser else args.browser_runs
    if args.sizes_only:
        worst = sizes_table(settings, sizes, args.runs, browser_runs)
        print(f"\nserver p95 {worst:.0f} ms; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        return
    if (args.correct or not args.config) and not any(p.startswith("/diff") for p in pages(settings, ())):
        second_version(desk, settings)
    days = store.days()
    sources = len(settings.sources)
    print(f"# the desk's pages on {len(days)} days, {sources} feeds ({days[0]} .. {days[-1]}; 2 cores)\n")
    start = os.getloadavg()
    print(f"Load average at the start: {start[0]:.2f}, {start[1]:.2f}, {start[2]:.2f} (1, 5, 15 min).\n")
    print(
        f"Each page asked {args.runs} times after its first load, in process (the server's own work);"
        " *first* is that first load, in a desk that served other pages before it; *cpu* is the"
        " process's CPU time per request (all its threads), which other work on the cores inflates less"
        " than the wall time.\n"
    )
    print("| page | first ms | p50 ms | p95 ms | max ms | cpu p50 ms |\n|---|---|---|---|---|---|")
    worst = 0.0
    for path in pages(settings, MONTHS[args.month]["searches"]):
        t0 = time.perf_counter()
        first = desk.get(path)
        first_ms = (time.perf_counter() - t0) * 1000
        if first.status_code != 200:
            raise SystemExit(f"{path}: HTTP {first.status_code}\n{first.text[:500]}")
        times, cpu = [], []
        for _ in range(args.runs):
            t0, c0 = time.perf_counter(), time.process_time()
            desk.get(path)
            times.append((time.perf_counter() - t0) * 1000)
            cpu.append((time.process_time() - c0) * 1000)
        times.sort()
        p95 = times[max(0, round(0.95 * len(times)) - 1)]
        worst = max(worst, p95)
        print(
            f"| `{path}` | {first_ms:.0f} | {statistics.median(times):.0f} | {p95:.0f} | {times[-1]:.0f}"
            f" | {statistics.median(cpu):.0f} |"
        )
    if not any(path.startswith("/diff") for path in pages(settings, ())):
        print("\nNo day of this store has two versions, so no diff is measured.")
    elif args.correct or not args.config:
        print("\nThe diff's second version is the bench's own correction of the latest lead's headline.")
    day = reads_latest(settings)
    today = desk.get(f"/today?date={day}").text
    items = today.count('class="item"')
    size = len(today.encode())
    print(f"\nToday of {day}: {size} bytes for {items} items ({size / max(items, 1):.0f} bytes per item)")
    if sizes:
        worst = max(
            worst, sizes_table(settings, sizes, args.runs, None if args.no_browser else args.browser_runs)
        )
    load = os.getloadavg()[0]
    print(f"\nworst p95: {worst:.0f} ms (load average {load:.1f} on {os.cpu_count()} cores as it ended)")


if __name__ == "__main__":
    main()
