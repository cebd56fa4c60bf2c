"""Story clustering quality against the hand-made labels, and what each signal buys.

    python bench/dedup_quality.py [--data ../shared/data] [--labels-only]

For each labelled day the real snapshots go through the real collect step and the items are
clustered; pairwise precision / recall / F1 against the labels are printed per day and pooled
per group:

- **2025** (``labels/stories-<day>.json``, 2025-07-28 and 2025-08-05..07): the items
  published inside the day's lookback window (48 h before the end of the day, UTC). On
  2025-07-28 the Dutch Tweakers feed of that day (``month/feeds/tweakers``) is clustered
  too: its items are not labelled, so they are not scored, but a wrong link through one of
  them joins labelled items it should not and shows as a false pair.
- **2021 zh** (the same files, 2021-06-16/17): four Chinese WeChat accounts.
- **aiweb** (``labels/aiweb-<day>.json``, 2026-03-17..19): the 14 AI-world feeds of
  ``aiweb/feeds`` with their kinds and languages (``docs/sources.md``), the items the labels
  cover (published on the day or the two days before it, UTC). An aibase digest is split
  into one article per story by its kind; a digest counts as one labelled item, in a
  predicted story when any of its articles is, matching the stories it ``covers``; two
  digests are never a pair. Items the labels do not list are clustered, not scored.

Exact duplicates are joined across sources by canonical URL, as in a run. ``--labels-only``
stops after the label tables. Then the chosen setting on the MRPC-train and STS-B pair
corpora beside a lexical baseline (word-shingle Jaccard, the quantity MinHash estimates),
with the baseline's threshold tuned on the same data (its best case).
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
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
AIWEB = ["2026-03-17", "2026-03-18", "2026-03-19"]
GROUPS = {"2025": POOLED, "2021 zh": CHINESE, "aiweb": AIWEB}
# the AI world's feeds as docs/sources.md configures them: name -> (kind, language)
AIWEB_SOURCES = {
    "anthropic_news": ("lab", "en"),
    "deepseek_news": ("lab", "auto"),
    "moonshot_blog": ("lab", "auto"),
    "minimax_blog": ("lab", "auto"),
    "z_ai_blog": ("lab", "auto"),
    "meta_ai_news": ("lab", "en"),
    "bytedance_seed_blog": ("lab", "auto"),
    "aibase_daily": ("digest", "zh"),
    "hackernews_best_stories": ("community", "en"),
    "github_trends_daily": ("repos", "auto"),
    "huggingface_daily_papers": ("papers", "en"),
    "artificial_analysis": ("news", "en"),
    "deeplearning_ai_batch": ("news", "en"),
    "arstechnica": ("news", None),
}
CHOSEN = DedupPolicy()
ABLATIONS = {
    "embeddings only (cosine >= 0.60)": DedupPolicy(
        organisation_conflicts=False, one_report_per_outlet=False, shared_names_for_non_english=False
    ),
    "+ one report per outlet": DedupPolicy(organisation_conflicts=False, shared_names_for_non_english=False),
    "+ organisation conflicts": DedupPolicy(shared_names_for_non_english=False),
    "+ shared names, non-English (chosen)": CHOSEN,
}
SWEEP = (0.50, 0.55, 0.60, 0.65, 0.70, 0.75)


@dataclass(frozen=True)
class Day:
    """A labelled day: its items, and what the labels say of each (None: not labelled)."""

    group: str
    items: list[Item]
    label: dict[str, dict | None]  # article id -> {"story", "digest", "covers"} or None
    vectors: np.ndarray | None = None


def collected(feeds: Path, source: Source, day: str, window: tuple[datetime, datetime]) -> list[dict]:
    """The ``article.collected`` payloads of one source's snapshot published inside ``window``."""
    out = []
    for event in collect_source(source, date.fromisoformat(day), "bench"):
        p = event.payload
        published = datetime.fromisoformat(p["published_at"]) if p.get("published_at") else None
        if event.event_type == "article.collected" and in_window(published, window):
            out.append({**p, "published": published})
    return out


