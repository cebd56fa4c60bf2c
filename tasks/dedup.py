"""Which articles are news today, and which of them tell the same story.

Three layers, each a plain function:

1. **exact**: one canonical URL or one content hash is one article (``same_url`` /
   ``same_content``);
2. **cross-day**: an article that was already news on an earlier brief date, or was briefed
   then, is not news today (``seen_before`` / ``briefed_before``);
3. **near-duplicate**: the rest are clustered into stories by a pair rule that weighs the
   embeddings against what the titles and links say, because embeddings alone confuse "a model
   launch" with "the same model on a partner's cloud" or "another model of the same company":

   - *one page*: the same link's host and path (an HN link to ``openai.com`` and OpenAI's own
     post), the same title in two sources, or a trending repository and a page on the
     project's own site that names it, are one story;
   - *embedding cosine* of title + summary at or above ``near_duplicate_threshold`` (the
     English model); a pair with non-English text joins when the multilingual model's cosine
     reaches ``cross_language_threshold`` or when its titles share ``min_shared_names`` names
     (a versioned name such as ``PyTorch 1.9`` counts two), either evidence;
   - *organisation conflict*: a title naming an organisation the other article never
     mentions (Microsoft, AWS …; a page on the company's own site mentions it) marks a
     different story (a partner announcement, a reaction) and forbids the link;
   - *distinct names* (``tasks/names.py``): when each title names something the other article
     never mentions (``Gemma 3`` / ``Gemini Robotics``; ``Gemini 2.5 … Flash`` / ``Gemini
     … Pokémon``; ``iOS 18.6`` / ``iOS 26``) they are different products or events, whatever
     company they share (a company is never a name here), and the link is forbidden;
   - *one outlet, one report*: two items of one outlet (a community item's outlet is the
     site it links) join only above ``same_source_threshold`` (an update of a developing
     story); two stories of one digest never do;
   - *pieces of their own*: a review, preview, roundup, buying guide or background piece is
     its own story (it joins only a near copy, above ``same_source_threshold``);
   - *a repository is its own project*: a trending repository joins only what links to it,
     is on its project's site, or names it in its title (``open-swe`` in "Open SWE is …");
     a paper or another repository that merely sounds alike (a coding agent, a coding
     model's report) is another story.

   Links are taken strongest first and a link that would put two forbidden items in one
   story is skipped (constrained single linkage), so one weak bridge cannot chain stories.

This pair rule is the ``rules`` story model of a policy; by default stories are decided by the
fitted pair model of ``tasks/pairs.py``, whose features include these signals.
``bench/dedup_quality.py`` compares the two on days neither was fitted or tuned on.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import numpy as np

from tasks import names
from tasks.names import ORGANISATIONS

__all__ = ["ORGANISATIONS"]  # where the analyse step finds them

_CJK = re.compile(r"[\u3400-\u9fff]")
# pieces that are their own story whatever they cover (the labels' rule): a review or preview of
# a product, a roundup or buying guide, a background or opinion piece
OWN_STORY = re.compile(
    r"^(?:video)?p?review\s*[-:]|\bp?review\s*[:\-\u2013\u2014]|\breview$|\bhands[- ]on\b"
    r"|^everything\b.*\b(?:announced|revealed|launched)\b|^\d+ best\b|\bbest\b.*\b20\d\d\b"
    r"|^(?:achtergrond|column|opinie|opinion)\s*[-:]",
    re.IGNORECASE,
)


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
    cross_language_threshold: float = 0.55  # the multilingual model's cosine, for pairs with other text
    organisation_conflicts: bool = True
    one_report_per_outlet: bool = True
    shared_names_for_non_english: bool = True
    name_conflicts: bool = True
    own_story_pieces: bool = True
    one_page: bool = True  # the same link, title, or project's site join whatever the embeddings say
    repository_identity: bool = True  # a repository joins only what links to it or names it


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


@dataclass(frozen=True)
class Evidence:
    """What one article's text and link say of it, computed once per article."""

    title_orgs: frozenset[str]  # organisations its title names (lower case when compared without case)
    text_orgs: frozenset[str]  # … its title and summary name, and the one whose site it is on
    caseblind_orgs: frozenset[str]  # … however they are capitalised (another language's headline)
    names: frozenset[str]  # the title's names besides organisations and versions (``names.fold``)
    versions: frozenset[tuple[str, str]]  # the title's versioned names: ('gemini', '2.5')
    text_versions: frozenset[tuple[str, str]]  # … of its title and summary
    folded: str  # title and summary as ``names.fold`` writes them
    title_key: str  # the title without case, accents or punctuation
    link: tuple[str, str]  # the canonical link's host and path, and its query
    outlet: str  # who reported it: the source, or for a community item the linked site
    entry: str  # the feed entry it came from (a digest's stories share one)
    project: tuple[str, str] | None  # a trending repository's (owner, name)
    site: str  # the link's site name (``unsloth`` for ``unsloth.ai``)
    own_story: bool  # a review, roundup or opinion piece: one story whatever it covers


