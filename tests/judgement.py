"""The editor's judgement measured on labelled days it never saw: leave one block of days out.

The 13 labelled days of ``../shared/data/labels`` come in two source mixes (``BLOCKS`` of
``tests/real_days.py``): the AI world's 14 feeds of March 2026, and English tech outlets
(TechCrunch, WIRED, Ars Technica, Tweakers in July 2025, and the outlets with two labs' feeds
in August 2025). ``bench/editorial.py`` and the CI guard (``tests/integration/
test_judgement_guard.py``) share what is here:

- ``FEED_SETS``: the sources each labelled day is collected from, its labels file and the days
  briefed before a block as a daily run would have briefed them (not scored);
- ``collect_base``: every briefed day collected once into a store that each fold copies;
- ``examples_of``: the labelled stories of every day, their evidence and vectors computed once;
- ``training_for``: a fold's training stories: no story of a held-out day, nor any story that
  shares a labelled item or a labelled story with one (neighbouring days share most items);
- ``brief_block`` and ``score_block``: the held-out days published by the real pipeline under
  a model and the brief as published scored against each day's own labels.
"""

from __future__ import annotations

import json
import math
import re
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from tests.real_days import BLOCKS, LAB_SOURCES, SEEN_DAYS, UNSEEN_GAP, aiweb_sources_toml, beside_seen

METRICS = ("precision", "top_core", "recall", "headline")
Block = tuple[str, ...]


@dataclass(frozen=True)
class FeedSet:
    """Sources of one archive, the labelled days collected from it and how each is scored."""

    name: str
    mix: str  # "aiweb" or "tech": the mix of ``BLOCKS`` its days belong to
    sources: tuple[dict, ...]  # ``[[sources]]`` entries
    days: tuple[date, ...]
    labels: str  # the labels file of a day: ``{day}`` is filled in
    whole_file: bool  # score every item of the day's file (else only the day's news window)
    warm_up: int  # days briefed before a block's first day, as a daily run would have

    def label_file(self, day: date) -> str:
        return self.labels.format(day=day.isoformat())

    def snapshots(self, day: date) -> list[Path]:
        """The file each source reads on ``day`` (its ``{date}`` URL as a path)."""
        from urllib.parse import urlparse
        from urllib.request import url2pathname

        return [
            Path(url2pathname(urlparse(s["url"]).path.replace("{date}", day.isoformat())))
            for s in self.sources
        ]

    def briefed(self, block: Sequence[date]) -> tuple[date, ...]:
        first = min(block)
        before = tuple(first - timedelta(days=k) for k in range(self.warm_up, 0, -1))
        return (*before, *sorted(block))


def _days(block: Block) -> tuple[date, ...]:
    return tuple(date.fromisoformat(d) for d in block)


def seen_labels(folder: Path):
    """The hand labels of ``folder`` (``ops.learn.read_labels``) that the labelled days here were
    fitted and tuned on: the files of those days (``SEEN_DAYS``) and the ``relevance-*.json`` files
    whose every item is on a snapshot of those days. A labels file of a day nobody here has seen
    (``unseen_blocks``) never reaches a fold or a shipped model, nor relabels a seen day's items (a
    spanning file's labels hold on every day, a later file's over an earlier one's)."""
    import tempfile

    from ops import learn

    def seen(path: Path) -> bool:
        named = _DAY_FILE.fullmatch(path.name)
        if named is not None:
            return named["day"] in SEEN_DAYS
        try:
            rows = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            return True  # read_labels says what is wrong with it
        return not isinstance(rows, list) or all(
            set(row.get("snapshots") or ()) <= SEEN_DAYS for row in rows if isinstance(row, dict)
        )

    with tempfile.TemporaryDirectory(prefix="seen-labels-") as tmp:
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            if seen(path):
                (Path(tmp) / path.name).symlink_to(path.resolve())
        return learn.read_labels(Path(tmp) if folder.is_dir() else folder)


