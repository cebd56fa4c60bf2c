"""Which articles are news today, and which of them tell the same story.

Three layers, each a plain function:

1. **exact**: one canonical URL or one content hash is one article (``same_url`` /
   ``same_content``);
2. **cross-day**: an article that was already news on an earlier brief date, or was briefed
   then, is not news today (``seen_before`` / ``briefed_before``);
3. **near-duplicate**: the rest are clustered into stories by a pair rule that combines
   signals, because embeddings alone confuse "a model launch" with "the same model on a
   partner's cloud" and miss translations:

   - *embedding cosine* of title + summary (sentence-transformers) at or above
     ``near_duplicate_threshold``;
   - *organisation conflict*: a title naming an organisation the other article never
     mentions (Microsoft, AWS …) marks a different story (a partner announcement, a
     reaction) and forbids the link;
   - *one outlet, one report*: two items of one source join only above
     ``same_source_threshold`` (an update of a developing story);
   - *shared names* for non-English text (the embedding model is English): two items of
     different outlets that share ``min_shared_names`` Latin-script names or numbers
     (``PyTorch 1.9``) are linked; between two Latin-script languages (a Dutch and an
     English title) only capitalised names and numbers count (``xAI``, ``Grok``, ``4``).

   Links are taken strongest first and a link that would put two forbidden items in one
   story is skipped (constrained single linkage), so one weak bridge cannot chain stories.

``bench/dedup_quality.py`` shows what each signal buys against the hand-made labels.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import numpy as np

ORGANISATIONS = (
    "OpenAI",
    "Anthropic",
    "Google",
    "DeepMind",
    "Microsoft",
    "Meta",
    "Amazon",
    "AWS",
    "Apple",
    "Nvidia",
    "NVIDIA",
    "Tesla",
    "xAI",
    "Mistral",
    "Cohere",
    "Hugging Face",
    "IBM",
    "Intel",
    "AMD",
    "Perplexity",
    "Cloudflare",
    "Samsung",
    "Baidu",
    "Alibaba",
    "Tencent",
    "ByteDance",
    "Oracle",
    "Salesforce",
    "Azure",
    "NASA",
    "SpaceX",
    "Netflix",
    "Uber",
    "Waymo",
    "GitHub",
    "Reddit",
    "Qualcomm",
    "TSMC",
    "Huawei",
    "Xiaomi",
    "DOGE",
    "FTC",
    "SEC",
    "Windows",
    "Stability AI",
    "Midjourney",
    "Databricks",
    "Snowflake",
    "Scale AI",
    "Character.AI",
    "Inflection",
    "Adobe",
    "Spotify",
    "TikTok",
    "YouTube",
    "Instagram",
    "WhatsApp",
    "LinkedIn",
    "Palantir",
    "Anduril",
)
_ORG_PATTERNS = [(o, re.compile(r"(?<![A-Za-z])" + re.escape(o) + r"(?![A-Za-z])")) for o in ORGANISATIONS]
_LATIN_NAME = re.compile(r"[A-Za-z]+|\d+(?:\.\d+)?")
_COMMON_NAMES = {"ai", "api", "app", "ceo", "new", "the", "and", "of", "for", "in", "to", "a", "vs", "pro"}
_CJK = re.compile(r"[\u3400-\u9fff]")


@dataclass(frozen=True)
class Item:
    """What dedup needs of an article (from the ``articles`` projection)."""

    article_id: str
    source: str
    title: str
    summary: str
    canonical_url: str
    content_hash: str
    published_at: datetime | None
    language: str = "und"
    url: str = ""  # the link as the feed gave it (what citations show)
    tags: tuple[str, ...] = ()  # the feed's own categories
    kind: str = "news"  # the source's kind (``tasks/kinds``)
    outlet: str | None = None  # the outlet as the kind names it ("techcrunch.com", "GitHub")
    discussion_url: str | None = None  # a community item's discussion
    evidence: tuple[tuple[str, int | str], ...] = ()  # (field, value) the source gave, e.g. points

    @property
    def text(self) -> str:
        return f"{self.title}. {self.summary[:300]}"


@dataclass(frozen=True)
class DedupPolicy:
    near_duplicate_threshold: float = 0.60
    same_source_threshold: float = 0.80
    min_shared_names: int = 2
    organisation_conflicts: bool = True
    one_report_per_outlet: bool = True
    shared_names_for_non_english: bool = True


@dataclass(frozen=True)
class Story:
    members: tuple[str, ...]  # article ids, representative first
    pair_scores: tuple[tuple[str, str, float], ...] = ()

    @property
    def representative(self) -> str:
        return self.members[0]

    @property
    def story_id(self) -> str:
        return "st-" + hashlib.blake2b(self.representative.encode(), digest_size=8).hexdigest()


@dataclass(frozen=True)
class Duplicate:
    article_id: str
    duplicate_of: str
    reason: str
    first_brief_date: date | None = None


@dataclass
class Clustering:
    stories: list[Story]
    duplicates: list[Duplicate] = field(default_factory=list)
    # pairs of outlets' items just under the threshold and left apart: questions for a human
    borderline: list[tuple[str, str, float]] = field(default_factory=list)


# -- the window ------------------------------------------------------------------------


def news_window(day: date, zone: ZoneInfo, hours: int) -> tuple[datetime, datetime]:
    """``hours`` before the end of ``day`` in the configured timezone, as UTC bounds [start, end)."""
    end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=zone).astimezone(UTC)
    return end - timedelta(hours=hours), end


def in_window(published: datetime | None, window: tuple[datetime, datetime]) -> bool:
    return published is not None and window[0] <= published < window[1]


# -- signals ---------------------------------------------------------------------------


def organisations(text: str) -> set[str]:
    return {name for name, pattern in _ORG_PATTERNS if pattern.search(text)}


def organisation_index(items: Sequence[Item]) -> dict[str, tuple[set[str], set[str]]]:
    """Per article: the organisations its title names, and those its title and summary name."""
    return {i.article_id: (organisations(i.title), organisations(f"{i.title} {i.summary}")) for i in items}


def latin_names(text: str) -> set[str]:
    return {
        w.lower()
        for w in _LATIN_NAME.findall(text)
        if w.lower() not in _COMMON_NAMES and (len(w) > 1 or w.isdigit())
    }


def proper_names(text: str) -> set[str]:
    """Capitalised words and numbers: the names a Dutch and an English title can share."""
    return {
        w.lower()
        for w in _LATIN_NAME.findall(text)
        if (w[0].isupper() or w.isdigit()) and w.lower() not in _COMMON_NAMES and (len(w) > 1 or w.isdigit())
    }


@functools.lru_cache(maxsize=1 << 16)
def caseblind_organisations(text: str) -> frozenset[str]:
    """Known organisations a text names, in lower case, however it capitalises them (once per text)."""
    lowered = text.lower()
    return frozenset(o.lower() for o in ORGANISATIONS if o.lower() in lowered)


# a pair's signals are asked for every pair of a day (and every follow-up candidate): per text once
_latin_names = functools.lru_cache(maxsize=1 << 16)(lambda text: frozenset(latin_names(text)))
_proper_names = functools.lru_cache(maxsize=1 << 16)(lambda text: frozenset(proper_names(text)))
_cjk_title = functools.lru_cache(maxsize=1 << 16)(lambda title: len(_CJK.findall(title)) >= 2)


def is_cjk(item: Item) -> bool:
    return item.language in {"zh", "ja", "ko"} or _cjk_title(item.title)


def is_non_english(item: Item) -> bool:
    """Text the English embedding model cannot compare: CJK, or another language the feed declares."""
    return is_cjk(item) or item.language not in {"en", "und"}


@dataclass(frozen=True)
class PairSignals:
    cosine: float
    organisation_conflict: bool
    same_source: bool
    shared_names: int
    non_english: bool


def pair_signals(
    a: Item, b: Item, cosine: float, *, orgs: dict[str, tuple[set[str], set[str]]]
) -> PairSignals:
    title_a, text_a = orgs[a.article_id]
    title_b, text_b = orgs[b.article_id]
    non_english = is_non_english(a) or is_non_english(b)
    if non_english:  # another language capitalises otherwise ("XAI claimt …"): compare names without case
        text_a = {o.lower() for o in text_a} | caseblind_organisations(f"{a.title} {a.summary}")
        text_b = {o.lower() for o in text_b} | caseblind_organisations(f"{b.title} {b.summary}")
        title_a, title_b = {o.lower() for o in title_a}, {o.lower() for o in title_b}
    conflict = bool((title_a - text_b) or (title_b - text_a))
    shared = 0
    if is_cjk(a) or is_cjk(b):
        shared = len(_latin_names(a.title) & _latin_names(b.title))
    elif non_english:  # Latin script on both sides: only names count, not shared words
        shared = len(_proper_names(a.title) & _proper_names(b.title))
    return PairSignals(cosine, conflict, a.source == b.source, shared, non_english)


def decide(signals: PairSignals, policy: DedupPolicy) -> tuple[bool, bool, float]:
    """(link, forbid, score) for one pair under a policy."""
    if policy.organisation_conflicts and signals.organisation_conflict:
        return False, True, signals.cosine
    if policy.one_report_per_outlet and signals.same_source and signals.cosine < policy.same_source_threshold:
        return False, True, signals.cosine
    if signals.non_english and policy.shared_names_for_non_english:
        link = not signals.same_source and signals.shared_names >= policy.min_shared_names
        return link, False, 0.5 + 0.1 * signals.shared_names if link else signals.cosine
    return signals.cosine >= policy.near_duplicate_threshold, False, signals.cosine


# -- clustering ------------------------------------------------------------------------


def exact_groups(items: Sequence[Item]) -> tuple[list[list[int]], list[tuple[int, int, str]]]:
    """Union of items sharing a canonical URL or a content hash; returns groups and the links made."""
    parent = list(range(len(items)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    links = []
    for attribute, reason in (("canonical_url", "same_url"), ("content_hash", "same_content")):
        first: dict[str, int] = {}
        for index, item in enumerate(items):
            key = getattr(item, attribute)
            if key in first and find(first[key]) != find(index):
                links.append((index, first[key], reason))
                parent[find(index)] = find(first[key])
            first.setdefault(key, index)
    groups: dict[int, list[int]] = {}
    for index in range(len(items)):
        groups.setdefault(find(index), []).append(index)
    return list(groups.values()), links


def _order_key(item: Item) -> tuple[datetime, str]:
    return (item.published_at or datetime.max.replace(tzinfo=UTC), item.article_id)


def cluster(
    items: Sequence[Item],
    vectors: np.ndarray,
    policy: DedupPolicy,
    must: frozenset[frozenset[str]] = frozenset(),
    cannot: frozenset[frozenset[str]] = frozenset(),
    margin: float = 0.08,
) -> Clustering:
    """Stories among ``items`` (one row of ``vectors`` each, unit length).

    ``must`` / ``cannot`` are article-id pairs a person said are / are not one story: they
    win over every signal.
    """
    if not items:
        return Clustering([])
    groups, exact_links = exact_groups(items)
    duplicates = [Duplicate(items[i].article_id, items[j].article_id, reason) for i, j, reason in exact_links]
    heads = [min(members, key=lambda i: _order_key(items[i])) for members in groups]
    group_index = {heads[g]: g for g in range(len(heads))}
    orgs = organisation_index(items)
    sims = vectors[heads] @ vectors[heads].T if len(heads) else np.zeros((0, 0))
    candidates, forbidden, borderline = [], set(), []
    for x in range(len(heads)):
        for y in range(x + 1, len(heads)):
            left, right = items[heads[x]], items[heads[y]]
            said = _said(groups[group_index[heads[x]]], groups[group_index[heads[y]]], items, must, cannot)
            if said is not None:
                (candidates.append((2.0, x, y)) if said else forbidden.add((x, y)))
                continue
            signals = pair_signals(left, right, float(sims[x, y]), orgs=orgs)
            link, forbid, score = decide(signals, policy)
            if forbid:
                forbidden.add((x, y))
            elif link:
                candidates.append((score, x, y))
            elif (
                not signals.same_source
                and not signals.non_english
                and score >= policy.near_duplicate_threshold - margin
            ):
                borderline.append((left.article_id, right.article_id, round(score, 4)))
    members = {g: {g} for g in range(len(heads))}
    owner = list(range(len(heads)))
    scores: dict[int, list[tuple[str, str, float]]] = {}
    for score, x, y in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        a, b = owner[x], owner[y]
        if a == b or any((min(p, q), max(p, q)) in forbidden for p in members[a] for q in members[b]):
            continue
        for g in members[b]:
            owner[g] = a
        members[a] |= members.pop(b)
        scores.setdefault(a, []).extend(scores.pop(b, []))
        scores[a].append((items[heads[x]].article_id, items[heads[y]].article_id, round(score, 4)))
    stories = []
    for root, grouped in members.items():
        indices = sorted((i for g in grouped for i in groups[g]), key=lambda i: _order_key(items[i]))
        stories.append(
            Story(tuple(items[i].article_id for i in indices), tuple(sorted(scores.get(root, []))))
        )
    stories.sort(key=lambda s: s.representative)
    together = {a: k for k, s in enumerate(stories) for a in s.members}
    borderline = [p for p in borderline if together[p[0]] != together[p[1]]]
    return Clustering(stories, duplicates, sorted(borderline))


def _said(
    first: Sequence[int],
    second: Sequence[int],
    items: Sequence[Item],
    must: frozenset[frozenset[str]],
    cannot: frozenset[frozenset[str]],
) -> bool | None:
    """True / False when a person said two groups are / are not one story, else None."""
    pairs = {frozenset((items[i].article_id, items[j].article_id)) for i in first for j in second}
    if pairs & cannot:
        return False
    if pairs & must:
        return True
    return None


def pairwise_scores(predicted: Sequence[Sequence[str]], truth: dict[str, str]) -> tuple[int, int, int]:
    """(true positive, false positive, false negative) pairs of a clustering against labels."""
    label_of = {a: truth[a] for story in predicted for a in story if a in truth}
    story_of = {a: k for k, story in enumerate(predicted) for a in story}
    ids = sorted(label_of)
    tp = fp = fn = 0
    for i, a in enumerate(ids):
        for b in ids[i + 1 :]:
            same_truth, same_pred = label_of[a] == label_of[b], story_of[a] == story_of[b]
            tp += same_truth and same_pred
            fp += same_pred and not same_truth
            fn += same_truth and not same_pred
    return tp, fp, fn
