"""Who changed a day's brief, and when: its published versions and people's acts, read from the log.

Every act is recorded under the day's lock and published at once (``ops.acts.record``), by the act's
own run: the version that run published is the one that carries it (``Acted.version``). An act
whose run recorded that the brief read as before (``brief.unchanged``: "unchanged (vN)") changed
nothing, and no later version is credited with it (``Acted.changed`` false, its version the one it
left standing), but for an act about a story that version did not hold (a mark on a story not in
the brief binds the runs after it): it is credited to the first version published after it that
holds the story, the one that applies it; a mark that keeps a story out (off-topic) and a
retraction are never. Without that record (its run failed or was stopped after the act was
written, or an act before ``brief.unchanged`` was recorded) the act is credited to the first
version after it. An approval makes no version: it stands at the version it approved.
The desk's diff credits a change to the acts carried by the versions between its two (``between``);
an act made from an earlier version than the current one is refused when the items it acts on
changed since (``stale``), naming what changed, by which acts, and who did them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import polars as pl

from storage.brief import Brief
from storage.errors import StaleAct
from storage.payloads import BriefPublished, BriefUnchanged, Payload
from storage.store import ParquetEventStore
from storage.typed import payload_of

ACT_TYPES = (
    "confirmation.resolved",
    "article.corrected",
    "brief.corrected",
    "story.retracted",
    "story.restored",
    "brief.approved",
    "story.merged",
    "story.split",
)
# what an editor sees of an item and acts on; its place in the brief is not (another item leaving
# moves it up without changing it)
FACE = ("title", "summary", "correction", "relevance", "lead", "category", "section")
FACE_WORDS = {"title": "headline", "correction": "correction line", "relevance": "mark"}
# what each event the desk shows a person is called where it is read (History's line per version,
# the diff's "caused by", a story's decisions, a stale act's "changed by"): the one map, read by
# ``act_words``; the type itself stays beside the words for auditors
EVENT_WORDS = {
    "confirmation.resolved": "answered",
    "confirmation.requested": "asked",
    "article.corrected": "corrected",
    "brief.corrected": "corrected",
    "story.retracted": "retracted",
    "story.restored": "undid the retraction",
    "brief.approved": "approved",
    "brief.published": "published",
    "story.merged": "same story",
    "story.split": "two stories",
    "story.scored": "scored",
}
# several acts of one kind carried by one version, in a few words: "answered 3 questions"
MANY_WORDS = {
    "confirmation.resolved": "answered {n} questions",
    "mark": "made {n} marks",
    "article.corrected": "made {n} corrections",
    "brief.corrected": "made {n} corrections",
    "story.retracted": "retracted {n} stories",
    "story.restored": "undid {n} retractions",
    "story.merged": "joined {n} pairs as one story",
    "story.split": "parted {n} pairs as two stories",
}


def is_mark(kind: str, field: str) -> bool:
    """Whether an act is a mark (relevance, lead included): "marked lead", not a correction."""
    return kind == "article.corrected" and field == "relevance"


def linked_words(kind: str, titles: Sequence[str]) -> str:
    """A same-story or two-stories link by its reports' headlines: "joined “…” and “…” into one
    story", "parted “…” and “…” into two stories"."""
    quoted = [f"“{t}”" for t in titles]
    both = " and ".join(quoted) if len(quoted) < 3 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"
    return f"joined {both} into one story" if kind == "story.merged" else f"parted {both} into two stories"


