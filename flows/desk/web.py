"""What every page of the desk shares: the desk's resources, the dependencies that give a page its
store, its day and its person (``Depends``), a page rendered and an act's answer. A query's or a
form's date is read by ``tasks.dates``, as every entrypoint reads one."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode

import jinja2
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from flows.desk import reads
from flows.desk.access import Access
from ops import acts
from ops.workspace import Resources, today
from storage.errors import InputError, StaleAct
from storage.store import ParquetEventStore
from tasks.dates import parse_date, shown
from tasks.settings import Settings

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Desk:
    """The desk's resources, made once by ``create_app``: its config, the composition root's
    resources (the store and the clock every act and page uses), its people, and the Prefect UI its
    runs page links to (None: read from Prefect's settings when that page is shown)."""

    settings: Settings
    resources: Resources
    access: Access
    ui_url: str | None = None

    @property
    def store(self) -> ParquetEventStore:
        return self.resources.store

    def today(self) -> date:
        """Today in the configured timezone, by the desk's clock."""
        return today(self.settings, self.resources.clock)


@functools.cache
def templates() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")),
        autoescape=True,  # every template: feed and model text is always escaped
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def parse_version(text: str | None, name: str = "version") -> int | None:
    """A version number a query gave (None: not given); anything but ASCII digits is one line (400):
    ``²`` is a digit to ``str.isdigit`` but not a number."""
    if not text:
        return None
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise InputError(f"{name} {shown(text)} is not a version number; use e.g. {name}=2")
    return int(text)


def the_desk(request: Request) -> Desk:
    return request.app.state.desk


DeskOf = Annotated[Desk, Depends(the_desk)]


def the_day(request: Request, desk: DeskOf) -> date:
    """The day a page or an act is about: the query's or the form's ``date``, else the latest brief."""
    given = parse_date(request.query_params.get("date") or request.state.form.get("date") or None, "date")
    if given is not None:
        return given
    latest = reads.latest_day(desk.store)
    if latest is None:
        raise InputError("no brief is published yet; run 'brief run' first")
    return latest


Day = Annotated[date, Depends(the_day)]


def the_end(request: Request, desk: DeskOf) -> date:
    """The last day a window of days shows: the query's ``date``, else the latest brief, else today."""
    given = parse_date(request.query_params.get("date") or None, "date")
    return given or reads.latest_day(desk.store) or desk.today()


End = Annotated[date, Depends(the_end)]


def the_act(request: Request, day: Day) -> acts.Act:
    """An act's who, where and day: the person signed in, at the desk, the form's day, and the
    version of the brief the form was made from (its ``seen`` field)."""
    who = request.state.person or "desk"
    form = request.state.form
    return acts.Act(
        day, who, "desk", as_case=bool(form.get("as_case")), seen=parse_version(form.get("seen"), "seen")
    )


ActOf = Annotated[acts.Act, Depends(the_act)]


def the_form(request: Request) -> dict[str, str]:
    """A POST's fields, the last value of each (the guard has checked its CSRF token)."""
    return request.state.form


Form = Annotated[dict[str, str], Depends(the_form)]


def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    desk = the_desk(request)
    html = (
        templates()
        .get_template(name)
        .render(
            person=request.state.person,
            csrf=request.state.csrf,
            sign_in=desk.access.needs_sign_in,
            **context,
        )
    )
    return HTMLResponse(html, status_code=status)


# what an act's answer may say on the page it returns to: the query names one of these keys and
# its numbers, never the words (a link someone else made must not put its text in a success banner)
DONE = {
    "mark": "mark recorded",
    "correction": "correction recorded",
    "retraction": "retraction recorded",
    "same": "same story recorded",
    "split": "two stories recorded",
    "answers": "answers recorded",
    "approved": "approved",
    "send": "update sent",
    "nothing": "nothing to send: every channel has the current version, or the brief waits for approval",
}


def done(request: Request, what: str, outcome: acts.Outcome, then: str) -> Response:
    """After an act (``ops.acts``, as the command line's): say what it did on ``then``."""
    query: dict[str, Any] = {"date": outcome.day.isoformat(), "done": what}
    if outcome.version is not None:
        query["v"] = outcome.version
    if request.state.form.get("as_case"):
        query |= {"cases": len(outcome.cases), "refused": len(outcome.refused)}
    if outcome.sent:
        query["sent"] = list(outcome.sent)
    if outcome.delivery is not None and outcome.delivery.pending is not None:
        query["pending"] = f"{outcome.delivery.pending:%H:%M}"
    story = request.state.form.get("story", "")
    if story:
        query["open"] = story
    anchor = f"#{quote(story)}" if story else ""  # back to the item acted on, its panel open
    return RedirectResponse(f"{then}?{urlencode(query, doseq=True)}{anchor}", status_code=303)


def stale_page(request: Request, refused: StaleAct) -> HTMLResponse:
    """An act refused because its form was made from an earlier version (409): what changed since,
    by whom, and the same act offered again, made from the current version, to send on purpose."""
    sent = [(k, v) for k, values in request.state.fields.items() if k not in ("csrf", "seen") for v in values]
    return page(
        request,
        "stale.html.j2",
        status=409,
        day=request.state.form.get("date", ""),
        seen=refused.seen,
        current=refused.current,
        changes=refused.changes,
        acts=refused.acts,
        action=request.url.path,
        fields=sent,
        shown=[(k, v) for k, v in sent if k not in ("date", "story", "as_case") and v],
    )


def banner(request: Request) -> str | None:
    """The line an act's answer shows, made from ``DONE``, the numbers of the query and the names of
    configured channels only; None for a key that is not one of the desk's."""
    params = request.query_params
    said = DONE.get(params.get("done", ""))
    if said is None:
        return None
    try:
        version = parse_version(params.get("v"), "v")
        cases, refused = (
            parse_version(params.get("cases"), "cases"),
            parse_version(params.get("refused"), "refused"),
        )
    except InputError:
        return None
    if cases is not None:
        said += f", kept as {cases} regression case(s)"
        if refused:
            said += f" ({refused} not kept: it contradicts a case in the set)"
    if version is not None:
        said += f" v{version}" if said == "approved" else f": v{version}"
    channels = {c.name for c in the_desk(request).settings.delivery.channels}
    sent = [name for name in params.getlist("sent") if name in channels]
    if said.startswith(("approved", "update sent")):
        said += f"; sent to {', '.join(sent) or 'no channel'}"
    elif sent:
        said += f"; sent to {', '.join(sent)}"
    pending = params.get("pending", "")
    if re.fullmatch(r"([01]\d|2[0-3]):[0-5]\d", pending):  # a time, never words
        said += f"; the update to readers goes out at {pending} UTC"
    return said
