"""Hold: a held brief, who approved it, what was sent; and the approval."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from flows.desk import reads
from flows.desk.web import ActOf, Day, DeskOf, banner, done, page
from ops import acts

router = APIRouter()


@router.get("/hold")
def hold(request: Request, desk: DeskOf, day: Day) -> Response:
    state = reads.delivery_state(desk.store, day)
    return page(
        request,
        "hold.html.j2",
        day=day.isoformat(),
        hold=desk.settings.delivery.hold,
        held=state.held,
        approved=state.approved,
        delivered=sorted(state.delivered.values(), key=lambda d: d["at"]),
        done=banner(request),
    )


@router.post("/hold/approve")
def approve(request: Request, desk: DeskOf, act: ActOf) -> Response:
    return done(request, "approved", acts.approve(desk.settings, act), "/hold")