_DAY_FILE = re.compile(r".+-(?P<day>\d{4}-\d{2}-\d{2})\.json")


def feed_sets(data: Path) -> list[FeedSet]:
    """The three archives of the labelled days, configured as a user would configure them."""
    import tomllib

    aiweb_days = tuple(d for b in BLOCKS["aiweb"] for d in _days(b))
    tech_days = tuple(d for b in BLOCKS["tech"] for d in _days(b))
    month = data / "month" / "feeds"
    feeds = data / "feeds"
    august = ("arstechnica", "techcrunch", "wired", "openai_research", "anthropic_news")
    return [
        FeedSet(
            "aiweb",
            "aiweb",
            tuple(tomllib.loads(aiweb_sources_toml(data / "aiweb"))["sources"]),
            aiweb_days,
            "aiweb-{day}.json",
            whole_file=True,
            warm_up=2,
        ),
        FeedSet(
            "tech-july",
            "tech",
            tuple(
                {"name": n, "url": f"{(month / n).as_uri()}/{{date}}.xml"}
                for n in ("arstechnica", "techcrunch", "tweakers", "wired")
            ),
            tuple(d for d in tech_days if d.month == 7),
            "tech-{day}.json",
            whole_file=True,
            warm_up=2,
        ),
        FeedSet(
            "tech-august",
            "tech",
            tuple(
                {"name": n, "url": f"{(feeds / n).as_uri()}/{{date}}.xml", "on_topic": n in LAB_SOURCES}
                for n in august
            ),
            tuple(d for d in tech_days if d.month == 8),
            "relevance-2025-08-05..07.json",
            whole_file=False,
            warm_up=0,
        ),
    ]


def unseen_feed_set(data: Path, mix: str, blocks: Iterable[Block], links: Path) -> FeedSet:
    """The feeds of ``mix``'s days that nobody here has seen (``tests.real_days.unseen_blocks``),
    configured as the labelled days of that mix are: the AI world's 14 feeds of ``aiweb/``, or the
    four tech outlets of ``month/``. Each day a block briefs (its warm-up days too) is read from the
    folder that holds that day's snapshots (``ops.story_days.feeds_folder``: months may be laid out
    in folders of their own), linked into ``links/<source>/<day>.xml``."""
    from ops.story_days import AIWEB_SOURCES, TECH_SOURCES, feeds_folder

    [known] = [s for s in feed_sets(data) if s.name == ("aiweb" if mix == "aiweb" else "tech-july")]
    usual = data / ("aiweb" if mix == "aiweb" else "month") / "feeds"
    days = tuple(d for b in blocks for d in _days(b))
    links = links.resolve()
    shutil.rmtree(links, ignore_errors=True)
    for day in sorted({d for b in blocks for d in known.briefed(_days(b))}):
        folder = feeds_folder(data, AIWEB_SOURCES if mix == "aiweb" else TECH_SOURCES, day.isoformat(), usual)
        for name in AIWEB_SOURCES if mix == "aiweb" else TECH_SOURCES:
            found = folder / name / f"{day.isoformat()}.xml"
            if found.is_file():
                (links / name).mkdir(parents=True, exist_ok=True)
                (links / name / found.name).symlink_to(found.resolve())
    sources = tuple(
        {**s, "url": s["url"].replace(usual.as_uri(), links.as_uri()).replace(str(usual), str(links))}
        for s in known.sources
    )
    return FeedSet(f"unseen-{known.name}", mix, sources, days, known.labels, whole_file=True, warm_up=2)


def beside_seen_notes(labels: Path) -> list[str]:
    """A line for each labelled day beside a labelled day here: judged on its other items only."""
    return [
        f"- {day}: within {UNSEEN_GAP} days of {seen}, a labelled day here, whose items it shares (the "
        "shipped models learnt them): judged on its items they did not learn"
        for day, seen in beside_seen(labels).items()
    ]