def _link(item: Item) -> tuple[str, str]:
    """Host and path, and query, of the canonical link; none for a digest's story (its entry's link)."""
    if item.kind == "digest":
        return "", ""
    parts = urlsplit(item.canonical_url)
    return f"{parts.netloc}{parts.path}", parts.query


def same_link(a: Evidence, b: Evidence) -> bool:
    """One page: the same host and path, with the same query or none on one side (``?ref=hn``)."""
    (where_a, query_a), (where_b, query_b) = a.link, b.link
    return bool(where_a) and where_a == where_b and (query_a == query_b or not query_a or not query_b)


def _site(url: str) -> str:
    host = (urlsplit(url).hostname or "").lower().removeprefix("www.")
    labels = host.split(".")
    return labels[-2] if len(labels) >= 2 else host


@functools.lru_cache(maxsize=1 << 14)  # an article's evidence is its own: a run's shadow reads it again
def evidence(item: Item) -> Evidence:
    text = f"{item.title} {item.summary}"
    host_orgs = names.host_organisations(item.url or item.canonical_url)
    title_orgs = names.organisations(item.title)
    text_orgs = names.organisations(text)
    project = None
    if item.kind == "repos":
        parts = urlsplit(item.url or item.canonical_url).path.strip("/").split("/")
        project = (parts[0].lower(), parts[1].lower()) if len(parts) >= 2 else None
    return Evidence(
        title_orgs=title_orgs,
        text_orgs=text_orgs | {o for o in names.ORGANISATIONS if o.lower() in host_orgs},
        caseblind_orgs=names.caseblind_organisations(text) | host_orgs,
        names=names.title_names(item.title, english=not is_non_english(item)),
        versions=names.versions(item.title),
        text_versions=names.versions(text),
        folded=names.fold(text),
        title_key=names.fold(item.title),
        link=_link(item),
        outlet=(item.outlet or item.source) if item.kind == "community" else item.source,
        entry=item.canonical_url.split("#")[0] if item.kind == "digest" else item.canonical_url,
        project=project,
        site=_site(item.url or item.canonical_url),
        own_story=bool(OWN_STORY.search(item.title.strip())),
    )


def evidence_index(items: Sequence[Item]) -> dict[str, Evidence]:
    return {i.article_id: evidence(i) for i in items}


_cjk_title = functools.lru_cache(maxsize=1 << 16)(lambda title: len(_CJK.findall(title)) >= 2)


def is_cjk(item: Item) -> bool:
    return item.language in {"zh", "ja", "ko"} or _cjk_title(item.title)


def is_non_english(item: Item) -> bool:
    """Text the English embedding model cannot compare: CJK, or another language the feed declares."""
    return is_cjk(item) or item.language not in {"en", "und"}


def organisation_conflict(a: Evidence, b: Evidence, without_case: bool) -> bool:
    """A title names an organisation the other article never mentions (nor is on the site of)."""
    if without_case:  # another language capitalises otherwise ("XAI claimt …")
        title_a, title_b = {o.lower() for o in a.title_orgs}, {o.lower() for o in b.title_orgs}
        return bool((title_a - b.caseblind_orgs) or (title_b - a.caseblind_orgs))
    return bool((a.title_orgs - b.text_orgs) or (b.title_orgs - a.text_orgs))


