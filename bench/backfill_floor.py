"""Embedding is the floor: a backfill from scratch beside the time to embed its unique texts once.

    python bench/backfill_floor.py [--data ../shared/data] [--ref 393ec1a] [--months july,march]
                                   [--july 2025-07-01..2025-07-31] [--march 2026-03-01..2026-03-31]

For each month (July 2025 of the four English feeds of ``month/``; March 2026 of the AI world's 14
feeds of ``aiweb/``), in one bench run against one local Prefect server:

1. the month backfilled from scratch with the code of ``--ref`` (checked out with ``git worktree
   add --detach``), in a process of its own (``flows.backfill.backfill``, archives two at a time);
2. the same with the working tree's code (which embeds the texts of every date at once before the
   dates' runs), then again with nothing new;
3. embed only: a new process loads the shipped models and embeds, in one call per model, every
   unique text the working tree's backfill embedded (read from its embedding cache, matched to
   the articles' texts): what no backfill can do without.

Prints each backfill's wall time and CPU time (user + system time of the process, all its threads:
what depends least on what else the shared machine runs), peak RSS, days published and withheld (with the
cause), fact events and new versions of the second backfill, the briefs of the two trees compared
byte for byte (JSON, Markdown, HTML of every date), and the ratio backfill / embed only (target
<= 1.3; again with nothing new: <= 15 s for July).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREE = Path(os.environ.get("BENCH_TREE", REPO))  # whose code a child process runs
sys.path.insert(0, str(TREE))

MONTHS = {
    "july": ("2025-07-01", "2025-07-31"),
    "march": ("2026-03-01", "2026-03-31"),
}
JULY_SOURCES = ("arstechnica", "techcrunch", "tweakers", "wired")
FACTS = ("article.collected", "feed.fetched")
TARGET_RATIO, TARGET_AGAIN_JULY = 1.3, 15.0
WITHHELD = re.compile(r"is withheld: (?P<reason>[^;(]*)")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_backfill(config: str, start: str, end: str) -> None:
    from flows.backfill import backfill

    wall, cpu = time.perf_counter(), time.process_time()
    outcomes = backfill(start, end, config, 2)
    print(
        json.dumps(
            {
                "seconds": time.perf_counter() - wall,
                "cpu": time.process_time() - cpu,
                "outcomes": [o.row() for o in outcomes],
                "peak_mb": peak_mb(),
            }
        )
    )


def cached_keys(root: Path) -> dict[str, set[str]]:
    """Model folder name -> the text keys its cache holds (every day)."""
    import pyarrow.parquet as pq

    out: dict[str, set[str]] = {}
    for folder in sorted((root / "cache" / "embeddings").glob("model=*")):
        keys: set[str] = set()
        for part in folder.rglob("part-*.parquet"):
            keys.update(pq.read_table(part, columns=["key"]).column("key").to_pylist())
        out[folder.name.removeprefix("model=")] = keys
    return out


def child_embed(config: str) -> None:
    """Every unique text the backfill of ``config``'s store embedded, embedded once per model."""
    from storage.projections import materialize
    from tasks.embed import embedder, text_key
    from tasks.embed_multilingual import MULTILINGUAL_MODEL, MultilingualEmbedder
    from tasks.settings import load_settings
    from tasks.steps.dedup import _items

    settings = load_settings(config)
    store = settings.storage.event_store()
    texts = [i.text for i in _items(materialize(store, "articles")).values()]
    texts.append(settings.policy.topic.description)
    by_key = {text_key(t): t for t in texts}
    rows = []
    for slug, keys in cached_keys(Path(settings.storage.root)).items():
        wanted = sorted(by_key[k] for k in keys if k in by_key)
        model = MultilingualEmbedder() if slug == MULTILINGUAL_MODEL else embedder(slug)
        wall, cpu = time.perf_counter(), time.process_time()
        model.encode(["a first text loads the model"])
        load, load_cpu = time.perf_counter() - wall, time.process_time() - cpu
        wall, cpu = time.perf_counter(), time.process_time()
        model.encode(wanted)
        rows.append(
            {
                "model": slug,
                "texts": len(wanted),
                "unmatched": len(keys) - len(wanted),
                "load": load,
                "load_cpu": load_cpu,
                "seconds": time.perf_counter() - wall,
                "cpu": time.process_time() - cpu,
            }
        )
    print(json.dumps({"models": rows, "peak_mb": peak_mb()}))