def learnt_links(data: Path) -> set[str]:
    """Every item the shipped models learnt from: labelled in the files of the days here
    (``seen_labels``, and the story labels of those days)."""
    seen = seen_labels(data / "labels")
    links = {_link(k) for labels in seen.by_day.values() for k in labels} | {_link(k) for k in seen.spanning}
    for day in SEEN_DAYS:
        path = data / "labels" / f"stories-{day}.json"
        if path.is_file():
            links |= {_link(i["id"]) for i in json.loads(path.read_text()).get("items", [])}
    return links


def learnt_on(labels_file: Path, learnt: set[str]) -> set[str]:
    """The items of a day's labels (``labels_file``, the file its scores read) that a day nobody has
    seen is not judged on: those the shipped models learnt (``learnt``), and those in one story with
    such an item. A story id is the file's own: another file of the day numbers its stories anew."""
    rows = json.loads(labels_file.read_text(encoding="utf-8"))
    stories = {r.get("story") for r in rows if r.get("story") and _link(r["id"]) in learnt}
    return learnt | {_link(r["id"]) for r in rows if r.get("story") in stories}


def missing_feeds(feeds: FeedSet, day: date) -> str | None:
    """Where ``day``'s snapshots were looked for, when none of ``feeds``' sources has one."""
    files = feeds.snapshots(day)
    if any(f.is_file() for f in files):
        return None
    return f"{files[0].parent.parent}/*/{day.isoformat()}.xml"


def story_groups() -> dict[str, tuple[str, ...]]:
    """Every group of labelled days a pair model is fitted on (its threshold chosen leaving one
    out): the blocks of both mixes, and the story-only days of each year (the two 2021 days share
    items: one group)."""
    from tests.real_days import STORY_ONLY_DAYS

    groups = {f"{mix} {block[0]}": block for mix, blocks in BLOCKS.items() for block in blocks}
    by_year: dict[str, list[str]] = {}
    for day in STORY_ONLY_DAYS:
        by_year.setdefault(day[:4], []).append(day)
    return groups | {f"story-only {days[0]}": tuple(days) for days in by_year.values()}


def story_days(data: Path) -> dict:
    """Every labelled day of ``story_groups`` with the run's vectors (``ops.story_days``)."""
    from ops.story_days import load_day, with_vectors
    from tasks.embed import SentenceTransformerEmbedder, UniversalSentenceEncoder

    english, multilingual = SentenceTransformerEmbedder(), UniversalSentenceEncoder()
    return {
        d: with_vectors(load_day(data, d), english, multilingual) for b in story_groups().values() for d in b
    }


def fit_story_model_without(days: dict, held: Iterable[Block], out: Path) -> str:
    """The pair model fitted on ``days`` (``story_days``) without the ``held`` blocks, written to ``out``."""
    from ops import pairs as fitting

    left_out = [d for b in held for d in b]
    out.write_text(fitting.fit_without(days, story_groups(), held=left_out).to_json())
    return str(out)


def story_model_without(data: Path, held: Iterable[Block], out: Path) -> str | None:
    """The default story decision refitted without the ``held`` blocks, written to ``out``, so that
    their days are grouped into stories by a model that never saw them either; None when the
    default is the rules (nothing fitted)."""
    from tasks.settings import PolicySettings

    if PolicySettings().story_model == "rules":
        return None
    return fit_story_model_without(story_days(data), held, out)


def feed_set_of(sets: Iterable[FeedSet], block: Block) -> FeedSet:
    [found] = [s for s in sets if set(_days(block)) <= set(s.days)]
    return found


def settings_for(root: Path, feeds: FeedSet, model: str, stories: str | None = None):
    """A user's settings for ``feeds``: the editorial model ``model``; the story model ``stories``
    (a fold's pair model), else the default's."""
    from tasks.settings import parse_settings

    policy = {"editorial_model": model, **({"story_model": stories} if stories else {})}
    return parse_settings(
        {
            "storage": {"root": str(root)},
            "sources": list(feeds.sources),
            "policy": policy,
            "gates": {"articles": "warning", "items": "blocking", "events": "blocking"},
        }
    )