def act_words(
    kind: str,
    field: str = "",
    said: str = "",
    version: int | None = None,
    headline: str = "",
    titles: Sequence[str] = (),
) -> str:
    """An event as a person reads it: "marked “…” lead", "corrected the headline of “…” to “…”",
    "answered a relevance question about “…”: “core”", "retracted “…” (note: “…”)", "approved v4",
    "published v4", "joined “…” and “…” into one story"; ``said`` is the value given, the answer, the
    note or the articles linked (as ``Acted.said``), ``headline`` the headline of the story acted on
    ("": where the story is known, as on its own page), ``titles`` the headlines of the reports a
    link names (said in place of their ids)."""
    verb = EVENT_WORDS.get(kind, kind)
    quoted = f"“{said}”" if said else ""
    named = f" “{headline}”" if headline else ""
    if is_mark(kind, field):
        return f"marked{named} {said}".rstrip()
    if kind in ("article.corrected", "brief.corrected"):
        what = FACE_WORDS.get(field, field) or "item"
        return f"{verb} the {what}" + (f" of{named}" if named else "") + (f" to {quoted}" if said else "")
    if kind == "confirmation.resolved":
        asked = field.split(":")[0].replace("_", "-")  # "claim:number" asks about a claim
        if not asked:
            return verb
        article = "an" if asked[0] in "aeiou" else "a"
        about = f" about{named}" if named else ""
        return f"{verb} {article} {asked} question{about}" + (f": {quoted}" if said else "")
    if kind == "story.retracted":  # what is said of a retraction is its note, not the item
        return f"{verb}{named} (note: {quoted})" if said else f"{verb}{named}"
    if kind == "story.restored":  # what is said of an undo is its note, not what was retracted
        return f"{verb}" + (f" of{named}" if named else "") + (f" (note: {quoted})" if said else "")
    if kind in ("brief.approved", "brief.published") and version is not None:
        return f"{verb} v{version}"
    if kind in ("story.merged", "story.split"):
        if titles:
            return linked_words(kind, titles)
        return f"{verb}: {said}" if said else verb
    return f"{verb} {quoted}".rstrip()


@dataclass(frozen=True)
class Publication:
    version: int
    at: datetime
    run_id: str
    stories: frozenset[str] = frozenset()  # the stories the version holds


@dataclass(frozen=True)
class Acted:
    """A person's act on the day (an answer, mark, correction, retraction, approval or same-story
    link), and the version its run published (``changed``), or, for an act that changed nothing,
    the version standing when it was made (None: none yet)."""

    event_id: str
    type: str
    at: datetime
    subject: str
    field: str  # the field a correction or an answer is about ("" for others)
    said: str  # the value given, the answer, the note, or the articles linked
    article_ids: tuple[str, ...]  # the articles a same-story or two-stories act names
    by: str
    via: str
    version: int | None
    changed: bool = True  # its run published a version: it changed the brief
    follows: tuple[str, ...] = ()  # the act it follows from (an answer's same-story link or mark)
    headline: str = ""  # the headline of the story it acted on, as the brief read before it ("": none)
    titles: tuple[str, ...] = ()  # the headlines of the reports a link names, as collected (() unknown)

    def words(self, named: bool = False) -> str:
        """What the act did, as a person reads it (``act_words``); ``named``: naming the story by its
        headline, where the line does not stand beside the story (History's line per version)."""
        approved = self.version if self.type == "brief.approved" else None
        headline = self.headline if named else ""
        return act_words(self.type, self.field, self.said, approved, headline, self.titles)

    def line(self) -> str:
        """The act in a few words: what, by whom, where and when, and the version that carried it."""
        what = self.words()
        where = f" via {self.via}" if self.via else ""
        carried = f" (v{self.version})" if self.version is not None else ""
        if not self.changed:
            carried = f" (unchanged, v{self.version})" if self.version is not None else " (unchanged)"
        return f"{what} — {self.by or 'someone'}{where} at {self.at:%H:%M:%S} UTC{carried}"


def publications(store: ParquetEventStore, day: date) -> dict[int, Publication]:
    """Each published version of the day, when it was first published and by which run."""
    return every_publication(store, [day]).get(day, {})


def every_publication(
    store: ParquetEventStore, days: list[date] | None = None
) -> dict[date, dict[int, Publication]]:
    """Each published version of each of ``days`` (None: every day), as ``publications``."""
    frame = store.query(lambda: store.scan(days, event_types=["brief.published"]))
    out: dict[date, dict[int, Publication]] = {}
    for row in frame.sort(["occurred_at", "seq"]).iter_rows(named=True):
        brief = payload_of(row, BriefPublished)
        day = out.setdefault(row["brief_date"], {})
        day.setdefault(
            brief.version,
            Publication(brief.version, row["occurred_at"], row["run_id"], frozenset(brief.stories)),
        )
    return out