def spawn(args: list[str], env: dict, tree: Path = REPO) -> dict:
    """This script in a child process that runs ``tree``'s code."""
    done = subprocess.run(
        [sys.executable, __file__, *args],
        env={**env, "BENCH_TREE": str(tree), "PYTHONPATH": str(tree)},
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def fact_count(root: Path) -> int:
    from storage.store import ParquetEventStore

    store = ParquetEventStore(str(root))
    return store.query(lambda: store.scan(event_types=list(FACTS))).height


def config_of(month: str, folder: Path, data: Path) -> Path:
    from tests.real_days import aiweb_config, archive_config

    if month == "july":
        return archive_config(folder, data / "month" / "feeds", JULY_SOURCES)
    return aiweb_config(folder, data / "aiweb")


def outcome_counts(run: dict) -> str:
    said = Counter(
        "published"
        if o["status"] == "completed"
        else f"withheld ({m.group('reason').strip()})"
        if (m := WITHHELD.search(o["error"] or ""))
        else "failed"
        for o in run["outcomes"]
    )
    return "; ".join(f"{n} {what}" for what, n in sorted(said.items()))


def same_briefs(ours: Path, theirs: Path, days: list[str]) -> tuple[int, int, list[str]]:
    """(files compared, identical, the differing files) of the two stores' briefs."""
    compared = same = 0
    differing = []
    for day in days:
        for ext in ("json", "md", "html"):
            a, b = ours / "briefs" / f"{day}.{ext}", theirs / "briefs" / f"{day}.{ext}"
            if not a.is_file() and not b.is_file():
                continue
            compared += 1
            if a.is_file() and b.is_file() and a.read_bytes() == b.read_bytes():
                same += 1
            else:
                differing.append(f"{day}.{ext}")
    return compared, same, differing


def checkout(ref: str, work: Path) -> Path:
    tree = work / "ref"
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), ref],
        check=True,
        capture_output=True,
    )
    return tree


def bench_month(month: str, span: tuple[str, str], ref_tree: Path, work: Path, data: Path, env: dict) -> dict:
    start, end = span
    theirs = config_of(month, work / month / "ref", data)
    ours = config_of(month, work / month / "ours", data)
    print(f"{month}: {start} .. {end} from scratch with the ref's code ...", file=sys.stderr, flush=True)
    before = spawn(["--child-backfill", str(theirs), start, end], env, ref_tree)
    print(f"{month}: ... with this tree's code, then again", file=sys.stderr, flush=True)
    first = spawn(["--child-backfill", str(ours), start, end], env)
    facts = fact_count(ours.parent / "store")
    again = spawn(["--child-backfill", str(ours), start, end], env)
    facts_again = fact_count(ours.parent / "store")
    print(f"{month}: ... embed only", file=sys.stderr, flush=True)
    embed = spawn(["--child-embed", str(ours)], env)
    days = [o["date"] for o in first["outcomes"]]
    return {
        "month": month,
        "span": span,
        "before": before,
        "first": first,
        "again": again,
        "new_facts": facts_again - facts,
        "new_versions": sum(bool(o["changed"]) for o in again["outcomes"]),
        "embed": embed,
        "briefs": same_briefs(ours.parent / "store", theirs.parent / "store", days),
    }