def collect_base(root: Path, feeds: FeedSet, blocks: Iterable[Block] | None = None) -> Path:
    """Every day a block of ``feeds`` briefs (of ``blocks``, else of its mix's ``BLOCKS``),
    collected into ``root`` (once: an existing store is kept)."""
    from tasks import steps

    done = root / "collected.json"
    if done.is_file():
        return root
    settings = settings_for(root, feeds, "rules")
    wanted = BLOCKS[feeds.mix] if blocks is None else blocks
    days = sorted({d for b in wanted if set(_days(b)) <= set(feeds.days) for d in feeds.briefed(_days(b))})
    for day in days:
        ctx = steps.make_context(settings, day, f"judgement-collect-{day}")
        for source in feeds.sources:
            steps.collect_one(ctx, source["name"])
    done.write_text(json.dumps([d.isoformat() for d in days]))
    return root


def examples_of(root: Path, feeds: FeedSet, labels, left_out: Iterable[Block] = ()):
    """The labelled stories of ``feeds``' days with their evidence (``ops.learn.collect_examples``),
    but of the days of ``left_out``: no fold that leaves those blocks out learns from them
    (``training_for``), so they are not replayed."""
    from ops import learn, workspace

    skipped = {d for b in left_out for d in _days(b)}
    days = [d for d in feeds.days if d not in skipped]
    settings = settings_for(root, feeds, "rules")
    return learn.collect_examples(
        settings, days, labels, resources=workspace.resources_of(settings, must_exist=False)
    )


# -- what a fold may learn from ----------------------------------------------------------------


def _link(url: str) -> str:
    return url.split("#", 1)[0]


def held_links(labels, block: Block) -> set[str]:
    """Every labelled item of the held-out days (their own files' and the spanning files' of those days)."""
    days = _days(block)
    links = {_link(k) for d in days for k in labels.by_day.get(d, {})}
    links |= {_link(k) for k, lab in labels.spanning.items() if set(lab.snapshots) & set(block)}
    return links


def hidden_on(labels, day: date, held: set[str]) -> set[str]:
    """The items of ``day``'s file in a story that shares an item with the held-out days."""
    own = labels.by_day.get(day, {})
    stories = {lab.story for k, lab in own.items() if lab.story and _link(k) in held}
    return held | {_link(k) for k, lab in own.items() if lab.story in stories}


def training_for(examples: Sequence, labels, blocks: Iterable[Block]) -> list:
    """The examples a fold that leaves ``blocks`` out learns from."""
    left_out = [b for b in blocks]
    days = {d for b in left_out for d in _days(b)}
    held = set().union(*(held_links(labels, b) for b in left_out)) if left_out else set()
    hidden: dict[date, set[str]] = {}
    kept = []
    for e in examples:
        if e.day in days:
            continue
        if e.day not in hidden:
            hidden[e.day] = hidden_on(labels, e.day, held)
        if not {_link(u) for u in e.links} & hidden[e.day]:
            kept.append(e)
    return kept


# -- briefing and scoring a block --------------------------------------------------------------


def brief_block(
    base: Path, work: Path, feeds: FeedSet, block: Block, model: str, stories: str | None = None
) -> dict[date, dict]:
    """Publish the block's days (after its warm-up days) under ``model`` (and the story model
    ``stories``, else the default) on a copy of ``base``; the published brief per day (no items on
    a day whose brief is withheld)."""
    from tasks import steps

    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work)
    settings = settings_for(work, feeds, model, stories)
    briefs = {}
    for day in feeds.briefed(_days(block)):
        ctx = steps.make_context(settings, day, f"judgement-{Path(model).stem}-{day}")
        try:
            published = steps.rebrief(ctx)
        except steps.BriefWithheld:
            briefs[day] = {"items": []}
            continue
        briefs[day] = json.loads(Path(published.files["json"]).read_text())
    return briefs


def _window(day: date) -> tuple[datetime, datetime]:
    from zoneinfo import ZoneInfo

    from tasks.dedup import news_window

    return news_window(day, ZoneInfo("UTC"), 48)


