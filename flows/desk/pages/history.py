"""History: every version of every day, and what changed between two versions, with its causes."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from flows.desk.web import Day, DeskOf, page, parse_version
from flows.views.text import short_runs
from ops import changes as log
from ops import reads
from ops.history import history as every_version
from storage.brief import Brief
from storage.errors import InputError
from tasks import versions

router = APIRouter()


@router.get("/history")
def history(request: Request, desk: DeskOf) -> Response:
    """Every version with its line (``ops.history``, as ``brief history`` prints it): the acts it
    carried in words ("ann: marked lead"), their event types in the line's title, or the run that
    published it."""
    return page(request, "history.html.j2", days=every_version(desk.store), short=short_runs)


@router.get("/diff")
def diff(request: Request, desk: DeskOf, day: Day) -> Response:
    store = desk.store
    a = parse_version(request.query_params.get("a"), "a")
    b = parse_version(request.query_params.get("b"), "b")
    if a is None or b is None:
        raise InputError("give two versions to compare: a=N&b=M")
    asked = (a, b) if a > b else None  # reversed: shown from the older, as the acts ran, and said so
    a, b = min(a, b), max(a, b)
    older, newer = reads.document(store, day, a), reads.document(store, day, b)
    published = log.publications(store, day)
    window = log.between(log.acts(store, day, published), a, b)
    return page(
        request,
        "diff.html.j2",
        day=day.isoformat(),
        a=a,
        b=b,
        asked=asked,
        changes=causes(versions.diff(older, newer), older, newer, window),
        published={n: p.at.strftime("%Y-%m-%d %H:%M UTC") for n, p in published.items()},
        delivered=sorted(reads.delivery_state(store, day).delivered.values(), key=lambda d: d.at),
    )


def causes(
    found: list[versions.ItemChange], older: Brief, newer: Brief, window: list[log.Acted]
) -> list[tuple[versions.ItemChange, list[log.Acted], str]]:
    """Each change with the acts between the two versions that can have caused it, of those about its
    item (on its story, or on an article it cites): a headline or summary change by a correction of
    that field (or a same-story link, which can bring another headline); a mark change (lead,
    relevance, category) by a mark or an answer on it, its sources by a same-story link; an item
    that came in by a mark, an answer, an undone retraction or a link, one that left by its
    retraction, a mark or a link. An item moved by a mark on it says so; without one it only moved
    as items above it (in either version) came in, left or were marked, and says which (the third
    part: "Northwind left"), with the acts that did that. No act at all: the run made the change."""
    own = {c: log.about(window, c.story_id, log.cited(c.story_id, (older, newer))) for c in found}
    fit = {c: [a for a in own[c] if _can_cause(c, a)] for c in found}
    placed = {c: [a for a in own[c] if _places(a)] for c in found if c.change == "moved"}
    where = (versions.places(older), versions.places(newer))
    out = []
    for c in found:
        if c.change != "moved":
            out.append((c, fit[c], ""))
        elif placed[c]:
            out.append((c, placed[c], ""))
        else:
            others = [
                o
                for o in found
                if o.story_id != c.story_id
                and (o.change in ("added", "removed") or placed.get(o))
                and _above(o.story_id, c.story_id, where)
            ]
            movers = list({a.event_id: a for o in others for a in placed.get(o) or fit[o]}.values())
            why = ", ".join(f"{o.title} {_WHY.get(o.change, 'was marked')}" for o in others)
            out.append((c, movers, why))
    return out


_WHY = {"added": "came in", "removed": "left"}
PLACING = ("relevance", "category", "importance")  # what a mark or an answer sets that can move an item
WORDED = {"headline": {"title"}, "translated headline": {"title"}, "summary": {"summary"}}


def _places(act: log.Acted) -> bool:
    """Whether an act on an item can change its place: a mark (relevance, lead), a category, or an
    answer about either or about its importance."""
    return act.type in ("article.corrected", "confirmation.resolved") and act.field in PLACING


def _links(act: log.Acted) -> bool:
    """Whether an act joins or parts stories (its item's sources, and so its headline, can change)."""
    same_story = act.type == "confirmation.resolved" and act.field == "same_story"
    return same_story or act.type in ("story.merged", "story.split")


def _can_cause(change: versions.ItemChange, act: log.Acted) -> bool:
    """Whether ``act``, an act about the change's item, can have made that change."""
    kind = change.change
    if kind == "reworded":
        words = change.detail.split(", ")
        fields = set().union(
            *(WORDED.get(w, {"title", "summary"}) for w in words)
        )  # a correction line: either
        corrects = act.type in ("brief.corrected", "article.corrected") and act.field in fields
        return corrects or _links(act)
    if kind == "marked":
        parts = change.detail.split("; ")
        sources = any(p.startswith("sources") for p in parts)
        return (_places(act) and not all(p.startswith("sources") for p in parts)) or (sources and _links(act))
    if kind == "added":
        return _places(act) or _links(act) or act.type == "story.restored"
    if kind == "removed":
        if change.detail.startswith("retracted"):
            return act.type == "story.retracted"
        return _places(act) or _links(act)
    return _places(act)


def _above(other: str, story: str, where: tuple[dict[str, tuple[str, int]], ...]) -> bool:
    """Whether ``other`` stood above ``story`` where its coming, going or move can have moved it: in
    its section in the older version (leaving, it lets ``story`` up) or in the newer (coming, it
    pushes ``story`` down); for a ``story`` that changed section, also where ``other`` took or left
    its place in the other version. An item below it in both moved nothing."""
    before, after = where
    if story not in before or story not in after:
        return False
    spots = [(before, before[story], False), (after, after[story], False)]
    if before[story][0] != after[story][0]:  # it changed section: pushed out, or let in
        spots += [(after, before[story], True), (before, after[story], True)]
    for version, (section, rank), its_place in spots:
        place = version.get(other)
        if (
            place is not None
            and place[0] == section
            and (place[1] < rank or (its_place and place[1] == rank))
        ):
            return True
    return False