def story_of(store: ParquetEventStore, day: date) -> Callable[[str], str | None]:
    """The story an act's subject names on ``day``: a story id, or the story an article is a member
    of (a mark is recorded on the story's representative article); None for anything else. The
    day's stories are read the first time it is asked (most acts never ask)."""
    from storage.projections import materialize

    found: dict[str, str] = {}

    def named(subject: str) -> str | None:
        if not found:
            for row in materialize(store, "stories", days=[day]).iter_rows(named=True):
                found[row["story_id"]] = row["story_id"]
                found.update(dict.fromkeys(row["members"] or (), row["story_id"]))
        return found.get(subject)

    return named


def article_titles(store: ParquetEventStore) -> Callable[[Sequence[str]], tuple[str, ...]]:
    """The headlines ``article_ids`` were collected with (() when one is not in the log), read from
    the log when first asked for those ids (most days link no reports)."""
    found: dict[str, str] = {}

    def titles(article_ids: Sequence[str]) -> tuple[str, ...]:
        wanted = sorted(set(article_ids) - set(found))
        if wanted:
            frame = store.query(
                lambda: store.scan(event_types=["article.collected"]).filter(
                    pl.col("subject_id").is_in(wanted)
                )
            )
            for row in frame.iter_rows(named=True):
                found.setdefault(row["subject_id"], str(getattr(payload_of(row, Payload), "title", "") or ""))
        named = tuple(found.get(a, "") for a in article_ids)
        return named if all(named) else ()

    return titles


def links_said(store: ParquetEventStore, events: Iterable[Any]) -> list[str]:
    """The same-story and two-stories links among ``events`` (an act's), each in a line that names its
    reports by their headlines ("joined “…” and “…” into one story"; their ids when not found)."""
    titles = article_titles(store)
    said = []
    for e in events:
        if e.event_type in ("story.merged", "story.split"):
            link = payload_of(e, Payload)
            ids = tuple(getattr(link, "article_ids", None) or ())
            named = titles(ids)
            # "no" to a same-story question: the reports were two stories and stay so (its default)
            if e.event_type == "story.split" and getattr(link, "question_id", None) and named:
                said.append(f"{' and '.join(f'“{t}”' for t in named)} stay two stories")
                continue
            said.append(act_words(e.event_type, said=" + ".join(ids), titles=named))
    return said


def standing_retractions(store: ParquetEventStore, day: date) -> dict[str, str]:
    """The day's retractions not undone: story id -> the retraction's event id."""
    from storage.payloads import StoryRestored, StoryRetracted

    standing: dict[str, str] = {}
    for e in store.read(days=[day], event_types=["story.retracted", "story.restored"]):
        if e.event_type == "story.retracted":
            standing[payload_of(e, StoryRetracted).story_id] = e.event_id
        elif standing.get((undone := payload_of(e, StoryRestored)).story_id) == undone.retraction:
            del standing[undone.story_id]
    return standing


def moot_questions(store: ParquetEventStore, day: date, questions: Iterable[Mapping[str, Any]]) -> set[str]:
    """The ids of ``questions`` about a story (or an article of one) whose retraction stands:
    answering them changes nothing readers see, so neither ``brief review`` nor the desk asks them."""
    asked = list(questions)
    retracted = standing_retractions(store, day) if asked else {}
    if not retracted:
        return set()
    named = story_of(store, day)
    return {
        str(q["question_id"])
        for q in asked
        if any((named(s) or s) in retracted for s in str(q["subject"]).split("|"))
    }


def headline_of(
    store: ParquetEventStore, day: date, published: Mapping[int, Publication]
) -> Callable[[str | None, datetime], str]:
    """The headline a story had when an act at a time was made: its item's title in the latest
    version published before then that holds it, else in the first that does ("": none holds it, or
    no story). The day's versions are read the first time it is asked."""
    briefs = store.tree.briefs
    titles: list[tuple[datetime, dict[str, str]]] = []

    def read() -> None:
        for p in sorted(published.values(), key=lambda p: p.at):
            try:
                doc = briefs.read(briefs.version(day, p.version))
            except (FileNotFoundError, OSError, ValueError):
                continue  # purged, or not readable: the words go without its headline
            titles.append((p.at, {i.story_id: i.title for i in doc.items}))

    def titled(story: str | None, at: datetime) -> str:
        if story is None:
            return ""
        if not titles:
            read()
        before = [t[story] for when, t in titles if when <= at and story in t]
        after = [t[story] for _, t in titles if story in t]
        return (before or after or [""])[-1 if before else 0]

    return titled