def _published(text: str) -> datetime:
    from email.utils import parsedate_to_datetime

    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return parsedate_to_datetime(text)


RANK = {"none": 0, "related": 1, "core": 2}


def score_block(
    data: Path,
    feeds: FeedSet,
    block: Block,
    briefs: dict[date, dict],
    left_out: dict[date, set[str]] | None = None,
) -> dict[str, dict]:
    """Per held-out day, as (hits, total): precision (the brief's items that are core or related),
    top core (its top section's items that are core), recall (the day's core items of importance
    >= 2 cited that day or earlier) and headline lead (its importance-3 items cited in a top
    section that day or earlier); with the titles missed and the brief's length. ``left_out``: per
    day, the labelled items not judged: a brief's item that cites one of them (alone, or with a
    report it was joined to) is counted in neither precision nor top core, as its choice and place
    owe to what the models learnt; the important reports it cites still count as cited for recall."""
    days = _days(block)
    cited_any: dict[str, date] = {}
    cited_top: dict[str, date] = {}
    out: dict[str, dict] = {}
    for day in feeds.briefed(days):
        items = briefs[day]["items"]
        for item in items:
            for c in item["citations"]:
                for key in {c["url"], _link(c["url"])}:  # a digest's part cites the digest
                    cited_any.setdefault(key, day)
                    if item["section"] == "top":
                        cited_top.setdefault(key, day)
        if day not in days:
            continue
        labels = json.loads((data / "labels" / feeds.label_file(day)).read_text())
        skipped = (left_out or {}).get(day, set())
        labelled = len(labels)
        labels = [lab for lab in labels if _link(lab["id"]) not in skipped]
        by_url = {lab["id"]: lab for lab in labels}
        rel = [0, 0]
        top = [0, 0]
        wrong: list[str] = []
        for item in items:
            if any(_link(c["url"]) in skipped for c in item["citations"]):
                continue  # chosen and placed on a report the models learnt: neither hit nor miss
            found = [by_url.get(c["url"]) or by_url.get(_link(c["url"])) for c in item["citations"]]
            known = [lab for lab in found if lab]
            if not known:
                continue
            best = max(known, key=lambda lab: RANK[lab["relevance"]])
            rel[1] += 1
            rel[0] += best["relevance"] != "none"
            if best["relevance"] == "none":
                wrong.append(item["title"])
            if item["section"] == "top":
                top[1] += 1
                top[0] += best["relevance"] == "core"
        start, end = _window(day)
        scored = [
            lab
            for lab in labels
            if feeds.whole_file
            or (start <= _published(lab["published"]) < end and day.isoformat() in lab["snapshots"])
        ]
        important = [lab for lab in scored if lab["relevance"] == "core" and lab["importance"] >= 2]
        headlines = [lab for lab in scored if lab["importance"] == 3]

        def hit(lab: dict, cited: dict[str, date], day: date = day) -> bool:
            return lab["id"] in cited and cited[lab["id"]] <= day

        out[day.isoformat()] = {
            "precision": tuple(rel),
            "top_core": tuple(top),
            "recall": (sum(hit(lab, cited_any) for lab in important), len(important)),
            "headline": (sum(hit(lab, cited_top) for lab in headlines), len(headlines)),
            "off_topic_in": wrong,
            "missed": [lab["title"] for lab in important if not hit(lab, cited_any)],
            "missed_headlines": [lab["title"] for lab in headlines if not hit(lab, cited_top)],
            "items": len(items),
            "left_out": (labelled - len(labels), labelled),
        }
    return out


def pooled(rows: Iterable[dict]) -> dict[str, tuple[int, int]]:
    total = {k: [0, 0] for k in METRICS}
    for row in rows:
        for k in METRICS:
            total[k][0] += row[k][0]
            total[k][1] += row[k][1]
    return {k: (a, b) for k, (a, b) in total.items()}


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a share (95 % by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))