def as_item(p: dict) -> Item:
    evidence = tuple(sorted((p.get("evidence") or {}).items()))
    return Item(
        p["article_id"],
        p["source"],
        p["title"],
        p["summary"],
        p["canonical_url"],  # as in a run: one URL in two feeds is one article (exact dedup)
        p["content_hash"],
        p["published"],
        p["language"],
        p["url"],
        tuple(p.get("tags") or ()),
        p.get("kind") or "news",
        p.get("outlet"),
        p.get("discussion_url"),
        evidence,
    )


def story_day(data: Path, day: str) -> Day:
    """A ``stories-<day>.json`` day: the window's items of every labelled source (and Tweakers')."""
    labels = json.loads((data / "labels" / f"stories-{day}.json").read_text())
    truth = {link: s["story"] for s in labels["stories"] for link in s["items"]}
    window = news_window(date.fromisoformat(day), ZoneInfo("UTC"), 48)
    items, label = [], {}
    for name in sorted({i["source"] for i in labels["items"]}):
        source = Source(name, (data / "feeds" / name).as_uri() + "/{date}.xml")
        for p in collected(data / "feeds", source, day, window):
            items.append(as_item(p))
            label[p["article_id"]] = {"story": truth[p["url"]]}
    tweakers = data / "month" / "feeds" / "tweakers"
    if (tweakers / f"{day}.xml").is_file():  # Dutch, not labelled: clustered, not scored
        for p in collected(
            tweakers.parent, Source("tweakers", tweakers.as_uri() + "/{date}.xml"), day, window
        ):
            items.append(as_item(p))
            label[p["article_id"]] = None
    return Day("2021 zh" if day in CHINESE else "2025", items, label)


def aiweb_day(data: Path, day: str) -> Day:
    """An ``aiweb-<day>.json`` day: the items of the 14 feeds published on the day or the two before."""
    rows = json.loads((data / "labels" / f"aiweb-{day}.json").read_text())
    by_link = {r["id"]: r for r in rows}
    first = date.fromisoformat(day) - timedelta(days=2)
    start = datetime(first.year, first.month, first.day, tzinfo=UTC)
    window = (start, start + timedelta(days=3))
    feeds = data / "aiweb" / "feeds"
    items, label = [], {}
    for name, (kind, language) in AIWEB_SOURCES.items():
        source = Source(name, (feeds / name).as_uri() + "/{date}.xml", language, kind)
        for p in collected(feeds, source, day, window):
            link = p["url"].split("#")[0] if kind == "digest" else p["url"]  # a digest's story: its entry
            items.append(as_item(p))
            row = by_link.get(link)
            label[p["article_id"]] = None if row is None else entry_label(row)
    return Day("aiweb", items, label)


def entry_label(row: dict) -> dict:
    return {
        "id": row["id"],
        "story": row["story"],
        "digest": bool(row.get("digest")),
        "covers": row.get("covers") or [],
    }


def day_scores(day: Day, stories: Sequence[Sequence[str]]) -> tuple[int, int, int]:
    """(true, false, missed) pairs of labelled items: items of one labelled entry count as one."""
    if day.group != "aiweb":
        truth = {a: lab["story"] for a, lab in day.label.items() if lab is not None}
        return pairwise_scores(stories, truth)
    story_of = {a: k for k, members in enumerate(stories) for a in members}
    entries: dict[str, tuple[dict, set[int]]] = {}
    for article_id, lab in day.label.items():
        if lab is not None:
            entries.setdefault(lab["id"], (lab, set()))[1].add(story_of[article_id])
    ids = sorted(entries)
    tp = fp = fn = 0
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            (la, sa), (lb, sb) = entries[a], entries[b]
            if la["digest"] and lb["digest"]:
                continue  # digests are never paired with each other
            same = (
                la["story"] == lb["story"]
                or (la["digest"] and lb["story"] in la["covers"])
                or (lb["digest"] and la["story"] in lb["covers"])
            )
            together = bool(sa & sb)
            tp += same and together
            fp += together and not same
            fn += same and not together
    return tp, fp, fn