def acts(
    store: ParquetEventStore, day: date, published: Mapping[int, Publication] | None = None
) -> list[Acted]:
    """People's acts on the day, oldest first, each with the version that first carried it."""
    published = publications(store, day) if published is None else published
    frame = store.query(lambda: store.scan([day], event_types=[*ACT_TYPES, "brief.unchanged"]))
    acted = _acted(frame, published, story_of(store, day), headline_of(store, day, published))
    return with_titles(acted, article_titles(store))


def with_titles(acted: list[Acted], titles: Callable[[Sequence[str]], tuple[str, ...]]) -> list[Acted]:
    """``acted``, each link (same story, two stories) given its reports' headlines."""
    return [dataclasses.replace(x, titles=titles(x.article_ids)) if x.article_ids else x for x in acted]


@dataclass(frozen=True)
class Summary:
    """A version in a line (``said``) and the types of the events it names (for auditors)."""

    said: str
    types: tuple[str, ...] = ()


def summaries(store: ParquetEventStore, days: list[date] | None = None) -> dict[tuple[date, int], Summary]:
    """Each version of each of ``days`` (None: every day) in a line: the people's acts it first
    carried (the first of them and how many more, or how many of one kind: "answered 3
    questions"), or the run that published it. One scan of the versions and one of the acts,
    whatever the number of days."""
    versions = every_publication(store, days)
    frame = store.query(lambda: store.scan(days, event_types=[*ACT_TYPES, "brief.unchanged"]))
    out = {}
    titles = article_titles(store)
    for day, by_version in versions.items():
        carried: dict[int, list[Acted]] = {}
        day_frame = frame.filter(pl.col("brief_date") == day)
        day_acts = _acted(day_frame, by_version, story_of(store, day), headline_of(store, day, by_version))
        for x in with_titles(day_acts, titles):
            if x.changed and x.version is not None:
                carried.setdefault(x.version, []).append(x)
        for v, p in by_version.items():
            acted = carried.get(v, [])
            if acted:
                acted, line = _told(acted)
                types = tuple(dict.fromkeys(x.type for x in acted))
                people = ", ".join(dict.fromkeys(x.by or "someone" for x in acted))
                out[(day, v)] = Summary(f"{people}: {line}", types)
            else:
                out[(day, v)] = Summary(f"the run {p.run_id}")
    return out


def _told(acted: list[Acted]) -> tuple[list[Acted], str]:
    """The acts a version's line tells and the line: what an answer said besides itself is told by
    the answer ("answered 3 questions"), but for a same-story or two-stories link an answer made,
    which the line names by its reports' headlines too ("; joined “…” and “…” into one story"),
    and alone when that answer is all the version carried."""
    said = {x.event_id for x in acted}
    told = [x for x in acted if not said.intersection(x.follows)] or acted
    links = [x for x in acted if x.article_ids and said.intersection(x.follows)]
    linked_by = {f for x in links for f in x.follows}
    parts = [_in_a_line(told)] if any(x.event_id not in linked_by for x in told) else []
    return told + links, "; ".join(parts + [x.words(named=True) for x in links])


def _in_a_line(acted: Sequence[Acted]) -> str:
    """Acts carried by one version: one act's words; several of one kind counted ("answered 3
    questions"); else the first act's words and how many more."""
    first = acted[0]
    if len(acted) == 1:
        return first.words(named=True)
    kinds = {"mark" if is_mark(x.type, x.field) else x.type for x in acted}
    many = MANY_WORDS.get(next(iter(kinds))) if len(kinds) == 1 else None
    if many is not None:
        return many.format(n=len(acted))
    return f"{first.words(named=True)} (and {len(acted) - 1} more)"


