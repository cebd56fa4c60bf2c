"""Story clustering quality against the hand-made labels, and what each signal buys.

    python bench/dedup_quality.py [--data ../shared/data]

For each labelled day the real snapshots go through the real collect step; the items
published inside that day's lookback window (48 h before the end of the day, UTC) are
clustered; pairwise precision / recall / F1 against ``labels/stories-<day>.json`` are
printed per day and pooled over 2025-07-28 and 2025-08-05..07 (the 2021 Chinese days are
shown apart). Then the chosen setting on the MRPC-train and STS-B pair corpora beside a
lexical baseline (word-shingle Jaccard, the quantity MinHash estimates), with the
baseline's threshold tuned on the same data (its best case).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tasks.collect import Source
from tasks.dedup import DedupPolicy, Item, cluster, in_window, news_window, pairwise_scores
from tasks.embed import SentenceTransformerEmbedder
from tasks.steps.collect import collect_source

POOLED = ["2025-07-28", "2025-08-05", "2025-08-06", "2025-08-07"]
CHINESE = ["2021-06-16", "2021-06-17"]
CHOSEN = DedupPolicy()
ABLATIONS = {
    "embeddings only (cosine >= 0.60)": DedupPolicy(
        organisation_conflicts=False, one_report_per_outlet=False, shared_names_for_non_english=False
    ),
    "+ one report per outlet": DedupPolicy(organisation_conflicts=False, shared_names_for_non_english=False),
    "+ organisation conflicts": DedupPolicy(shared_names_for_non_english=False),
    "+ shared names, non-English (chosen)": CHOSEN,
}


def day_items(data: Path, day: str) -> tuple[list[Item], dict[str, str]]:
    labels = json.loads((data / "labels" / f"stories-{day}.json").read_text())
    truth = {link: s["story"] for s in labels["stories"] for link in s["items"]}
    window = news_window(date.fromisoformat(day), ZoneInfo("UTC"), 48)
    items, url_of = [], {}
    for source in sorted({i["source"] for i in labels["items"]}):
        template = (data / "feeds" / source).as_uri() + "/{date}.xml"
        for event in collect_source(Source(source, template), date.fromisoformat(day), "bench"):
            if event.event_type != "article.collected":
                continue
            p = event.payload
            published = datetime.fromisoformat(p["published_at"]) if p["published_at"] else None
            if not in_window(published, window):
                continue
            key = f"{p['article_id']}@{source}"  # one row per feed item, as the labels count them
            url_of[key] = p["url"]
            items.append(
                Item(
                    key,
                    source,
                    p["title"],
                    p["summary"],
                    f"{p['canonical_url']}#{source}",
                    f"{p['content_hash']}#{source}",
                    published,
                    p["language"],
                )
            )
    links = {i.article_id: truth[url_of[i.article_id]] for i in items}
    return items, links


def evaluate(days: dict[str, tuple[list[Item], dict[str, str], np.ndarray]], policy: DedupPolicy) -> dict:
    per = {}
    for day, (items, truth, vectors) in days.items():
        stories = cluster(items, vectors, policy).stories
        per[day] = pairwise_scores([s.members for s in stories], truth)
    return per


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def news_urls(data: Path, day: str, sources: set[str]) -> dict[str, str]:
    """Canonical URL -> link of every item that was news on ``day`` (published in its window)."""
    window = news_window(date.fromisoformat(day), ZoneInfo("UTC"), 48)
    out = {}
    for source in sorted(sources):
        template = (data / "feeds" / source).as_uri() + "/{date}.xml"
        for event in collect_source(Source(source, template), date.fromisoformat(day), "bench"):
            p = event.payload
            published = datetime.fromisoformat(p["published_at"]) if p.get("published_at") else None
            if event.event_type == "article.collected" and in_window(published, window):
                out[p["canonical_url"]] = p["url"]
    return out


def cross_day(data: Path) -> list[tuple[str, int, int, int]]:
    """Items of D's window that were already news on D-1 (the pipeline's 'seen_before'), vs the labels."""
    rows = []
    for prev, day in (
        ("2025-08-05", "2025-08-06"),
        ("2025-08-06", "2025-08-07"),
        ("2021-06-16", "2021-06-17"),
    ):
        labels = json.loads((data / "labels" / f"stories-{day}.json").read_text())
        sources = {i["source"] for i in labels["items"]}
        today, before = news_urls(data, day, sources), news_urls(data, prev, sources)
        caught = set(today) & set(before)
        # the stories of D the labels say are the same as a story of D-1, and the links in them
        continuing = {link["story"] for link in labels["same_as_previous_day"]}
        labelled = {
            item for story in labels["stories"] if story["story"] in continuing for item in story["items"]
        }
        labelled |= {link.rstrip("/") for link in labelled}
        confirmed = {u for u in caught if today[u] in labelled or today[u].rstrip("/") in labelled}
        rows.append((day, len(today), len(caught), len(confirmed)))
    return rows


def shingles(text: str) -> set[str]:
    words = re.findall(r"\w+", text.lower())
    return {" ".join(words[i : i + 2]) for i in range(max(len(words) - 1, 1))}


def jaccard(a: str, b: str) -> float:
    x, y = shingles(a), shingles(b)
    return len(x & y) / len(x | y) if x | y else 0.0


def pair_corpora(data: Path) -> dict[str, tuple[list[str], list[str], np.ndarray]]:
    corpora = {}
    with open(data / "paraphrase" / "mrpc" / "msr_paraphrase_train.txt", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    corpora["MRPC train"] = (
        [r[3] for r in rows],
        [r[4] for r in rows],
        np.array([r[0] == "1" for r in rows]),
    )
    for split in ("train", "dev"):
        with open(data / "paraphrase" / "stsbenchmark" / f"sts-{split}.csv", encoding="utf-8") as f:
            rows = [r[:7] for r in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)]
        corpora[f"STS-B {split} (score >= 4)"] = (
            [r[5] for r in rows],
            [r[6] for r in rows],
            np.array([float(r[4]) >= 4.0 for r in rows]),
        )
    return corpora


def binary_f1(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float, float, float]:
    tp = int((pred & gold).sum())
    fp = int((pred & ~gold).sum())
    fn = int((~pred & gold).sum())
    p, r, f = prf(tp, fp, fn)
    return p, r, f, float((pred == gold).mean())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    args = parser.parse_args()
    data = Path(args.data)
    if not (data / "labels").is_dir():
        raise SystemExit(f"no labels under {data}; pass --data PATH to the shared data folder")
    embedder = SentenceTransformerEmbedder()
    t0 = time.perf_counter()
    days = {}
    for day in POOLED + CHINESE:
        items, truth = day_items(data, day)
        days[day] = (items, truth, embedder.encode([i.text for i in items]))
    print(
        f"# collected and embedded {sum(len(v[0]) for v in days.values())} window items in "
        f"{time.perf_counter() - t0:.1f} s (model {embedder.name})\n"
    )

    print("## Story clusters against the labels (pairwise, lookback window 48 h)\n")
    print("| setting | " + " | ".join(POOLED) + " | pooled P / R / F1 | 2021 zh days P / R / F1 |")
    print("|---|" + "---|" * len(POOLED) + "---|---|")
    for name, policy in ABLATIONS.items():
        per = evaluate(days, policy)
        cells = [f"F1 {prf(*per[d])[2]:.2f} ({per[d][0]}/{per[d][0] + per[d][2]})" for d in POOLED]
        pooled = [sum(per[d][k] for d in POOLED) for k in range(3)]
        zh = [sum(per[d][k] for d in CHINESE) for k in range(3)]
        p, r, f = prf(*pooled)
        zp, zr, zf = prf(*zh)
        print(
            f"| {name} | "
            + " | ".join(cells)
            + f" | {p:.2f} / {r:.2f} / **{f:.2f}** | {zp:.2f} / {zr:.2f} / {zf:.2f} |"
        )
    print(
        "\n(cells: F1 (true pairs found / true pairs); target pooled F1 >= 0.90, precision >= 0.95, no day < 0.80)\n"
    )

    print("| threshold | pooled P | pooled R | pooled F1 |")
    print("|---|---|---|---|")
    for threshold in (0.50, 0.55, 0.60, 0.65, 0.70, 0.75):
        per = evaluate({d: days[d] for d in POOLED}, replace(CHOSEN, near_duplicate_threshold=threshold))
        p, r, f = prf(*[sum(per[d][k] for d in POOLED) for k in range(3)])
        print(f"| {threshold:.2f} | {p:.2f} | {r:.2f} | {f:.2f} |")

    print(
        "\nChosen on: the threshold and the rules were chosen looking at every labelled day above "
        "(2025-07-28, 2025-08-05..07, the 2021 zh days), so none of them is only scored; the figures "
        "above are in-sample. A held-out view of the threshold alone: for each day, the best threshold "
        "of the sweep on the *other* days, scored on that day.\n"
    )
    print("| day scored | threshold chosen on the other days | F1 on the day |")
    print("|---|---|---|")
    sweep_values = (0.50, 0.55, 0.60, 0.65, 0.70, 0.75)
    per_threshold = {
        t: evaluate({d: days[d] for d in POOLED}, replace(CHOSEN, near_duplicate_threshold=t))
        for t in sweep_values
    }
    held = [0, 0, 0]
    for day in POOLED:
        others = [d for d in POOLED if d != day]
        best = max(
            sweep_values,
            key=lambda t: (
                prf(*[sum(per_threshold[t][d][k] for d in others) for k in range(3)])[2],
                -abs(t - 0.6),
            ),
        )
        counts = per_threshold[best][day]
        held = [held[k] + counts[k] for k in range(3)]
        print(f"| {day} | {best:.2f} | {prf(*counts)[2]:.2f} |")
    print(f"| pooled | | {prf(*held)[2]:.2f} |")

    print("\n## Cross-day repeats: items of D's window already news on D-1 (dropped as 'seen_before')\n")
    print(
        "| day | window items | caught as seen before | of them, in a story the labels call the same as D-1's |"
    )
    print("|---|---|---|---|")
    for day, total, caught, confirmed in cross_day(data):
        print(f"| {day} | {total} | {caught} | {confirmed} |")
    print(
        "\n(the last column uses the labels' `same_as_previous_day`, not the links themselves, so it can "
        "disagree with the pipeline)"
    )

    print("\n## Pair corpora: the chosen setting vs a lexical baseline\n")
    print(
        "| corpus | pairs | chosen (cosine >= 0.60) P / R / F1 / acc | Jaccard of word bigrams, best threshold P / R / F1 / acc |"
    )
    print("|---|---|---|---|")
    for name, (left, right, gold) in pair_corpora(data).items():
        a = embedder.encode(left)
        b = embedder.encode(right)
        cos = (a * b).sum(axis=1)
        ours = binary_f1(cos >= CHOSEN.near_duplicate_threshold, gold)
        lexical = np.array([jaccard(x, y) for x, y in zip(left, right, strict=True)])
        best = max(
            ((*binary_f1(lexical >= t, gold), t) for t in np.arange(0.05, 0.95, 0.05)), key=lambda r: r[2]
        )
        print(
            f"| {name} | {len(gold)} | {ours[0]:.2f} / {ours[1]:.2f} / {ours[2]:.2f} / {ours[3]:.2f} | "
            f"{best[0]:.2f} / {best[1]:.2f} / {best[2]:.2f} / {best[3]:.2f} (t = {best[4]:.2f}) |"
        )
    left, right, gold = pair_corpora(data)["MRPC train"]
    cos = (embedder.encode(left) * embedder.encode(right)).sum(axis=1)
    sweep = [(*binary_f1(cos >= t, gold), t) for t in np.arange(0.40, 0.95, 0.05)]
    best = max(sweep, key=lambda r: r[2])
    print(
        f"\nMRPC-train cosine sweep: best F1 {best[2]:.2f} at {best[4]:.2f}; at 0.60 F1 "
        f"{next(r for r in sweep if abs(r[4] - 0.60) < 1e-9)[2]:.2f}. The story labels put the plateau at "
        "0.55-0.65 (table above); 0.60 sits on both."
    )
    print(f"\n# done in {time.perf_counter() - t0:.1f} s; {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")


if __name__ == "__main__":
    main()