def distinct_names(a: Evidence, b: Evidence, releases: bool = False) -> bool:
    """Each title names something (a product, a place, a version) the other article never mentions.

    One product line at two versions (``iOS 18.6``, ``iOS 26``) is two products; a company both
    name is not evidence either way (organisations are not names here). With ``releases``, each
    version is read as its release (``Firefox 141.0`` names ``Firefox 141``).
    """

    def unmatched(x: Evidence, y: Evidence) -> bool:
        if any(n not in y.folded for n in x.names):
            return True
        if releases:
            return bool(names.releases(x.versions) - names.releases(y.text_versions))
        return bool(x.versions - y.text_versions)

    return unmatched(a, b) and unmatched(b, a)


@functools.lru_cache(maxsize=1 << 16)
def _path(url: str) -> str:
    """A link's path, lower case, without its outer slashes."""
    return urlsplit(url).path.lower().strip("/")


_fold = functools.lru_cache(maxsize=1 << 16)(names.fold)  # titles and names compared pair after pair


def same_project(a: Item, b: Item, ea: Evidence, eb: Evidence) -> bool:
    """A trending repository and a page on the project's own site (or in the repository) naming it."""
    for other, er, eo in ((b, ea, eb), (a, eb, ea)):
        if er.project is None or other.kind == "repos":
            continue
        owner, name = er.project
        if eo.site == "github":
            path = _path(other.url or other.canonical_url)
            if path == f"{owner}/{name}" or path.startswith(f"{owner}/{name}/"):
                return True
        key = _fold(name)
        if len(key) >= 4 and eo.site in {key, _fold(owner)} and key in _fold(other.title):
            return True
    return False


@dataclass(frozen=True)
class PairSignals:
    cosine: float  # the English model's, or the multilingual model's for a pair with other text
    organisation_conflict: bool
    same_source: bool  # one outlet (a community item's linked site, else the source)
    shared_names: int  # Latin-script names of the titles in common (the non-English fallback)
    non_english: bool
    multilingual: bool = False  # ``cosine`` is the multilingual model's
    distinct_names: bool = False
    same_entry: bool = False  # two stories of one digest entry
    same_title: bool = False
    same_project: bool = False
    same_link: bool = False
    own_story: bool = False  # one of them is a review, roundup or opinion piece
    unnamed_repository: bool = False  # a repository the other item neither links nor names


def unnamed_repository(a: Item, b: Item, ea: Evidence, eb: Evidence) -> bool:
    """One of them is a trending repository and the other neither links to it, nor is on its
    project's site, nor names it in its title (``same_project`` and ``same_link`` cover the
    links and the site)."""
    for other, er in ((b, ea), (a, eb)):
        if er.project is None:
            continue
        key = _fold(er.project[1])
        if len(key) < 4 or key not in _fold(other.title):
            return True
    return False


def pair_signals(
    a: Item,
    b: Item,
    cosine: float,
    *,
    evidence: dict[str, Evidence],
    multilingual: float | None = None,
) -> PairSignals:
    return _signals(a, b, evidence[a.article_id], evidence[b.article_id], cosine, multilingual)


# what a pair says of itself under any policy: a run's shadow asks again for the same pairs
@functools.lru_cache(maxsize=1 << 16)
def _signals(
    a: Item, b: Item, ea: Evidence, eb: Evidence, cosine: float, multilingual: float | None
) -> PairSignals:
    non_english = is_non_english(a) or is_non_english(b)
    # the fallback without a multilingual model: names in common (a version counts as a line and a number)
    shared = len(ea.names & eb.names) + 2 * len(ea.versions & eb.versions) if non_english else 0
    return PairSignals(
        cosine=multilingual if non_english and multilingual is not None else cosine,
        organisation_conflict=organisation_conflict(ea, eb, without_case=non_english),
        same_source=ea.outlet == eb.outlet,
        shared_names=shared,
        non_english=non_english,
        multilingual=non_english and multilingual is not None,
        distinct_names=distinct_names(ea, eb),
        same_entry=a.kind == "digest" and b.kind == "digest" and ea.entry == eb.entry,
        same_title=bool(ea.title_key) and ea.title_key == eb.title_key and a.source != b.source,
        same_project=same_project(a, b, ea, eb),
        same_link=same_link(ea, eb),
        own_story=ea.own_story or eb.own_story,
        unnamed_repository=unnamed_repository(a, b, ea, eb),
    )


