"""The labelled days of story identity, read from the shared data folder as a run would collect them.

A day is the articles of its snapshots published on it or the two days before (UTC), collected by
the real collect step (a digest split into one article per story by its kind), and what the
hand labels say of each: its labelled entry (a digest's articles share their entry), the entry's
story, whether it is a digest and which stories it covers, and whether the labels call a pair of
it uncertain. Three formats (``labels/README.md``): ``aiweb-<day>.json`` (the AI world's 14
feeds), ``tech-<day>.json`` (four tech outlets of July 2025) and ``stories-<day>.json`` (the
August 2025 days and the story-only days, with their cross-day links).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import numpy as np

from storage.payloads import ArticleCollectedV4
from storage.typed import payload_of
from tasks.collect import Source
from tasks.dedup import Item, in_window
from tasks.steps.collect import collect_source

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
TECH_SOURCES = {
    "arstechnica": ("news", None),
    "techcrunch": ("news", None),
    "wired": ("news", None),
    "tweakers": ("news", None),
}
LAB_KINDS = {"openai_research": "lab", "anthropic_news": "lab", "openai_news": "lab", "google_ai_blog": "lab",
             "deepmind_blog": "lab", "microsoft_ai_blog": "lab"}  # fmt: skip
# an annotator's note about grouping (not about relevance or importance): the pairs of its item are uncertain
STORY_NOTE = re.compile(
    r"\b(?:group\w*|same|separate\w*|split\w*|follow-up|kept|cover\w*|merge\w*)\b", re.IGNORECASE
)


@dataclass(frozen=True)
class Entry:
    """What the labels say of one labelled entry (a digest's articles share theirs)."""

    id: str
    story: str
    digest: bool = False
    covers: frozenset[str] = frozenset()
    noted: bool = False  # its annotator noted the grouping as a close call


@dataclass
class LabelledDay:
    day: str
    mix: str  # "aiweb", "tech" or "story-only"
    items: list[Item]
    entry: dict[str, Entry | None]  # article id -> its entry; None: not labelled
    uncertain: frozenset[frozenset[str]] = frozenset()  # entry id pairs the labels call uncertain
    previous: dict[str, str] = field(default_factory=dict)  # story -> the previous day's story it continues
    previous_uncertain: frozenset[tuple[str, str]] = frozenset()
    vectors: np.ndarray | None = None  # the English model's, one row per item
    multilingual: np.ndarray | None = None  # the multilingual model's, on a day with other text

    @property
    def links(self) -> dict[str, str]:
        """Article id -> its entry id (the link the labels use)."""
        return {a: e.id for a, e in self.entry.items() if e is not None}

    def uncertain_pair(self, a: Entry, b: Entry) -> bool:
        """The labels call the pair uncertain: listed so, or one of them noted as a close call of grouping."""
        return a.noted or b.noted or frozenset((a.id, b.id)) in self.uncertain


def mix_of(day: str) -> str:
    if day.startswith("2026-"):
        return "aiweb"
    if day in ("2025-07-09", "2025-07-23", "2025-07-30", "2025-08-05", "2025-08-06", "2025-08-07"):
        return "tech"
    return "story-only"


def _window(day: str) -> tuple[datetime, datetime]:
    first = date.fromisoformat(day) - timedelta(days=2)
    start = datetime(first.year, first.month, first.day, tzinfo=UTC)
    return start, start + timedelta(days=3)


def _collected(folder: Path, name: str, kind: str, language: str | None, day: str) -> Iterator[Item]:
    if not (folder / name / f"{day}.xml").is_file():
        return
    source = Source(name, (folder / name).as_uri() + "/{date}.xml", language, kind)
    window = _window(day)
    for event in collect_source(source, date.fromisoformat(day), "labels"):
        if event.event_type != "article.collected":
            continue
        article = payload_of(event, ArticleCollectedV4)
        published = article.published_at.astimezone(UTC) if article.published_at else None
        if in_window(published, window):
            yield as_item(article, published)


def as_item(p: ArticleCollectedV4, published: datetime | None) -> Item:
    return Item(
        p.article_id,
        p.source,
        p.title,
        p.summary,
        p.canonical_url,
        p.content_hash,
        published,
        p.language,
        p.url,
        tuple(p.tags),
        p.kind or "news",
        p.outlet,
        p.discussion_url,
        tuple(sorted(p.evidence.model_dump(exclude_none=True).items())) if p.evidence else (),
    )


def feeds_folder(data: Path, sources: Iterable[str], day: str, usual: Path) -> Path:
    """Where ``day``'s snapshots of ``sources`` are: ``usual`` when it holds one of them, else the
    ``<data>/<folder>/feeds`` that holds the most (another month laid out beside the others)."""
    names = list(sources)

    def held(folder: Path) -> int:
        return sum((folder / name / f"{day}.xml").is_file() for name in names)

    if held(usual):
        return usual
    found = max([*sorted(data.glob("*/feeds")), data / "feeds"], key=held)
    return found if held(found) else usual


def load_day(data: Path, day: str) -> LabelledDay:
    labels = data / "labels"
    if (labels / f"aiweb-{day}.json").is_file() or (labels / f"tech-{day}.json").is_file():
        aiweb = (labels / f"aiweb-{day}.json").is_file()
        mix = "aiweb" if aiweb else "tech"  # the file's kind: a day no list here names too
        rows = json.loads((labels / f"{'aiweb' if aiweb else 'tech'}-{day}.json").read_text())
        by_link = {
            r["id"]: Entry(
                r["id"],
                r["story"],
                bool(r.get("digest")),
                frozenset(r.get("covers") or ()),
                bool(STORY_NOTE.search(r.get("uncertain") or "")),
            )
            for r in rows
        }
        usual, sources = (
            (data / "aiweb" / "feeds", AIWEB_SOURCES) if aiweb else (data / "month" / "feeds", TECH_SOURCES)
        )
        folder = feeds_folder(data, sources, day, usual)
        items, entry = [], {}
        for name, (kind, language) in sources.items():
            for item in _collected(folder, name, kind, language, day):
                link = item.url.split("#")[0] if kind == "digest" else item.url
                items.append(item)
                entry[item.article_id] = by_link.get(link)
        return LabelledDay(day, mix, items, entry)
    mix = mix_of(day)
    body = json.loads((labels / f"stories-{day}.json").read_text())
    story_of = {link: s["story"] for s in body["stories"] for link in s["items"]}
    items, entry = [], {}
    names = sorted({i["source"] for i in body["items"]})
    folder = feeds_folder(data, names, day, data / "feeds")
    for name in names:
        # a feed of the AI world alone (a digest, trending repositories, papers) as the guide configures it
        alone = name in AIWEB_SOURCES and name not in LAB_KINDS and name not in TECH_SOURCES
        kind, language = AIWEB_SOURCES[name] if alone else (LAB_KINDS.get(name, "news"), None)
        for item in _collected(folder, name, kind, language, day):
            items.append(item)
            story = story_of.get(item.url)
            entry[item.article_id] = None if story is None else Entry(item.url, story)
    uncertain = frozenset(frozenset((u["a"], u["b"])) for u in body.get("uncertain", []))
    previous = {link["story"]: link["previous_story"] for link in body.get("same_as_previous_day", [])}
    doubtful = frozenset((u["story"], u["previous_story"]) for u in body.get("uncertain_previous_day", []))
    return LabelledDay(day, mix, items, entry, uncertain, previous, doubtful)


def with_vectors(day: LabelledDay, english, multilingual) -> LabelledDay:
    """The day with the run's vectors: the English model's for every item, the multilingual model's
    on a day with non-English text (as the dedup step computes them)."""
    from tasks.dedup import is_non_english

    texts = [i.text for i in day.items]
    other = (
        multilingual.encode(texts)
        if multilingual is not None and any(is_non_english(i) for i in day.items)
        else None
    )
    return replace(day, vectors=english.encode(texts), multilingual=other)
