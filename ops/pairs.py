"""Fit the story pair model on labelled days, and judge it on days it never saw.

``training_pairs`` turns a labelled day into feature rows with their labels: two entries of one
labelled story are one story, of two stories two (a digest's article is one story with an item
its entry covers when it is the digest's article most like that item; two digests, or two
stories of one digest entry, teach nothing). ``fit`` fits the logistic regression on some days
and chooses its threshold inside them, leave one group out (a group is a block of neighbouring
days, or a story-only day); ``leave_block_out`` fits with a block left out (and everything on
it, item or story, out of the training data) and judges the block: pairs of labelled entries
put in one story against the labels, digest pairs and pairs the labels call uncertain apart, and
the follow-ups of a day that has its previous day's labels.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from ops.story_days import Entry, LabelledDay
from tasks import dedup, pairs

Clusterer = Callable[[LabelledDay], list[tuple[str, ...]]]
GRID = tuple(round(t, 3) for t in np.arange(0.05, 0.96, 0.025))


@dataclass
class Counts:
    """True, false and missed pairs."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: Counts) -> None:
        self.tp, self.fp, self.fn = self.tp + other.tp, self.fp + other.fp, self.fn + other.fn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass
class Judged:
    """A day's (or a pool's) pairs against the labels."""

    pairs: Counts = field(default_factory=Counts)
    digest: Counts = field(default_factory=Counts)
    uncertain: Counts = field(default_factory=Counts)
    follow_ups: Counts = field(default_factory=Counts)  # fp: a link the labels do not make; fn: one missed
    follow_ups_uncertain: Counts = field(default_factory=Counts)  # links the labels call doubtful

    def add(self, other: Judged) -> None:
        for name in ("pairs", "digest", "uncertain", "follow_ups", "follow_ups_uncertain"):
            getattr(self, name).add(getattr(other, name))

    @property
    def follow_ups_as_labelled(self) -> Counts:
        """The follow-ups as the labels decide them: a doubtful link is one they do not make."""
        doubtful = self.follow_ups_uncertain
        return Counts(self.follow_ups.tp + doubtful.tp, self.follow_ups.fp + doubtful.fp, self.follow_ups.fn)


def wilson(successes: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95 % by default)."""
    if total == 0:
        return 0.0, 1.0
    p = successes / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * np.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return max(0.0, centre - half), min(1.0, centre + half)


def same_story(a: Entry, b: Entry) -> bool:
    return a.story == b.story or (a.digest and b.story in a.covers) or (b.digest and a.story in b.covers)


def judge(day: LabelledDay, stories: Sequence[Sequence[str]]) -> Judged:
    """Pairs of the day's labelled entries put in one story, against the labels (an entry is in a
    story when one of its articles is; two digests are never a pair)."""
    story_of = {a: k for k, members in enumerate(stories) for a in members}
    entries: dict[str, tuple[Entry, set[int]]] = {}
    for article_id, entry in day.entry.items():
        if entry is not None:
            entries.setdefault(entry.id, (entry, set()))[1].add(story_of[article_id])
    out = Judged()
    ids = sorted(entries)
    for i, x in enumerate(ids):
        for y in ids[i + 1 :]:
            (a, sa), (b, sb) = entries[x], entries[y]
            if a.digest and b.digest:
                continue
            same, together = same_story(a, b), bool(sa & sb)
            counts = (
                out.digest
                if a.digest or b.digest
                else out.uncertain
                if day.uncertain_pair(a, b)
                else out.pairs
            )
            counts.tp += same and together
            counts.fp += together and not same
            counts.fn += same and not together
    return out


# -- training pairs ----------------------------------------------------------------------


def _cosines(day: LabelledDay) -> tuple[np.ndarray, np.ndarray | None]:
    assert day.vectors is not None
    english = day.vectors @ day.vectors.T
    other = day.multilingual @ day.multilingual.T if day.multilingual is not None else None
    return english, other


def training_pairs(
    day: LabelledDay, leave_out: frozenset[str] = frozenset()
) -> tuple[np.ndarray, np.ndarray]:
    """Feature rows and labels (1 one story, 0 two) of the day's labelled pairs, leaving out every
    item whose article id, link or entry is in ``leave_out`` and every item of a story of such an item."""
    x, y, left, right = _day_table(day)
    items = day.items
    keys = [_keys(day, i) for i in items]
    banned = {
        e.story for i, k in zip(items, keys, strict=True) if (e := day.entry[i.article_id]) and k & leave_out
    }
    usable = np.array(
        [
            (e := day.entry[i.article_id]) is not None and e.story not in banned and not k & leave_out
            for i, k in zip(items, keys, strict=True)
        ],
        dtype=bool,
    )
    keep = usable[left] & usable[right] if len(y) else np.zeros(0, dtype=bool)
    return x[keep], y[keep]


def _keys(day: LabelledDay, item: dedup.Item) -> set[str]:
    entry = day.entry[item.article_id]
    return {item.article_id, item.canonical_url, item.url, *(() if entry is None else (entry.id,))}


_TABLES: dict[tuple[str, int], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}


def _day_table(day: LabelledDay) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every labelled pair of the day once: features, label, and the two items' indices."""
    key = (day.day, id(day))
    if key in _TABLES:
        return _TABLES[key]
    english, other = _cosines(day)
    items = day.items
    labelled = [x for x, i in enumerate(items) if day.entry[i.article_id] is not None]
    labels, left, right = [], [], []
    best_part: dict[tuple[str, int], tuple[float, int]] = {}  # (digest entry, other item) -> best article
    for n, x in enumerate(labelled):
        for y in labelled[n + 1 :]:
            a, b = day.entry[items[x].article_id], day.entry[items[y].article_id]
            assert a is not None and b is not None
            if a.digest and b.digest:
                continue
            if a.digest or b.digest:
                digest, item = (x, y) if a.digest else (y, x)
                d_entry, i_entry = (a, b) if a.digest else (b, a)
                if i_entry.story in d_entry.covers:  # only the digest's article most like the item
                    cosine = float(english[x, y]) if other is None else float(other[x, y])
                    if cosine > best_part.get((d_entry.id, item), (-2.0, -1))[0]:
                        best_part[(d_entry.id, item)] = (cosine, digest)
                    continue
            labels.append(int(a.story == b.story))
            left.append(x)
            right.append(y)
    for (_, item), (_, digest) in best_part.items():
        labels.append(1)
        left.append(digest)
        right.append(item)
    table = (
        pairs.feature_rows(items, english, other, list(zip(left, right, strict=True))),
        np.asarray(labels, dtype=int),
        np.asarray(left, dtype=int),
        np.asarray(right, dtype=int),
    )
    _TABLES[key] = table
    return table