def linkable(
    left: Sequence[Item],
    right: Sequence[Item],
    sims: np.ndarray,
    cross: np.ndarray | None,
    found: dict[str, Evidence],
    policy: DedupPolicy,
    floor: float,
    upper: bool = False,
) -> list[tuple[int, int]]:
    """The pairs (i, j) of ``left`` x ``right`` (with ``upper``, of one list: i < j only), in order,
    that ``decide`` may link under ``policy``, and the English pairs whose cosine reaches ``floor``
    (at most the policy's ``near_duplicate_threshold``). ``cross``: the multilingual model's
    cosines of the same pairs, when the day has them.

    Every other pair shares no page, title or project, and is either English on both sides and
    below ``floor``, or has other text, a multilingual cosine below ``cross_language_threshold``
    and no title name in common: ``decide`` would not link it (its only links are one page, a
    pair with other text's evidence, and the threshold). Choosing them from the matrices spares
    the pair signals of most pairs of a day (a pair's signals cost far more than its cosines).
    """
    other_left, other_right = (np.array([is_non_english(i) for i in s], dtype=bool) for s in (left, right))
    other = other_left[:, None] | other_right[None, :]  # the pair has text not in English
    chosen = ~other & (sims >= floor)
    if cross is not None:
        chosen |= other & (cross >= policy.cross_language_threshold)
    if policy.shared_names_for_non_english and policy.min_shared_names <= 0:
        chosen |= other
    for side, items in ((0, left), (1, right)):  # a trending repository: its project may join it
        project = np.array([found[i.article_id].project is not None for i in items], dtype=bool)
        if side == 0:
            chosen[project, :] = True
        else:
            chosen[:, project] = True
    keyed = [(lambda e: [e.link[0]], None), (lambda e: [e.title_key], None)]
    if policy.shared_names_for_non_english:  # a name in common, for a pair with other text
        keyed.append((lambda e: [*e.names, *e.versions], other))
    for keys, only in keyed:
        index: dict[object, list[int]] = {}
        for j, item in enumerate(right):
            for key in keys(found[item.article_id]):
                if key:
                    index.setdefault(key, []).append(j)
        for i, item in enumerate(left):
            for key in keys(found[item.article_id]):
                for j in index.get(key, ()) if key else ():
                    chosen[i, j] |= True if only is None else bool(only[i, j])
    if upper:
        chosen = np.triu(chosen, 1)
    return [(int(i), int(j)) for i, j in np.argwhere(chosen)]


def decide(signals: PairSignals, policy: DedupPolicy) -> tuple[bool, bool, float]:
    """(link, forbid, score) for one pair under a policy."""
    if signals.same_entry:
        return False, True, signals.cosine  # a digest's stories are different stories by construction
    if policy.one_page and signals.same_link:
        return True, False, 1.0  # one page, whoever links it
    if policy.organisation_conflicts and signals.organisation_conflict:
        return False, True, signals.cosine
    if policy.name_conflicts and signals.distinct_names:
        return False, True, signals.cosine
    near_copy = signals.cosine >= policy.same_source_threshold
    if policy.one_report_per_outlet and signals.same_source and not near_copy:
        return False, True, signals.cosine
    if policy.own_story_pieces and signals.own_story and not near_copy:
        return False, True, signals.cosine
    if policy.one_page and (signals.same_title or signals.same_project):
        return True, False, 1.0
    if policy.repository_identity and signals.unnamed_repository:
        return False, True, signals.cosine
    if signals.non_english:  # either evidence: the multilingual model, or the names the titles share
        by_model = signals.multilingual and signals.cosine >= policy.cross_language_threshold
        by_names = (
            policy.shared_names_for_non_english
            and not signals.same_source
            and signals.shared_names >= policy.min_shared_names
        )
        score = max(
            signals.cosine if by_model else 0.0, 0.5 + 0.1 * signals.shared_names if by_names else 0.0
        )
        return by_model or by_names, False, score if by_model or by_names else signals.cosine
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


