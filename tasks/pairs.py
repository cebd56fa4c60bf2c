"""Story identity learnt: a pair model over what two reports share, and clustering by its probabilities.

A pair of articles is described by the features ``FEATURES`` names (the run's own vectors'
cosines, what the titles and links share, who reported them, when, and what kind of page each
is); a logistic regression fitted on the labelled pairs (``ops/pairs.py``) gives the probability
that they report one event. Stories are made by average linkage over those probabilities: two
groups join while the mean probability of their pairs reaches the model's threshold and no pair
across them is under ``FLOOR``, so one strong link between two events is not enough to chain
them, nor is a group's strength enough to pull in an article the model all but rules out with
one of its members. Three hard constraints, each never wrong on the labels: two stories of one digest
entry are never joined, nor are two pages of one organisation's own site under different titles
(``first_party_pages``: its release, its system card and its next release are each an announcement
of their own), nor two titles naming one product line at two versions (``two_versions``). One
hard join (``always_together``): a trending repository and a page of its project that names it.
People's same-story and two-stories answers win over the model.

The same probability decides whether a story of today continues a story briefed on an earlier
day (``follow_up``). The model ships as a JSON artefact with its card under ``tasks/models/``
(``stories.pairs.json``); a policy names it (``story_model``), ``rules`` keeps the threshold and
hand rules of ``tasks/dedup.py``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

from storage.errors import ConfigError
from tasks import dedup, names

MODELS_DIR = Path(__file__).resolve().parent / "models"
FEATURES = (
    "cosine",  # the run's cosine: English model's, or the multilingual model's for other text
    "cosine_english",  # the English model's, whatever the text
    "cosine_squared",
    "non_english",
    "cosine_non_english",
    "title_overlap",  # Jaccard of the titles' words (characters pairs for CJK)
    "rare_title_words",  # cosine of the titles' words weighted by how rare each is among the items
    "rare_text_words",  # … of title and summary
    "shared_names",
    "shared_versions",
    "distinct_names",
    "unmatched_names",  # names the title with fewer of them names and the other article never mentions
    "organisation_conflict",
    "same_link",
    "same_title",
    "same_project",
    "unnamed_repository",
    "same_outlet",
    "cosine_same_outlet",
    "rare_title_same_outlet",
    "outlet_series_words",  # title words both share that only their outlet uses, in 3+ of its titles
    "own_story",
    "days_apart",
    "same_outlet_same_moment",  # one outlet's two pages published within SAME_MOMENT of each other
    "same_outlet_minutes_apart",  # … further apart than that, but within SCHEDULED
    "digest",
    "community",
    "repository",
    "paper",
    "first_party",
    "same_kind",
)
# a pair under this probability keeps its two groups apart, however strongly the rest of them link:
# average linkage alone lets a group of sure pairs pull in an article the model all but rules out
FLOOR = 0.05
# an outlet's word in this many of its titles, and in no other outlet's, marks a recurring series
SERIES_TITLES = 3
# one outlet's pages of one event come out together (an embargo lifts) or hours later (a follow-up);
# pages minutes apart are its queue of scheduled pages (seconds)
SAME_MOMENT = 120.0
SCHEDULED = 1800.0
# sites where anyone publishes (a repository, a model page, a video, a post): their pages are their
# users', not announcements of the organisation whose site it is
PLATFORMS = frozenset(
    {"github", "hugging face", "youtube", "reddit", "linkedin", "instagram", "tiktok", "spotify"}
)
_CJK = re.compile(r"[\u3400-\u9fff]")
_WORDS = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class PairModel:
    """A fitted pair model: weights per feature, and the probability from which a pair is one story."""

    name: str
    features: tuple[str, ...]
    coef: tuple[float, ...]
    intercept: float
    threshold: float
    card: dict

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        z = x @ np.asarray(self.coef) + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def to_json(self) -> str:
        body = {
            "name": self.name,
            "kind": "pairs",
            "features": list(self.features),
            "coef": [round(c, 6) for c in self.coef],
            "intercept": round(self.intercept, 6),
            "threshold": round(self.threshold, 4),
            "card": self.card,
        }
        return json.dumps(body, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, where: str = "pair model") -> PairModel:
        try:
            body = json.loads(text)
            model = cls(
                body["name"],
                tuple(body["features"]),
                tuple(float(c) for c in body["coef"]),
                float(body["intercept"]),
                float(body["threshold"]),
                body.get("card", {}),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{where}: not a pair model ({exc.__class__.__name__}: {exc})") from None
        if len(model.coef) != len(model.features):
            raise ConfigError(f"{where}: {len(model.features)} features but {len(model.coef)} weights")
        return model.upcast(where)

    def upcast(self, where: str = "pair model") -> PairModel:
        """The model in this version's features: one fitted before a feature was added weighs it 0, so it
        decides exactly as it did; a feature this version does not know is refused (a newer model)."""
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ConfigError(
                f"{where}: features this version does not compute ({', '.join(unknown)}); "
                "refit it with 'brief learn', or use builtin:stories or 'rules'"
            )
        if self.features == FEATURES:
            return self
        weight = dict(zip(self.features, self.coef, strict=True))
        return replace(self, features=FEATURES, coef=tuple(weight.get(f, 0.0) for f in FEATURES))


def pair_model_file(ref: str) -> Path | None:
    """The file a policy's ``story_model`` names (None for ``rules``); ``builtin:<name>@<file>`` is
    the shipped model as a policy adopted it, read from the store's copy (``ops.policy``)."""
    if ref == "rules":
        return None
    if ref.startswith("builtin:"):
        name, _, kept = ref.removeprefix("builtin:").partition("@")
        return Path(kept) if kept else MODELS_DIR / f"{name}.pairs.json"
    return Path(ref).expanduser()