def day_keys(day: LabelledDay) -> frozenset[str]:
    """What identifies the day's items in another day's data: article ids, links and entries."""
    out = set()
    for item in day.items:
        out |= {item.article_id, item.canonical_url, item.url}
        entry = day.entry[item.article_id]
        if entry is not None:
            out.add(entry.id)
    return frozenset(out - {""})  # an article without a feed link is not told by an empty one


# -- fitting -----------------------------------------------------------------------------


def _regression(x: np.ndarray, y: np.ndarray):
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=1.0, max_iter=5000).fit(x, y)


def choose_threshold(probabilities: np.ndarray, labels: np.ndarray) -> float:
    """The grid's threshold with the best pair F1 (among equals the highest: fewer false joins)."""
    best, chosen = -1.0, GRID[0]
    for t in GRID:
        predicted = probabilities >= t
        tp = int((predicted & (labels == 1)).sum())
        fp = int((predicted & (labels == 0)).sum())
        fn = int((~predicted & (labels == 1)).sum())
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        if f1 >= best - 1e-12:
            best, chosen = f1, t
    return chosen


def fit(
    groups: dict[str, list[tuple[np.ndarray, np.ndarray]]], note: str, days: Iterable[str] = ()
) -> pairs.PairModel:
    """Fit on every group's pairs; the threshold from the groups' out-of-group probabilities."""
    stacked = {g: _stack(parts) for g, parts in groups.items()}
    x = np.concatenate([v[0] for v in stacked.values()])
    y = np.concatenate([v[1] for v in stacked.values()])
    held_probs, held_labels = [], []
    for g, (gx, gy) in stacked.items():
        if not len(gy) or gy.sum() == 0:
            continue
        rest_x = np.concatenate([v[0] for h, v in stacked.items() if h != g])
        rest_y = np.concatenate([v[1] for h, v in stacked.items() if h != g])
        held_probs.append(_regression(rest_x, rest_y).predict_proba(gx)[:, 1])
        held_labels.append(gy)
    threshold = choose_threshold(np.concatenate(held_probs), np.concatenate(held_labels))
    regression = _regression(x, y)
    import sklearn

    card = {
        "fitted_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "library": f"scikit-learn {sklearn.__version__}",
        "fitted_on": {
            "days": sorted(days),
            "groups": sorted(groups),
            "pairs": len(y),
            "same_story_pairs": int(y.sum()),
        },
        "threshold_from": "pair F1 of the groups' out-of-group probabilities (leave one group out)",
        "note": note,
    }
    return pairs.PairModel(
        "stories",
        pairs.FEATURES,
        tuple(float(c) for c in regression.coef_[0]),
        float(regression.intercept_[0]),
        threshold,
        card,
    )


def _stack(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    width = len(pairs.FEATURES)
    return (
        np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, width)),
        np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, dtype=int),
    )


def fit_without(
    days: dict[str, LabelledDay], blocks: dict[str, tuple[str, ...]], held: Sequence[str] = (), note: str = ""
) -> pairs.PairModel:
    """Fit on every labelled day outside ``held`` (a group per block), with nothing of ``held``'s days."""
    leave_out = frozenset().union(*(day_keys(days[d]) for d in held)) if held else frozenset()
    groups: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for name, block in blocks.items():
        for d in block:
            if d not in held and d in days:
                groups.setdefault(name, []).append(training_pairs(days[d], leave_out))
    used = [d for block in blocks.values() for d in block if d not in held and d in days]
    return fit(groups, note or f"fitted without {', '.join(held) or 'nothing'}", used)


