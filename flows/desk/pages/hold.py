"""Hold: a held brief, who approved it, what was sent, the update pending for readers; the approval,
and "send now"."""

from __future__ import annotations

from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from flows.desk import reads
from flows.desk.web import ActOf, Day, DeskOf, page
from ops import acts

router = APIRouter()


@router.get("/hold")
def hold(request: Request, desk: DeskOf, day: Day) -> Response:
    state = reads.delivery_state(desk.store, day)
    current = desk.store.tree.briefs.current_document(day)
    return page(
        request,
        "hold.html.j2",
        day=day.isoformat(),
        hold=desk.settings.delivery.hold,
        held=state.held,
        current=int(current["version"]) if current is not None else None,
        approved=state.approved,
        delivered=sorted(state.delivered.values(), key=lambda d: d["at"]),
        pending=acts.pending_update(desk.settings, day),
        update_after=desk.settings.delivery.update_after,
        done=request.query_params.get("done"),
    )


@router.post("/hold/approve")
def approve(desk: DeskOf, act: ActOf) -> Response:
    outcome = acts.approve(desk.settings, act)
    said = f"approved v{outcome.version}; sent to {', '.join(outcome.sent) or 'no channel'}"
    return RedirectResponse(f"/hold?{urlencode({'date': outcome.day.isoformat(), 'done': said})}", 303)


@router.post("/hold/send")
def send_now(desk: DeskOf, act: ActOf) -> Response:
    """The pending update sent now, before its window closes."""
    outcome = acts.deliver(desk.settings, act.day, now=True)
    said = f"v{outcome.version} sent to {', '.join(s.channel for s in outcome.sent if s.ok) or 'no channel'}"
    return RedirectResponse(f"/hold?{urlencode({'date': act.day.isoformat(), 'done': said})}", 303)