def report(results: list[dict], ref: str) -> None:
    print(
        f"# Embedding is the floor: backfills from scratch beside embedding their texts ({os.cpu_count()} cores)\n"
    )
    print(
        "| month | backfill | wall | CPU | peak RSS MB | days | fact events / new versions | "
        "wall / embed only | CPU / embed only |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        floor = sum(m["load"] + m["seconds"] for m in r["embed"]["models"])
        floor_cpu = sum(m["load_cpu"] + m["cpu"] for m in r["embed"]["models"])
        label = f"{r['month']} {r['span'][0]} .. {r['span'][1]}"
        for name, run, facts in (
            (f"from scratch, {ref}", r["before"], "-"),
            ("from scratch, this tree", r["first"], "-"),
            ("again, nothing new", r["again"], f"{r['new_facts']} / {r['new_versions']}"),
        ):
            print(
                f"| {label} | {name} | {run['seconds']:.1f} s | {run['cpu']:.1f} s | {run['peak_mb']:.0f} | "
                f"{outcome_counts(run)} | {facts} | {run['seconds'] / floor:.2f} | {run['cpu'] / floor_cpu:.2f} |"
            )
        print(
            f"| {label} | embed only (load + encode) | {floor:.1f} s | {floor_cpu:.1f} s | "
            f"{r['embed']['peak_mb']:.0f} | - | - | 1.00 | 1.00 |"
        )
    print("\n| month | model | unique texts | not matched to a text | load | encode | encode CPU |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        for m in r["embed"]["models"]:
            print(
                f"| {r['month']} | {m['model']} | {m['texts']} | {m['unmatched']} | {m['load']:.1f} s | "
                f"{m['seconds']:.1f} s | {m['cpu']:.1f} s |"
            )
    print()
    for r in results:
        compared, same, differing = r["briefs"]
        floor = sum(m["load"] + m["seconds"] for m in r["embed"]["models"])
        floor_cpu = sum(m["load_cpu"] + m["cpu"] for m in r["embed"]["models"])
        ratio = r["first"]["seconds"] / floor
        days = len(r["first"]["outcomes"])
        print(
            f"- {r['month']}: briefs of this tree and of {ref}: {same} of {compared} files identical"
            + (f" (differ: {', '.join(differing[:10])})" if differing else "")
            + f"; from scratch / embed only {ratio:.2f} (target <= {TARGET_RATIO}: "
            + ("met" if ratio <= TARGET_RATIO else "NOT met")
            + ")"
            + "; a date beyond embedding: "
            + ", ".join(
                f"{name} {(run['seconds'] - floor) / days:.2f} s wall, {(run['cpu'] - floor_cpu) / days:.2f} s CPU"
                for name, run in ((ref, r["before"]), ("this tree", r["first"]))
            )
            + (
                f"; again {r['again']['seconds']:.1f} s (target <= {TARGET_AGAIN_JULY:.0f} s: "
                + ("met" if r["again"]["seconds"] <= TARGET_AGAIN_JULY else "NOT met")
                + ")"
                if r["month"] == "july"
                else ""
            )
        )
    print(
        "\nEach backfill and the embedding run in a process of their own, one after another, against "
        "one local Prefect server; CPU is that process's own time (all its threads). Embed only loads "
        "each shipped model the backfill used and embeds its unique texts in one call."
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    parser.add_argument("--ref", default="393ec1a")
    parser.add_argument("--months", default="july,march")
    for month, (start, end) in MONTHS.items():
        parser.add_argument(f"--{month}", default=f"{start}..{end}", help="the range, START..END")
    parser.add_argument("--child-backfill", nargs=3)
    parser.add_argument("--child-embed")
    args = parser.parse_args()
    if args.child_backfill:
        return child_backfill(*args.child_backfill)
    if args.child_embed:
        return child_embed(args.child_embed)

    data = Path(args.data)
    if not (data / "month" / "feeds").is_dir() or not (data / "aiweb" / "feeds").is_dir():
        raise SystemExit(f"no month/ or aiweb/ feeds under {data}; pass --data")
    work = Path(tempfile.mkdtemp(prefix="bench-backfill-floor-"))
    env = {
        **os.environ,
        "PREFECT_HOME": str(work / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "GX_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "PREFECT_LOGGING_LEVEL": "WARNING",
    }
    env.pop("BRIEF_EMBEDDINGS_SHARED", None)  # every process computes its own vectors
    from flows.serve import start_local_server

    server = start_local_server(work / "prefect-server", services=False)
    env["PREFECT_API_URL"] = server.api_url
    ref_tree = checkout(args.ref, work)
    try:
        for month in args.months.split(","):  # each month's table as soon as it is measured
            start, end = getattr(args, month).split("..")
            report([bench_month(month, (start, end), ref_tree, work, data, env)], args.ref)
            sys.stdout.flush()
    finally:
        server.stop()
        subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(ref_tree)], check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
