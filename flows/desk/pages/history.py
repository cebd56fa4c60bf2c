"""History: every version of every day, and what changed between two versions, with its causes."""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.responses import Response

from flows.desk import reads
from flows.desk.web import Day, DeskOf, page, parse_version
from ops import changes as log
from storage.brief import Brief
from storage.errors import InputError
from tasks import versions

router = APIRouter()
RUN_ID = re.compile(
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
)  # shown by its first 8


@router.get("/history")
def history(request: Request, desk: DeskOf) -> Response:
    """Every version with its line: the acts it carried in words ("ann: marked lead"), their event
    types in the line's title, or the run that published it."""
    said = {
        k: log.Summary(RUN_ID.sub(lambda m: m[0][:8], line.said), line.types)
        for k, line in log.summaries(desk.store).items()
    }
    return page(request, "history.html.j2", days=reads.versions(desk.store), said=said)


@router.get("/diff")
def diff(request: Request, desk: DeskOf, day: Day) -> Response:
    store = desk.store
    a = parse_version(request.query_params.get("a"), "a")
    b = parse_version(request.query_params.get("b"), "b")
    if a is None or b is None:
        raise InputError("give two versions to compare: a=N&b=M")
    older, newer = reads.document(store, day, a), reads.document(store, day, b)
    published = log.publications(store, day)
    window = log.between(log.acts(store, day, published), a, b)
    return page(
        request,
        "diff.html.j2",
        day=day.isoformat(),
        a=a,
        b=b,
        changes=causes(versions.diff(older, newer), older, newer, window),
        published={n: p.at.strftime("%Y-%m-%d %H:%M UTC") for n, p in published.items()},
        delivered=sorted(reads.delivery_state(store, day).delivered.values(), key=lambda d: d.at),
    )


def causes(
    found: list[versions.ItemChange], older: Brief, newer: Brief, window: list[log.Acted]
) -> list[tuple[versions.ItemChange, list[log.Acted], str]]:
    """Each change with the acts between the two versions that caused it: those about its item (on its
    story, or on an article it cites). An item that moved is moved by a mark on it (relevance,
    category); without one it only moved as others left, came in or were marked, and says so (the
    third part: "Northwind left"), with the acts that did that, not with its own acts that left its
    place alone (a headline correction, a same-story link). No act at all: the run made the change."""
    own = {c: log.about(window, c.story_id, log.cited(c.story_id, (older, newer))) for c in found}
    placed = {c: [a for a in acted if _places(a)] for c, acted in own.items() if c.change == "moved"}
    others = [c for c in found if c.change in ("added", "removed") or placed.get(c)]
    movers = list({a.event_id: a for c in others for a in placed.get(c) or own[c]}.values())
    why = ", ".join(f"{c.title} {_WHY.get(c.change, 'was marked')}" for c in others)
    out = []
    for c, acted in own.items():
        if c.change != "moved":
            out.append((c, acted, ""))
        elif placed[c]:
            out.append((c, placed[c], ""))
        else:
            out.append((c, movers, why if others else ""))
    return out


_WHY = {"added": "came in", "removed": "left"}


def _places(act: log.Acted) -> bool:
    """Whether an act on an item can change its place: a mark (relevance, lead) or a category."""
    return act.type in ("article.corrected", "confirmation.resolved") and act.field in (
        "relevance",
        "category",
    )
