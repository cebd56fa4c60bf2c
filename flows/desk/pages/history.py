"""History: every version of every day, and what changed between two versions, with its causes."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from flows.desk import reads
from flows.desk.web import Day, DeskOf, page
from storage.brief import Brief
from storage.errors import InputError
from tasks import versions

router = APIRouter()


@router.get("/history")
def history(request: Request, desk: DeskOf) -> Response:
    return page(request, "history.html.j2", days=reads.versions(desk.store))


@router.get("/diff")
def diff(request: Request, desk: DeskOf, day: Day) -> Response:
    store = desk.store
    a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
    if not (a.isdigit() and b.isdigit()):
        raise InputError("give two versions to compare: a=N&b=M")
    older, newer = reads.document(store, day, int(a)), reads.document(store, day, int(b))
    changes = versions.diff(older, newer)
    acted = reads.acts(store, day)
    known = {v.version: v for v in reads.versions(store, [day]).get(day, [])}
    return page(
        request,
        "diff.html.j2",
        day=day.isoformat(),
        a=int(a),
        b=int(b),
        changes=[(c, causes(c, older, newer, acted)) for c in changes],
        published={n: v.published_at for n, v in known.items()},
        delivered=sorted(reads.delivery_state(store, day).delivered.values(), key=lambda d: d["at"]),
    )


def causes(
    change: versions.ItemChange, older: Brief, newer: Brief, acted: list[reads.Act]
) -> list[reads.Act]:
    """People's acts about the changed item: on its story, or on an article it cites (or links)."""
    cited = {
        c.article_id
        for doc in (older, newer)
        for item in doc.items
        if item.story_id == change.story_id
        for c in item.citations
    }
    return [
        a
        for a in acted
        if a.subject == change.story_id
        or a.subject in cited
        or cited.intersection(a.article_ids)  # a same-story link names both
    ]