def fits(model: PairModel, english: str, multilingual: str | None) -> bool:
    """Whether ``model`` decides under these embedding models: its cosine weights are those of the
    models its card names, the multilingual one included (without it a non-English pair's cosine
    would be the English model's); a card that names none (fitted before cards did) fits any."""
    named = model.card.get("embedding") or {}
    if named.get("english") and named["english"] != english:
        return False
    return not (named.get("multilingual") and named["multilingual"] != multilingual)


def load_pair_model(ref: str) -> PairModel | None:
    """The pair model a policy names: ``builtin:<name>``, a JSON file, or None for ``rules``."""
    path = pair_model_file(ref)
    if path is None:
        return None
    try:
        stat = path.stat()
    except OSError:
        raise ConfigError(
            f"story model {ref!r}: no such file; use builtin:stories, 'rules' or a file"
        ) from None
    return _load(str(path), stat.st_mtime_ns)


@functools.lru_cache(maxsize=16)
def _load(path: str, mtime_ns: int) -> PairModel:
    return PairModel.from_json(Path(path).read_text(), f"story model {path!r}")


def pair_model_digest(ref: str) -> str:
    path = pair_model_file(ref)
    if path is None:
        return "rules"
    try:
        return hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
    except OSError:
        return f"missing:{ref}"


# -- features ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=1 << 14)
def title_words(title: str) -> frozenset[str]:
    """The title's words as ``names.fold`` writes them; CJK runs as pairs of characters."""
    text = unicodedata.normalize("NFKC", title)
    out: set[str] = set()
    for word in _WORDS.findall(text):
        if _CJK.search(word):
            latin = re.split(r"[\u3400-\u9fff]+", word)
            out.update(names.fold(w) for w in latin if len(names.fold(w)) >= 2)
            runs = re.findall(r"[\u3400-\u9fff]+", word)
            out.update(r[i : i + 2] for r in runs for i in range(max(len(r) - 1, 1)))
        else:
            key = names.fold(word)
            if len(key) >= 2 and key not in names.COMMON:
                out.add(key)
    return frozenset(out)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def pair_features(
    a: dedup.Item,
    b: dedup.Item,
    ea: dedup.Evidence,
    eb: dedup.Evidence,
    cosine_english: float,
    multilingual: float | None,
    rare: tuple[float, float] = (0.0, 0.0),
    series: int = 0,
) -> list[float]:
    """One row of ``FEATURES`` for a pair of articles (their evidence computed once each; ``rare``:
    the cosines of their titles' and texts' words weighted by rarity among the items compared;
    ``series``: how many of the title words they share are ``series_words`` of their outlet)."""
    non_english = dedup.is_non_english(a) or dedup.is_non_english(b)
    cosine = multilingual if non_english and multilingual is not None else cosine_english
    repository = ea.project is not None or eb.project is not None
    same_outlet = ea.outlet == eb.outlet
    shared_versions = len(ea.versions & eb.text_versions) + len(eb.versions & ea.text_versions)
    hours = (
        abs((a.published_at - b.published_at).total_seconds()) / 86400
        if a.published_at is not None and b.published_at is not None
        else 1.0
    )
    kinds = {a.kind, b.kind}
    seconds = (
        abs((a.published_at - b.published_at).total_seconds())
        if a.published_at is not None and b.published_at is not None
        else None
    )
    return [
        cosine,
        cosine_english,
        cosine * cosine,
        float(non_english),
        cosine * non_english,
        _jaccard(title_words(a.title), title_words(b.title)),
        rare[0],
        rare[1],
        float(min(len(ea.names & eb.names), 3)),
        float(min(shared_versions, 2)),
        float(dedup.distinct_names(ea, eb)),
        float(min(_unmatched(ea, eb), _unmatched(eb, ea), 3)),
        float(dedup.organisation_conflict(link_told(a, ea), link_told(b, eb), without_case=non_english)),
        float(dedup.same_link(ea, eb)),
        float(bool(ea.title_key) and ea.title_key == eb.title_key and a.source != b.source),
        float(repository and dedup.same_project(a, b, ea, eb)),
        float(repository and dedup.unnamed_repository(a, b, ea, eb)),
        float(same_outlet),
        cosine * same_outlet,
        rare[0] * same_outlet,
        float(min(series, 2)),
        float(ea.own_story or eb.own_story),
        min(hours, 3.0),
        float(same_outlet and seconds is not None and seconds <= SAME_MOMENT),
        float(same_outlet and seconds is not None and SAME_MOMENT < seconds <= SCHEDULED),
        float("digest" in kinds),
        float("community" in kinds),
        float("repos" in kinds),
        float("papers" in kinds),
        float("lab" in kinds),
        float(a.kind == b.kind),
    ]