# -- clustering a labelled day -----------------------------------------------------------


def model_stories(model: pairs.PairModel) -> Clusterer:
    def stories(day: LabelledDay) -> list[tuple[str, ...]]:
        assert day.vectors is not None
        return [
            s.members
            for s in pairs.cluster(day.items, day.vectors, model, multilingual=day.multilingual).stories
        ]

    return stories


def rule_stories(policy: dedup.DedupPolicy) -> Clusterer:
    def stories(day: LabelledDay) -> list[tuple[str, ...]]:
        assert day.vectors is not None
        return [
            s.members
            for s in dedup.cluster(day.items, day.vectors, policy, multilingual=day.multilingual).stories
        ]

    return stories


def follow_ups(
    day: LabelledDay,
    previous: LabelledDay,
    stories: Sequence[Sequence[str]],
    link: Callable[..., np.ndarray],
    uncertain: Counts | None = None,
) -> Counts:
    """The day's stories of new articles (not on the previous day) linked to a previous day's article,
    one earlier story once, strongest first, judged against ``same_as_previous_day``. A link the labels
    call doubtful (``uncertain_previous_day``) is counted apart, in ``uncertain``: right when the
    labels make it, false when they keep the two apart. A definite link the decision misses is missed
    in the returned counts, also when the story was linked to a doubtful earlier story instead.

    ``link`` gives the decision's score of each (new story, earlier article) link, -1 for none.
    """
    before = {i.canonical_url for i in previous.items}
    by_id = {i.article_id: i for i in day.items}
    fresh = [s for s in stories if all(by_id[a].canonical_url not in before for a in s)]
    if not fresh:
        return Counts()
    heads = [min((by_id[a] for a in s), key=dedup._order_key) for s in fresh]
    old = previous.items
    assert day.vectors is not None and previous.vectors is not None
    head_index = {i.article_id: k for k, i in enumerate(day.items)}
    hv = day.vectors[[head_index[h.article_id] for h in heads]]
    sims = hv @ previous.vectors.T
    cross = None
    if day.multilingual is not None and previous.multilingual is not None:
        cross = day.multilingual[[head_index[h.article_id] for h in heads]] @ previous.multilingual.T
    scores = link(heads, old, sims, cross, hv, previous.vectors, day, previous, head_index)
    candidates = [
        (-float(scores[h, o]), h, o) for h in range(len(heads)) for o in range(len(old)) if scores[h, o] >= 0
    ]
    linked: dict[int, int] = {}
    taken: set[str] = set()
    for _, h, o in sorted(candidates):
        earlier_story = previous.entry[old[o].article_id]
        key = earlier_story.story if earlier_story else old[o].article_id
        if h not in linked and key not in taken:
            linked[h] = o
            taken.add(key)
    out, doubtful = Counts(), Counts() if uncertain is None else uncertain
    for h, head in enumerate(heads):
        entry = day.entry[head.article_id]
        if entry is None:
            continue
        truth = day.previous.get(entry.story)
        if h in linked:
            earlier_entry = previous.entry[old[linked[h]].article_id]
            right = earlier_entry is not None and truth == earlier_entry.story
            counts = (
                doubtful
                if earlier_entry is not None and (entry.story, earlier_entry.story) in day.previous_uncertain
                else out
            )
            counts.tp += right
            counts.fp += not right
            out.fn += truth is not None and not right  # a definite link missed is a miss, whatever was linked
        else:
            out.fn += truth is not None
    return out


def model_link(model: pairs.PairModel) -> Callable[..., np.ndarray]:
    """Link scores of the pair model (-1: no link)."""

    def link(heads, old, sims, cross, hv, ov, day, previous, head_index) -> np.ndarray:
        multi = None
        if day.multilingual is not None and previous.multilingual is not None:
            multi = np.concatenate(
                [day.multilingual[[head_index[h.article_id] for h in heads]], previous.multilingual]
            )
        p = pairs.follow_up_probabilities(heads, old, np.concatenate([hv, ov]), multi, model)
        return np.where(p >= model.threshold, p, -1.0)

    return link


def rule_link(policy: dedup.DedupPolicy) -> Callable[..., np.ndarray]:
    """Link scores of the threshold and rules (-1: no link)."""

    def link(heads, old, sims, cross, hv, ov, day, previous, head_index) -> np.ndarray:
        out = np.full((len(heads), len(old)), -1.0)
        found = dedup.evidence_index([*heads, *old])
        for h, new in enumerate(heads):
            for o, earlier in enumerate(old):
                signals = dedup.pair_signals(
                    new,
                    earlier,
                    float(sims[h, o]),
                    evidence=found,
                    multilingual=None if cross is None else float(cross[h, o]),
                )
                joined, _, score = dedup.decide(signals, policy)
                if joined:
                    out[h, o] = score
        return out

    return link