class _HeadPairs:
    """The pairs of a day's heads as ``cluster`` asks about them: each pair's decision once, and
    whether a pair is forbidden, decided when first asked (``apart``)."""

    def __init__(
        self,
        items: list[Item],
        sims: np.ndarray,
        cross: np.ndarray | None,
        found: dict[str, Evidence],
        policy: DedupPolicy,
    ) -> None:
        self.items, self.sims, self.cross, self.found, self.policy = items, sims, cross, found, policy
        self.seen: set[tuple[int, int]] = set()
        self.forbidden: set[tuple[int, int]] = set()

    def said(self, pair: tuple[int, int], together: bool) -> None:
        """A person said the pair is one story, or is not: no signal is asked."""
        self.seen.add(pair)
        if not together:
            self.forbidden.add(pair)

    def look(self, x: int, y: int, margin: float) -> tuple[bool, float, bool]:
        """(link, score, borderline) of the pair (x, y), x < y; a forbidden pair is noted."""
        cosine = None if self.cross is None else float(self.cross[x, y])
        signals = pair_signals(
            self.items[x], self.items[y], float(self.sims[x, y]), evidence=self.found, multilingual=cosine
        )
        link, forbid, score = decide(signals, self.policy)
        self.seen.add((x, y))
        if forbid:
            self.forbidden.add((x, y))
        near = score >= self.policy.near_duplicate_threshold - margin
        borderline = not forbid and not link and not signals.same_source and not signals.non_english and near
        return link, score, borderline

    def apart(self, pair: tuple[int, int]) -> bool:
        """Whether the pair may not be in one story (a pair never looked at is looked at now)."""
        if pair not in self.seen:
            self.look(*pair, margin=0.0)
        return pair in self.forbidden


def cluster(
    items: Sequence[Item],
    vectors: np.ndarray,
    policy: DedupPolicy,
    must: frozenset[frozenset[str]] = frozenset(),
    cannot: frozenset[frozenset[str]] = frozenset(),
    margin: float = 0.08,
    multilingual: np.ndarray | None = None,
) -> Clustering:
    """Stories among ``items`` (one row of ``vectors`` each, unit length).

    ``must`` / ``cannot`` are article-id pairs a person said are / are not one story: they
    win over every signal. ``multilingual``: a multilingual model's vectors of the same items,
    which compare a pair with non-English text (else shared Latin names do).
    """
    if not items:
        return Clustering([])
    groups, exact_links = exact_groups(items)
    duplicates = [Duplicate(items[i].article_id, items[j].article_id, reason) for i, j, reason in exact_links]
    heads = [min(members, key=lambda i: _order_key(items[i])) for members in groups]
    group_index = {heads[g]: g for g in range(len(heads))}
    found = evidence_index([items[h] for h in heads])
    sims = vectors[heads] @ vectors[heads].T if len(heads) else np.zeros((0, 0))
    cross = multilingual[heads] @ multilingual[heads].T if multilingual is not None and len(heads) else None
    pairs = _HeadPairs([items[h] for h in heads], sims, cross, found, policy)
    candidates, borderline = [], []
    # the pairs that may link or be borderline (every pair when people linked or parted some);
    # whether another pair is forbidden is asked only when a link would join it (``apart``)
    if must or cannot:
        looked = [(x, y) for x in range(len(heads)) for y in range(x + 1, len(heads))]
    else:
        threshold = min(policy.near_duplicate_threshold - margin, policy.near_duplicate_threshold)
        looked = linkable(pairs.items, pairs.items, sims, cross, found, policy, threshold, upper=True)
    for x, y in looked:
        said = _said(groups[group_index[heads[x]]], groups[group_index[heads[y]]], items, must, cannot)
        if said is not None:
            pairs.said((x, y), said)
            if said:
                candidates.append((2.0, x, y))
            continue
        link, score, borderline_pair = pairs.look(x, y, margin)
        if link:
            candidates.append((score, x, y))
        elif borderline_pair:
            borderline.append((pairs.items[x].article_id, pairs.items[y].article_id, round(score, 4)))
    members = {g: {g} for g in range(len(heads))}
    owner = list(range(len(heads)))
    scores: dict[int, list[tuple[str, str, float]]] = {}
    for score, x, y in sorted(candidates, key=lambda c: (-c[0], c[1], c[2])):
        a, b = owner[x], owner[y]
        if a == b or any(pairs.apart((min(p, q), max(p, q))) for p in members[a] for q in members[b]):
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