def _unmatched(x: dedup.Evidence, y: dedup.Evidence) -> int:
    """How many of x's title names and versions y's title and summary never mention."""
    return sum(n not in y.folded for n in x.names) + len(x.versions - y.text_versions)


def link_told(item: dedup.Item, found: dedup.Evidence) -> dedup.Evidence:
    """The article's evidence with the organisations its link's path names (a headline's words, as
    ``/openai-announces-deal-…``) among those its text mentions: a page whose summary leaves out the
    company its headline once named does not name another organisation than a report that names it."""
    told = frozenset() if item.kind == "digest" else names.path_organisations(item.canonical_url or item.url)
    if not told:
        return found
    return replace(
        found,
        text_orgs=found.text_orgs | told,
        caseblind_orgs=found.caseblind_orgs | {o.lower() for o in told},
    )


def _host(item: dedup.Item) -> str:
    return (urlsplit(item.url or item.canonical_url).hostname or "").lower().removeprefix("www.")


def first_party(item: dedup.Item) -> bool:
    """A page of an organisation's own site: a lab's feed, or a link on a known organisation's site
    (not a repository, a digest, nor a site where anyone publishes, ``PLATFORMS``)."""
    if item.kind == "lab":
        return True
    if item.kind in {"repos", "digest"}:
        return False
    owners = names.host_organisations(item.url or item.canonical_url)
    return bool(owners) and not owners & PLATFORMS


def first_party_pages(a: dedup.Item, b: dedup.Item, ea: dedup.Evidence, eb: dedup.Evidence) -> bool:
    """Two pages of one organisation's own site under two titles: two announcements of its own (a
    release and its system card, two products); the same page, or one title on two pages, is one."""
    return (
        first_party(a)
        and first_party(b)
        and _host(a) == _host(b)
        and ea.link[0] != eb.link[0]
        and ea.title_key != eb.title_key
    )


def always_together(a: dedup.Item, b: dedup.Item, ea: dedup.Evidence, eb: dedup.Evidence) -> bool:
    """The one join the model does not weigh: a trending repository and a page of its project that
    names it (``dedup.same_project``: its site, or a page of the repository). On the labelled days
    4 of 5 such pairs are one story and the fifth is one the labels call uncertain; the project's
    page often says what the repository is only by its name."""
    return dedup.same_project(a, b, ea, eb)


