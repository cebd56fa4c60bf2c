"""Hold: a held brief, who approved it, what was sent, the update pending for readers; the approval,
and "send now"."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from flows.desk.web import DONE, ActOf, Day, DeskOf, answered, banner, done, page, said_line
from ops import acts, reads
from storage.errors import InputError
from storage.payloads import BriefDelivered

router = APIRouter()


@router.get("/hold")
def hold(request: Request, desk: DeskOf, day: Day) -> Response:
    state = reads.delivery_state(desk.store, day)
    current = reads.current(desk.store, day)
    return page(
        request,
        "hold.html.j2",
        day=day.isoformat(),
        hold=desk.settings.delivery.hold,
        held=state.held,
        current=current.version if current is not None else None,
        approved=state.approved,
        deadline=state.deadline_release,
        holding=state.holding,
        delivered=[(d, released(d.delivery)) for d in sorted(state.delivered.values(), key=lambda d: d.at)],
        pending=acts.pending_update(desk.settings, desk.resources, day),
        gathered=minutes(desk.settings.delivery.update_after),
        done=banner(request),
    )


def released(sent: BriefDelivered) -> str:
    """Why a message went when it did, in words: a review copy, a brief nobody held, one a person
    approved or its deadline released, or an update after that (nobody approved an update itself)."""
    if sent.kind == "review":
        return "a copy for the editors to review"
    if sent.released == "direct":
        return "sent when published (not held)"
    if sent.released == "deadline":
        return "at the deadline, nobody having approved it" if sent.kind == "brief" else "after the deadline"
    if sent.kind == "brief":
        return f"approved by {sent.by or 'someone'}"
    return f"after {sent.by or 'someone'} approved the day's brief"


def minutes(value: float) -> str:
    """A number of minutes as a person says it: "1 minute", "5 minutes", "0.5 minutes"."""
    shown = f"{value:g}" if value != int(value) else str(int(value))
    return f"{shown} minute" + ("" if shown == "1" else "s")


@router.post("/hold/approve")
def approve(request: Request, desk: DeskOf, act: ActOf) -> Response:
    if act.seen is None:  # what is approved is what the page showed: never "whatever is current"
        raise InputError("the form names no version of the brief (seen); reload the page")
    return done(request, "approved", acts.approve(desk.settings, desk.resources, act), "/hold")


@router.post("/hold/send")
def send_now(request: Request, desk: DeskOf, act: ActOf) -> Response:
    """The pending update sent now, before its window closes."""
    outcome = acts.deliver(desk.settings, desk.resources, act.day, now=True)
    sent = [s.channel for s in outcome.sent if s.ok]
    failed = [(s.channel, s.reason) for s in outcome.failed]
    what = "send" if sent else "failed" if failed else "nothing"
    line = (
        said_line(desk, what, version=outcome.version, sent=sent, failed=failed)
        if sent or failed
        else DONE[what]
    )
    return answered(request, what, line, "/hold", {"date": act.day.isoformat()})