def _acted(
    frame: pl.DataFrame,
    published: Mapping[int, Publication],
    story_of: Callable[[str], str | None],
    titled: Callable[[str | None, datetime], str] = lambda story, at: "",
) -> list[Acted]:
    """The acts of ``frame``, each with the version that carried it: the one its own run published.
    An act whose run recorded ``brief.unchanged`` (in ``frame`` too) changed nothing: it stands at
    that version, unless it is about a story that version did not hold (``story_of`` its subject):
    then the first later version holding the story carries it. Any other is carried by the first
    version published after it. Each is named by its story's headline as it read then (``titled``)."""
    order = sorted(published.values(), key=lambda p: p.at)
    by_run = {p.run_id: p.version for p in order}
    kept = frame.filter(pl.col("event_type") == "brief.unchanged")
    unchanged = {row["run_id"]: payload_of(row, BriefUnchanged).version for row in kept.iter_rows(named=True)}
    out = []
    for row in (
        frame.filter(pl.col("event_type") != "brief.unchanged")
        .sort(["occurred_at", "seq"])
        .iter_rows(named=True)
    ):
        act = payload_of(row, Payload)  # one of several types: each part is read where the type has it
        at: datetime = row["occurred_at"]
        linked = tuple(getattr(act, "article_ids", None) or ())
        # an answer's ``value`` is the value the question proposed: what was said is its ``answer``
        said = [getattr(act, name, None) for name in ("answer", "value", "note")]
        version, changed = _carried(row["run_id"], at, order, by_run, unchanged)
        if row["event_type"] == "brief.approved":  # it lets a version go out, it makes none
            version, changed = getattr(act, "version", version), False
        elif not changed and not _keeps_out(row["event_type"], act):
            asked = functools.partial(story_of, row["subject_id"])
            version, changed = _applied(asked, at, order, published, (version, changed))
        out.append(
            Acted(
                row["event_id"],
                row["event_type"],
                at,
                row["subject_id"],
                str(getattr(act, "field", None) or ""),
                str(next((s for s in said if s), None) or " + ".join(linked)),
                linked,
                getattr(act, "person", None) or getattr(act, "by", "") or "",
                getattr(act, "via", None) or "",
                version,
                changed,
                tuple(row["source_event_ids"] or ()),
                titled(getattr(act, "story_id", None) or story_of(row["subject_id"]), at)
                if row["event_type"] in _NAMED
                else "",
            )
        )
    by_id = {x.event_id: x.by for x in out}  # what an answer said besides itself is by its person
    return [
        dataclasses.replace(x, by=by_id.get(x.follows[0], "")) if x.follows and not x.by else x for x in out
    ]


# the acts a line names the story of (a same-story link names its articles; an approval the version)
_NAMED = {
    "article.corrected",
    "brief.corrected",
    "confirmation.resolved",
    "story.retracted",
    "story.restored",
}


def _keeps_out(kind: str, act: Payload) -> bool:
    """Whether an act keeps its story out of the brief (a retraction, an off-topic mark): a version
    that holds the story later does so despite it, not by it."""
    given = getattr(act, "answer", None) or getattr(act, "value", None)  # an answer's, else a mark's
    off_topic = getattr(act, "field", None) == "relevance" and given == "off-topic"
    return kind == "story.retracted" or off_topic


def _applied(
    story_of_act: Callable[[], str | None],
    at: datetime,
    order: Sequence[Publication],
    published: Mapping[int, Publication],
    standing: tuple[int | None, bool],
) -> tuple[int | None, bool]:
    """For an act that changed nothing, ``standing`` (its version, False): the first version after
    it holding its story (``story_of_act``, asked only when needed: it folds the day's stories) when the
    version it stood at did not (the act bound a later run)."""
    held = published.get(standing[0]) if standing[0] is not None else None
    if held is None:
        return standing
    story = story_of_act()
    if story is None or story in held.stories:
        return standing
    later = next((p.version for p in order if p.at >= at and story in p.stories), None)
    return (later, True) if later is not None else standing


def _carried(
    run_id: str,
    at: datetime,
    order: Sequence[Publication],
    by_run: Mapping[str, int],
    unchanged: Mapping[str, int],
) -> tuple[int | None, bool]:
    """The version an act of ``run_id`` made at ``at`` is carried by, and whether it changed the brief."""
    if run_id in by_run:
        return by_run[run_id], True
    if run_id in unchanged:  # its run said so: the brief read as this version did
        return unchanged[run_id], False
    return next((p.version for p in order if p.at >= at), None), True