def two_versions(ea: dedup.Evidence, eb: dedup.Evidence) -> bool:
    """Two titles name one product line at two versions (``RTX 5060``, ``RTX 50 Super``), and neither
    article names the other's: one product line at two versions is two products."""

    def by_line(found: frozenset[tuple[str, str]]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for line, version in found:
            out.setdefault(line, set()).add(names.release(version))
        return out

    title_a, title_b = by_line(ea.versions), by_line(eb.versions)
    text_a, text_b = by_line(ea.text_versions), by_line(eb.text_versions)
    return any(
        not title_a[line] & text_b.get(line, set()) and not title_b[line] & text_a.get(line, set())
        for line in title_a.keys() & title_b.keys()
    )


def distinct_releases(ea: dedup.Evidence, eb: dedup.Evidence) -> bool:
    """``dedup.distinct_names`` with each version read as its release (``Firefox 141.0`` names
    ``Firefox 141``): each title names something the other article never mentions."""
    return dedup.distinct_names(ea, eb, releases=True)


def another_project(a: dedup.Item, b: dedup.Item, ea: dedup.Evidence, eb: dedup.Evidence) -> bool:
    """A trending repository and a report that is not of its project (``always_together`` does not
    hold): a repository is the story of its project alone. A digest's line is not held to it (it
    may tell the project's news in words of its own). On the 16 labelled days every other report
    that is one story with a repository is a page of its project that names it (3 of 3)."""
    kinds = {a.kind, b.kind}
    return (
        "repos" in kinds and len(kinds) == 2 and "digest" not in kinds and not always_together(a, b, ea, eb)
    )


def never_together(a: dedup.Item, b: dedup.Item, ea: dedup.Evidence, eb: dedup.Evidence) -> bool:
    """The hard constraints: two stories of one digest entry are two stories, and so are two pages
    of one organisation's own site under two titles (``first_party_pages``), two titles naming one
    product line at two versions (``two_versions``) and a repository and a report of another project
    (``another_project``)."""
    return (
        (a.kind == "digest" and b.kind == "digest" and ea.entry == eb.entry)
        or first_party_pages(a, b, ea, eb)
        or two_versions(ea, eb)
        or another_project(a, b, ea, eb)
    )


def rare_words(
    items: Sequence[dedup.Item], rows: np.ndarray | None = None, columns: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Cosines between the items of their titles' words and of their texts' words, each word weighted
    by its inverse document frequency among ``items`` (a name few of them use weighs most): of the
    items ``rows`` with the items ``columns`` (indices), every item with every other by default."""
    titles = [title_words(i.title) for i in items]
    texts = [t | title_words(i.summary[:300]) for t, i in zip(titles, items, strict=True)]
    return _idf_cosines(titles, rows, columns), _idf_cosines(texts, rows, columns)


def _idf_cosines(
    bags: list[frozenset[str]], rows: np.ndarray | None = None, columns: np.ndarray | None = None
) -> np.ndarray:
    vocabulary: dict[str, int] = {}
    for bag in bags:
        for word in bag:
            vocabulary.setdefault(word, len(vocabulary))
    matrix = np.zeros((len(bags), max(len(vocabulary), 1)))
    for row, bag in enumerate(bags):
        matrix[row, [vocabulary[w] for w in bag]] = 1.0
    df = matrix.sum(axis=0)
    matrix *= np.log((len(bags) + 1) / (df + 1)) + 1.0
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    if rows is None or columns is None:
        return matrix @ matrix.T
    return matrix[rows] @ matrix[columns].T


def series_words(items: Sequence[dedup.Item]) -> list[frozenset[str]]:
    """Per item, its title's words that only its outlet uses among ``items``, in at least
    ``SERIES_TITLES`` of that outlet's titles: the words of an outlet's recurring pages (its own
    events, its coupon or deals pages), which two of its pages share whatever each is about."""
    found = [dedup.evidence(i) for i in items]
    words = [title_words(i.title) for i in items]
    uses: dict[str, dict[str, int]] = {}
    for e, bag in zip(found, words, strict=True):
        for word in bag:
            per_outlet = uses.setdefault(word, {})
            per_outlet[e.outlet] = per_outlet.get(e.outlet, 0) + 1
    return [
        frozenset(w for w in bag if len(uses[w]) == 1 and uses[w][e.outlet] >= SERIES_TITLES)
        for e, bag in zip(found, words, strict=True)
    ]


def _codes(values: Sequence[str]) -> np.ndarray:
    """One integer per distinct value: equal values, equal codes."""
    seen: dict[str, int] = {}
    return np.array([seen.setdefault(v, len(seen)) for v in values], dtype=int)


def _shared(xs: Sequence[frozenset], ys: Sequence[frozenset] | None = None) -> np.ndarray:
    """How many members each x has in common with each y: for each member of x, one more for every y
    that holds it (most members are in few bags, so this counts far less than a product of 0/1
    matrices would)."""
    ys = xs if ys is None else ys
    holders: dict = {}
    for row, bag in enumerate(ys):
        for member in bag:
            holders.setdefault(member, []).append(row)
    rows = {member: np.array(found) for member, found in holders.items()}
    out = np.zeros((len(xs), len(ys)))
    for row, bag in enumerate(xs):
        for member in bag:
            if member in rows:
                out[row, rows[member]] += 1.0
    return out


@dataclass(frozen=True)
class _Pairs:
    """The pairs whose features are computed: ``left[k]`` and ``right[k]`` index the k-th pair's items.

    When no item is on both sides (a day's new articles against the earlier ones), what two
    articles share is counted for the ``rows`` (every left item) against the ``columns`` (every
    right item) only; else (``rows`` None) every item against every item."""

    items: Sequence[dedup.Item]
    found: list[dedup.Evidence]
    left: np.ndarray
    right: np.ndarray
    rows: np.ndarray | None = None
    columns: np.ndarray | None = None

    @property
    def at(self) -> tuple[np.ndarray, np.ndarray]:
        """Each pair's row and column in a rows-by-columns matrix."""
        if self.rows is None or self.columns is None:
            return self.left, self.right
        return np.searchsorted(self.rows, self.left), np.searchsorted(self.columns, self.right)

    def sides(self, values: Sequence) -> tuple[list, list]:
        """``values`` (one per item) of the rows and of the columns."""
        if self.rows is None or self.columns is None:
            return list(values), list(values)
        return [values[int(i)] for i in self.rows], [values[int(j)] for j in self.columns]

    def both(self, values: Sequence[bool] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        flags = np.asarray(values, dtype=bool)
        return flags[self.left], flags[self.right]

    def equal(self, values: Sequence[str]) -> np.ndarray:
        codes = _codes(values)
        return codes[self.left] == codes[self.right]


def _cosine_columns(
    p: _Pairs, english: np.ndarray, multilingual: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the run's cosine, the English model's, whether either text is not English) per pair."""
    x, y = p.both([dedup.is_non_english(i) for i in p.items])
    non_english = x | y
    cosine_english = english[p.left, p.right]
    if multilingual is None:
        return cosine_english, cosine_english, non_english
    return np.where(non_english, multilingual[p.left, p.right], cosine_english), cosine_english, non_english


def _title_overlap(p: _Pairs) -> np.ndarray:
    """Jaccard of the titles' words."""
    words = [title_words(i.title) for i in p.items]
    row, column = p.at
    common = _shared(*p.sides(words))[row, column]
    sizes = np.array([len(w) for w in words], dtype=float)
    union = sizes[p.left] + sizes[p.right] - common
    return np.divide(common, union, out=np.zeros(len(p.left)), where=union > 0)


def _unmatched_matrix(
    xs: Sequence[dedup.Evidence], ys: Sequence[dedup.Evidence]
) -> tuple[np.ndarray, np.ndarray]:
    """(how many of x's title versions y's text names, how many of x's title names and versions y's
    text never mentions) for each x and y."""
    in_text = _shared([e.versions for e in xs], [e.text_versions for e in ys])
    unmatched = np.array([[len(e.versions)] * len(ys) for e in xs], dtype=float) - in_text
    return in_text, unmatched + _names_missing(xs, ys)


def _names_missing(xs: Sequence[dedup.Evidence], ys: Sequence[dedup.Evidence]) -> np.ndarray:
    """How many of x's title names y's text never mentions, for each x and y (each name looked for
    once: names recur)."""
    out = np.zeros((len(xs), len(ys)))
    missing: dict[str, np.ndarray] = {}  # a name -> the articles that never mention it
    for x, e in enumerate(xs):
        for name in e.names:
            if name not in missing:
                missing[name] = np.array([name not in f.folded for f in ys], dtype=float)
            out[x] += missing[name]
    return out


def _name_columns(p: _Pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(shared names, shared versions, distinct names, unmatched names) per pair."""
    row, column = p.at
    xs, ys = p.sides(p.found)
    names_shared = _shared([e.names for e in xs], [e.names for e in ys])[row, column]
    in_text, unmatched = _unmatched_matrix(xs, ys)
    back_in_text, back_unmatched = (in_text, unmatched) if p.rows is None else _unmatched_matrix(ys, xs)
    versions_shared = in_text[row, column] + back_in_text[column, row]
    there, back = unmatched[row, column], back_unmatched[column, row]  # x's unmatched in y, y's in x
    distinct = (there > 0) & (back > 0)
    fewest = np.minimum(np.minimum(there, back), 3)
    return np.minimum(names_shared, 3), np.minimum(versions_shared, 2), distinct, fewest


def _organisation_conflict(p: _Pairs, non_english: np.ndarray) -> np.ndarray:
    """``dedup.organisation_conflict`` per pair, each text with the organisations its link's path
    names (``link_told``): without case when either text is not English."""
    found, left, right = p.found, p.left, p.right
    told = [link_told(i, e) for i, e in zip(p.items, found, strict=True)]
    title_orgs = [e.title_orgs for e in found]
    cased = _shared(title_orgs, [e.text_orgs for e in told])
    lowered = [frozenset(o.lower() for o in t) for t in title_orgs]
    caseblind = _shared(lowered, [e.caseblind_orgs for e in told])
    count_cased = np.array([len(t) for t in title_orgs], dtype=float)
    count_lowered = np.array([len(t) for t in lowered], dtype=float)
    conflict_cased = (count_cased[left] > cased[left, right]) | (count_cased[right] > cased[right, left])
    conflict_caseblind = (count_lowered[left] > caseblind[left, right]) | (
        count_lowered[right] > caseblind[right, left]
    )
    return np.where(non_english, conflict_caseblind, conflict_cased)


def _page_columns(p: _Pairs) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(same link, same title in two sources, a repository and its project's page, a repository the
    other never names) per pair."""
    items, found, left, right = p.items, p.found, p.left, p.right
    same_link = np.zeros(len(left), dtype=bool)
    for k in np.flatnonzero(p.equal([e.link[0] for e in found])):
        same_link[k] = dedup.same_link(found[int(left[k])], found[int(right[k])])
    has_key, _ = p.both([bool(e.title_key) for e in found])
    same_title = has_key & p.equal([e.title_key for e in found]) & ~p.equal([i.source for i in items])
    x_repository, y_repository = p.both([e.project is not None for e in found])
    same_project = np.zeros(len(left), dtype=bool)
    unnamed = np.zeros(len(left), dtype=bool)
    for k in np.flatnonzero(x_repository | y_repository):
        x, y = int(left[k]), int(right[k])
        same_project[k] = dedup.same_project(items[x], items[y], found[x], found[y])
        unnamed[k] = dedup.unnamed_repository(items[x], items[y], found[x], found[y])
    return same_link, same_title, same_project, unnamed


def _time_columns(p: _Pairs, same_outlet: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(days between the two publications, at most 3 (1 when either has no date); one outlet's two
    pages at one moment; one outlet's two pages minutes apart) per pair."""
    stamps = np.array([i.published_at.timestamp() if i.published_at else np.nan for i in p.items])
    seconds = np.abs(stamps[p.left] - stamps[p.right])
    dated = ~np.isnan(seconds)
    apart = np.where(dated, np.minimum(seconds / 86400, 3.0), 1.0)
    moment = same_outlet & dated & (np.nan_to_num(seconds, nan=np.inf) <= SAME_MOMENT)
    queued = same_outlet & dated & (seconds > SAME_MOMENT) & (np.nan_to_num(seconds, nan=np.inf) <= SCHEDULED)
    return apart, moment, queued


def _kind_columns(p: _Pairs) -> list[np.ndarray]:
    """Whether either is a digest, a community link, a repository, a paper, a lab's page; one kind."""
    kinds = [i.kind for i in p.items]
    out = []
    for kind in ("digest", "community", "repos", "papers", "lab"):
        x, y = p.both([k == kind for k in kinds])
        out.append(x | y)
    return [*out, p.equal(kinds)]


def feature_rows(
    items: Sequence[dedup.Item],
    english: np.ndarray,
    multilingual: np.ndarray | None,
    index_pairs: Sequence[tuple[int, int]],
) -> np.ndarray:
    """``FEATURES`` rows of the given pairs of ``items`` (``english``/``multilingual``: their cosines).

    What ``pair_features`` gives pair by pair, computed for all the pairs at once: the sets the
    features compare become 0/1 matrices whose products count what two articles share."""
    return feature_rows_at(
        items,
        english,
        multilingual,
        np.fromiter((x for x, _ in index_pairs), dtype=int, count=len(index_pairs)),
        np.fromiter((y for _, y in index_pairs), dtype=int, count=len(index_pairs)),
    )


def feature_rows_at(
    items: Sequence[dedup.Item],
    english: np.ndarray,
    multilingual: np.ndarray | None,
    left: np.ndarray,
    right: np.ndarray,
) -> np.ndarray:
    """``feature_rows`` of the pairs ``(left[k], right[k])``."""
    if not len(left):
        return np.zeros((0, len(FEATURES)))
    rows, columns = np.unique(left), np.unique(right)
    apart = not np.intersect1d(rows, columns).size  # no item on both sides: count rows by columns
    p = _Pairs(
        items,
        [dedup.evidence(i) for i in items],
        left,
        right,
        rows if apart else None,
        columns if apart else None,
    )
    titles, texts = rare_words(items, p.rows, p.columns)
    at_row, at_column = p.at
    cosine, cosine_english, non_english = _cosine_columns(p, english, multilingual)
    same_outlet = p.equal([e.outlet for e in p.found])
    x_own, y_own = p.both([e.own_story for e in p.found])
    features = [
        cosine,
        cosine_english,
        cosine * cosine,
        non_english,
        cosine * non_english,
        _title_overlap(p),
        titles[at_row, at_column],
        texts[at_row, at_column],
        *_name_columns(p),
        _organisation_conflict(p, non_english),
        *_page_columns(p),
        same_outlet,
        cosine * same_outlet,
        titles[at_row, at_column] * same_outlet,
        np.minimum(_shared(*p.sides(series_words(items)))[at_row, at_column], 2),
        x_own | y_own,
        *_time_columns(p, same_outlet),
        *_kind_columns(p),
    ]
    return np.column_stack([np.asarray(c, dtype=float) for c in features])


def probability_matrix(
    items: Sequence[dedup.Item],
    vectors: np.ndarray,
    model: PairModel,
    multilingual: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(probabilities, forbidden) between every two of ``items`` (symmetric, zero diagonal)."""
    n = len(items)
    sims = vectors @ vectors.T if n else np.zeros((0, 0))
    cross = multilingual @ multilingual.T if multilingual is not None and n else None
    upper = np.triu_indices(n, 1)
    index_pairs = list(zip(upper[0].tolist(), upper[1].tolist(), strict=True))
    found = [dedup.evidence(i) for i in items]
    forbidden = np.zeros((n, n), dtype=bool)
    for group in (
        [x for x, i in enumerate(items) if i.kind == "digest"],
        [x for x, i in enumerate(items) if first_party(i)],
        [x for x in range(n) if found[x].versions],
    ):
        for k, x in enumerate(group):
            for y in group[k + 1 :]:
                if never_together(items[x], items[y], found[x], found[y]):
                    forbidden[x, y] = forbidden[y, x] = True
    for x in (x for x, i in enumerate(items) if i.kind == "repos"):
        for y in range(n):
            if another_project(items[x], items[y], found[x], found[y]):
                forbidden[x, y] = forbidden[y, x] = True
    probs = np.zeros((n, n))
    if index_pairs:
        p = model.probabilities(feature_rows(items, sims, cross, index_pairs))
        probs[upper] = p
        probs[(upper[1], upper[0])] = p
    for x in (x for x, i in enumerate(items) if found[x].project is not None):
        for y in range(n):
            if y != x and not forbidden[x, y] and always_together(items[x], items[y], found[x], found[y]):
                probs[x, y] = probs[y, x] = 1.0
    return probs, forbidden


# -- clustering --------------------------------------------------------------------------


def average_linkage(
    probs: np.ndarray, forbidden: np.ndarray, threshold: float, floor: float = 0.0
) -> tuple[list[list[int]], list[tuple[int, int, float]]]:
    """Groups of indices joined while the mean probability between two groups reaches ``threshold``,
    no pair across them is forbidden and none is under ``floor`` (a member the other group's
    articles all but rule out keeps the groups apart); returns the groups and, per join, its
    strongest pair."""
    n = len(probs)
    groups: dict[int, list[int]] = {i: [i] for i in range(n)}
    total = probs.astype(float).copy()  # sum of probabilities between two groups
    blocked = forbidden | (probs < floor)
    size = np.ones(n)
    alive = np.ones(n, dtype=bool)
    joins: list[tuple[int, int, float]] = []
    while True:
        mean = total / np.outer(size, size)
        mean[~alive, :] = -1.0
        mean[:, ~alive] = -1.0
        mean[blocked] = -1.0
        np.fill_diagonal(mean, -1.0)
        best = np.unravel_index(int(np.argmax(mean)), mean.shape)
        if mean[best] < threshold:
            break
        x, y = int(min(best)), int(max(best))
        members_x, members_y = groups[x], groups[y]
        sub = probs[np.ix_(members_x, members_y)]
        i, j = np.unravel_index(int(np.argmax(sub)), sub.shape)
        joins.append((members_x[int(i)], members_y[int(j)], float(mean[x, y])))
        groups[x] = members_x + groups.pop(y)
        total[x, :] += total[y, :]
        total[:, x] += total[:, y]
        blocked[x, :] |= blocked[y, :]
        blocked[:, x] |= blocked[:, y]
        size[x] += size[y]
        alive[y] = False
    return list(groups.values()), joins


def cluster(
    items: Sequence[dedup.Item],
    vectors: np.ndarray,
    model: PairModel,
    must: frozenset[frozenset[str]] = frozenset(),
    cannot: frozenset[frozenset[str]] = frozenset(),
    margin: float = 0.08,
    multilingual: np.ndarray | None = None,
) -> dedup.Clustering:
    """Stories among ``items`` by the pair model (``dedup.cluster``'s contract: one vector row per item,
    exact copies joined first, people's answers winning)."""
    if not items:
        return dedup.Clustering([])
    groups, exact_links = dedup.exact_groups(items)
    duplicates = [
        dedup.Duplicate(items[i].article_id, items[j].article_id, reason) for i, j, reason in exact_links
    ]
    heads = [min(members, key=lambda i: dedup._order_key(items[i])) for members in groups]
    head_items = [items[h] for h in heads]
    probs, forbidden = probability_matrix(
        head_items, vectors[heads], model, None if multilingual is None else multilingual[heads]
    )
    for x in range(len(heads)):
        for y in range(x + 1, len(heads)):
            said = dedup._said(groups[x], groups[y], items, must, cannot)
            if said is True:  # a person's answer wins over the hard constraints too
                probs[x, y] = probs[y, x] = 1.0
                forbidden[x, y] = forbidden[y, x] = False
            elif said is False:
                forbidden[x, y] = forbidden[y, x] = True
    joined, joins = average_linkage(probs, forbidden, model.threshold, FLOOR)
    root = {g: k for k, members in enumerate(joined) for g in members}
    scores: dict[int, list[tuple[str, str, float]]] = {}
    for x, y, p in joins:
        left, right = sorted((items[heads[x]].article_id, items[heads[y]].article_id))
        scores.setdefault(root[x], []).append((left, right, round(p, 4)))
    stories = []
    for k, members in enumerate(joined):
        indices = sorted((i for g in members for i in groups[g]), key=lambda i: dedup._order_key(items[i]))
        stories.append(
            dedup.Story(tuple(items[i].article_id for i in indices), tuple(sorted(scores.get(k, []))))
        )
    stories.sort(key=lambda s: s.representative)
    borderline = [
        (items[heads[x]].article_id, items[heads[y]].article_id, round(float(probs[x, y]), 4))
        for x in range(len(heads))
        for y in range(x + 1, len(heads))
        if root[x] != root[y]
        and not forbidden[x, y]
        and model.threshold - margin <= probs[x, y] < model.threshold
        and items[heads[x]].source != items[heads[y]].source
    ]
    return dedup.Clustering(stories, duplicates, sorted(borderline))


def follow_up_probabilities(
    new: Sequence[dedup.Item],
    earlier: Sequence[dedup.Item],
    english: np.ndarray,
    multilingual: np.ndarray | None,
    model: PairModel,
) -> np.ndarray:
    """How likely each of today's articles reports the event of each article briefed earlier
    (``english``/``multilingual``: the vectors of ``new`` then ``earlier``, one row each).

    Two hard constraints, whatever the model says. A trending repository never follows up, nor is
    followed up by, a report that is not of its project (``another_project``, as on one day). And a
    report never follows up an earlier one when each title names something (a product, a place, a
    version) the other article never mentions (``distinct_releases``): two events, as one company's
    lawsuit and its user count, or its two models. On the labelled days, of the 12,930 pairs published
    half a day or more apart whose titles so differ (versions compared as written), 2 are one story,
    both pairs the labels call uncertain (33 of the 35 pairs so far apart that are one story name
    nothing the other leaves out); read as releases (``141.0`` is ``141``), one of those two, Firefox
    141's, no longer differs."""
    both = [*new, *earlier]
    if not new or not earlier:
        return np.zeros((len(new), len(earlier)))
    left = np.repeat(np.arange(len(new)), len(earlier))  # every new article with every earlier one
    right = np.tile(np.arange(len(new), len(both)), len(new))
    sims = english @ english.T
    cross = None if multilingual is None else multilingual @ multilingual.T
    rows = feature_rows_at(both, sims, cross, left, right)
    out = model.probabilities(rows).reshape(len(new), len(earlier))
    found = [dedup.evidence(i) for i in both]
    projects = [k for k, e in enumerate(found) if e.project is not None]
    for h, o in {(h, o) for k in projects for h, o in _pairs_with(k, len(new), len(both))}:
        if always_together(both[h], both[o], found[h], found[o]):
            out[h, o - len(new)] = 1.0
    # two events: each title names what the other article never mentions
    out[distinct_release_matrix(found[: len(new)], found[len(new) :])] = 0.0
    # a repository and a report not of its project (the same-day rule)
    repositories = [k for k, i in enumerate(both) if i.kind == "repos"]
    for h, o in {(h, o) for k in repositories for h, o in _pairs_with(k, len(new), len(both))}:
        if another_project(both[h], both[o], found[h], found[o]):
            out[h, o - len(new)] = 0.0
    return out


def _pairs_with(k: int, new: int, both: int) -> list[tuple[int, int]]:
    """The (new, earlier) index pairs that hold article ``k`` (of ``new`` new articles, then earlier ones)."""
    return [(k, o) for o in range(new, both)] if k < new else [(h, k) for h in range(new)]


def distinct_release_matrix(xs: Sequence[dedup.Evidence], ys: Sequence[dedup.Evidence]) -> np.ndarray:
    """``distinct_releases`` of every x with every y, at once (names recur: each is looked for once)."""

    def unmatched(a: Sequence[dedup.Evidence], b: Sequence[dedup.Evidence]) -> np.ndarray:
        told = [names.releases(e.versions) for e in a]
        shared = _shared(told, [names.releases(f.text_versions) for f in b])
        return (_names_missing(a, b) > 0) | (np.array([len(t) for t in told], dtype=float)[:, None] > shared)

    return unmatched(xs, ys) & unmatched(ys, xs).T