def evaluate(days: dict[str, Day], policy: DedupPolicy) -> dict[str, tuple[int, int, int]]:
    per = {}
    for name, day in days.items():
        assert day.vectors is not None
        stories = cluster(day.items, day.vectors, policy).stories
        per[name] = day_scores(day, [s.members for s in stories])
    return per


def pooled(per: dict[str, tuple[int, int, int]], names: Sequence[str]) -> tuple[int, int, int]:
    return (
        sum(per[d][0] for d in names),
        sum(per[d][1] for d in names),
        sum(per[d][2] for d in names),
    )


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def cell(counts: tuple[int, int, int]) -> str:
    p, r, f = prf(*counts)
    return f"{p:.2f} / {r:.2f} / {f:.2f} ({counts[0]}/{counts[0] + counts[2]}, {counts[1]} false)"


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
    parser.add_argument("--labels-only", action="store_true", help="stop after the label tables")
    args = parser.parse_args()
    data = Path(args.data)
    if not (data / "labels").is_dir():
        raise SystemExit(f"no labels under {data}; pass --data PATH to the shared data folder")
    embedder = SentenceTransformerEmbedder()
    t0 = time.perf_counter()
    days = {}
    for name in POOLED + CHINESE + AIWEB:
        day = aiweb_day(data, name) if name in AIWEB else story_day(data, name)
        days[name] = replace(day, vectors=embedder.encode([i.text for i in day.items]))
    print(
        f"# collected and embedded {sum(len(d.items) for d in days.values())} items in "
        f"{time.perf_counter() - t0:.1f} s (model {embedder.name})\n"
    )

    print("## Story clusters against the labels, per day (chosen setting)\n")
    print("| day | items (labelled) | P / R / F1 (true pairs found / true pairs, false pairs) |")
    print("|---|---|---|")
    chosen = evaluate(days, CHOSEN)
    for group, names in GROUPS.items():
        for name in names:
            labelled = sum(v is not None for v in days[name].label.values())
            print(f"| {name} | {len(days[name].items)} ({labelled}) | {cell(chosen[name])} |")
        print(f"| **{group} pooled** | | **{cell(pooled(chosen, names))}** |")
    print("\nTargets: 2025 pooled precision >= 0.95; aiweb pooled precision >= 0.95 and recall >= 0.80.\n")

    print("## What each signal buys (pooled P / R / F1 per group)\n")
    print("| setting | " + " | ".join(GROUPS) + " |")
    print("|---|" + "---|" * len(GROUPS))
    for label, policy in ABLATIONS.items():
        per = evaluate(days, policy)
        print(f"| {label} | " + " | ".join(cell(pooled(per, names)) for names in GROUPS.values()) + " |")

    print("\n## The near-duplicate threshold\n")
    print("| threshold | " + " | ".join(GROUPS) + " |")
    print("|---|" + "---|" * len(GROUPS))
    per_threshold = {t: evaluate(days, replace(CHOSEN, near_duplicate_threshold=t)) for t in SWEEP}
    for t in SWEEP:
        print(f"| {t:.2f} | " + " | ".join(cell(pooled(per_threshold[t], n)) for n in GROUPS.values()) + " |")
    print(
        "\nLeave one day out: for each day, the threshold of the sweep with the best pooled F1 on "
        "every *other* labelled day (ties to the one nearest the default), scored on that day; so each "
        "row predicts a day the choice did not see.\n"
    )
    print("| day scored | threshold chosen on the other days | P / R / F1 on the day |")
    print("|---|---|---|")
    everything = POOLED + CHINESE + AIWEB
    held: dict[str, tuple[int, int, int]] = {}
    for name in everything:
        others = [d for d in everything if d != name]
        best = max(
            SWEEP,
            key=lambda t: (
                prf(*pooled(per_threshold[t], others))[2],
                -abs(t - CHOSEN.near_duplicate_threshold),
            ),
        )
        held[name] = per_threshold[best][name]
        print(f"| {name} | {best:.2f} | {cell(held[name])} |")
    for group, names in GROUPS.items():
        print(f"| **{group} pooled** | | **{cell(pooled(held, names))}** |")
    if args.labels_only:
        return

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