def between(acted: Iterable[Acted], a: int, b: int) -> list[Acted]:
    """The acts that changed the brief, carried by the versions after the older of ``a`` and ``b``,
    up to the newer: an act that changed nothing is no cause of anything."""
    low, high = sorted((a, b))
    return [x for x in acted if x.changed and x.version is not None and low < x.version <= high]


def cited(story: str, documents: Iterable[Brief]) -> set[str]:
    """The articles the story's item cites in any of ``documents``."""
    return {
        c.article_id
        for doc in documents
        for item in doc.items
        if item.story_id == story
        for c in item.citations
    }


def about(acted: Iterable[Acted], story: str, articles: set[str]) -> list[Acted]:
    """The acts about a story: on it, or on an article it cites (a same-story link names both)."""
    return [
        x
        for x in acted
        if x.subject == story or x.subject in articles or articles.intersection(x.article_ids)
    ]


def face(document: Brief, story: str) -> dict[str, Any] | None:
    """What an editor sees of the story's item (None: not in the brief)."""
    item = next((i for i in document.items if i.story_id == story), None)
    if item is None:
        return None
    return {
        **{k: getattr(item, k) for k in FACE},
        "sources": sorted(c.article_id for c in item.citations),
    }


def what_changed(seen: Brief | None, current: Brief, story: str) -> str | None:
    """How the story's item changed from the version ``seen`` to ``current``, in words (None: not)."""
    now = face(current, story)
    before = face(seen, story) if seen is not None else None
    if now == before:
        return None
    if now is None:
        retracted = any(r.story_id == story for r in current.retracted or ())
        return "it was retracted" if retracted else "it left the brief"
    if before is None:
        return "it was not in that version"
    words = [FACE_WORDS.get(k, k) for k in (*FACE, "sources") if now[k] != before[k]]
    return f"its {', '.join(dict.fromkeys(words))} changed"


def stale(
    store: ParquetEventStore, day: date, seen: int, stories: Sequence[str] | None = None
) -> StaleAct | None:
    """Why an act made from version ``seen`` of the day's brief is out of date, or None when it is
    not: the items of ``stories`` changed since (None: the brief as a whole, as an approval sees it),
    with the acts that changed them, or the runs that did."""
    briefs = store.tree.briefs
    current = briefs.current_document(day)
    if current is None:
        return None  # nothing published: the act itself says so
    now = current.version
    if seen == now:
        return None
    if seen > now:
        return StaleAct(
            f"the form names v{seen} of the brief of {day}, which is at v{now}; reload the page", seen, now
        )
    try:
        before: Brief | None = briefs.read(briefs.version(day, seen))
    except (FileNotFoundError, OSError):
        before = None  # purged: every item counts as changed
    published = publications(store, day)
    since = [
        x for x in acts(store, day, published) if x.changed and x.version is not None and x.version > seen
    ]
    if stories is None:
        lines = [x.line() for x in since] or _runs(published, seen, now)
        return StaleAct(_said(day, seen, now, []), seen, now, [], lines)
    changes, lines = [], []
    for story in dict.fromkeys(stories):
        what = what_changed(before, current, story)
        if what is None:
            continue
        title = (face(before, story) if before else None) or face(current, story) or {}
        changes.append(f"{title.get('title') or story}: {what}")
        docs = [d for d in (before, current) if d is not None]
        lines += [x.line() for x in about(since, story, cited(story, docs)) if x.line() not in lines]
    if not changes:
        return None
    return StaleAct(_said(day, seen, now, changes), seen, now, changes, lines or _runs(published, seen, now))


def _runs(published: Mapping[int, Publication], seen: int, now: int) -> list[str]:
    return [
        f"v{p.version} published by {p.run_id} at {p.at:%H:%M:%S} UTC"
        for p in sorted(published.values(), key=lambda p: p.version)
        if seen < p.version <= now
    ]


def _said(day: date, seen: int, now: int, changes: list[str]) -> str:
    what = f", and {'; '.join(changes)}" if changes else ""
    return (
        f"refused: this form was made from v{seen} of the brief of {day}, which is at v{now} now{what}; "
        "look at the brief again, or apply the act again on purpose"
    )
