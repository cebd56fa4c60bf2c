"""What every page of the desk shares: the desk's resources, the dependencies that give a page its
store, its day and its person (``Depends``), a page rendered and an act's answer. A query's or a
form's date is read by ``tasks.dates``, as every entrypoint reads one."""

from __future__ import annotations

import functools
import re
import secrets
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote, urlencode
from zoneinfo import ZoneInfo

import jinja2
from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from flows.desk.access import Access
from flows.views.text import counted
from ops import acts, reads
from ops.changes import FACE_WORDS
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
    said: Said = field(default_factory=lambda: Said())

    @property
    def store(self) -> ParquetEventStore:
        return self.resources.store

    def today(self) -> date:
        """Today in the configured timezone, by the desk's clock."""
        return today(self.settings, self.resources.clock)


def moment(at: datetime | str) -> datetime:
    """A time from the log or a brief (a datetime, or ISO 8601 text), in UTC."""
    when = datetime.fromisoformat(at) if isinstance(at, str) else at
    return when.astimezone(UTC) if when.tzinfo is not None else when


def shown_time(at: datetime | str | None) -> str:
    """A moment as every page of the desk shows one: ``2025-08-05 18:00 UTC`` ("?": not known)."""
    return "?" if at is None else f"{moment(at):%Y-%m-%d %H:%M} UTC"


def shown_window(start: str, end: str, zone: str = "UTC") -> str:
    """A brief's news window as the desk shows it: its days when it runs from midnight to midnight
    in the configured timezone ``zone`` (``tasks.dedup.news_window`` stores local midnight as UTC),
    the last day being the one before its end (``2025-08-05 – 2025-08-06``, or one date for one
    day); else from moment to moment, as ``shown_time``."""
    first, last = (moment(at).astimezone(ZoneInfo(zone)) for at in (start, end))
    if first.time() == last.time() == time(0) and last > first:
        days = first.date(), (last - timedelta(days=1)).date()
        return days[0].isoformat() if days[0] == days[1] else f"{days[0]} – {days[1]}"
    return f"{moment(start):%Y-%m-%d %H:%M} – {moment(end):%Y-%m-%d %H:%M} UTC"


def short_id(run_id: str) -> str:
    """A run's id as a narrow column shows it (the whole id goes in its title and link): a Prefect
    run's first 8 hex digits, an act's name without its timestamp (``correct-…``), else its first
    12 characters; an id that short already, whole."""
    if len(run_id) <= 12:
        return run_id
    named = re.match(r"([a-z][a-z-]*?)-\d{8}T", run_id)
    if named:
        return f"{named.group(1)}-…"
    if re.fullmatch(r"[0-9a-f]{8}-[0-9a-f-]{27}", run_id):
        return f"{run_id[:8]}…"
    return f"{run_id[:12]}…"


@functools.cache
def templates() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")),
        autoescape=True,  # every template: feed and model text is always escaped
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["time"] = shown_time
    env.filters["counted"] = counted  # "1 day", "2 days"
    env.filters["short_id"] = short_id
    env.globals["news_window"] = shown_window
    for name in env.list_templates():  # compiled with the desk, not on a page's first load
        env.get_template(name)
    return env


def parse_version(text: str | None, name: str = "version") -> int | None:
    """A version number a query gave (None: not given); anything but ASCII digits is one line (400):
    ``²`` is a digit to ``str.isdigit`` but not a number."""
    if not text:
        return None
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise InputError(f"{name} {shown(text)} is not a version number; use e.g. {name}=2")
    if int(text) == 0:
        raise InputError(f"{name}=0 names no version: a day's versions are numbered from 1")
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
            zone=desk.settings.timezone,  # the configured timezone: a news window's days are its
            **context,
        )
    )
    return HTMLResponse(html, status_code=status)


# what an act's answer may say on the page it returns to: the words are these, and the numbers the
# desk's own record of the act (``Said``), never the query's (a link someone else made must put
# neither its text nor its numbers in a success banner)
DONE = {
    "mark": "mark recorded",
    "correction": "correction recorded",
    "retraction": "retraction recorded",
    "restored": "retraction undone",
    "same": "same story recorded",
    "split": "two stories recorded",
    "answers": "answers recorded",
    "approved": "approved",
    "send": "update sent",
    "nothing": "nothing to send: every channel has the current version, or the brief waits for approval",
    "failed": "not sent",
}
KEPT_LINES = 2000  # acts' lines the desk remembers (the oldest forgotten first): one a redirect


@dataclass
class Said:
    """What each act's answer said, kept by the desk for the session that acted: the redirect names
    a random key to it (``said=``), and the page it returns to shows the line only to that session."""

    lines: OrderedDict[str, tuple[str, str]] = field(default_factory=OrderedDict)  # key -> (sid, line)

    def keep(self, sid: str, line: str) -> str:
        key = secrets.token_urlsafe(12)
        self.lines[key] = (sid, line)
        while len(self.lines) > KEPT_LINES:
            self.lines.popitem(last=False)
        return key

    def line(self, sid: object, key: str | None) -> str | None:
        kept = self.lines.get(key or "")
        return kept[1] if kept is not None and kept[0] == sid else None


def said_line(
    desk: Desk,
    what: str,
    *,
    version: int | None = None,
    sent: Sequence[str] = (),
    pending: datetime | None = None,
    cases: int | None = None,
    refused: int = 0,
    held: bool = False,
    failed: Sequence[tuple[str, str]] = (),
    unchanged: bool = False,
) -> str:
    """The line after an act: its words (``DONE``), the version it made (``unchanged``: none, the
    brief reads as it did, as the command line says), the channels it reached (of
    the configured ones), those it failed to reach and why (``failed``: channel, reason), and when
    the update it left pending goes out."""
    said = DONE[what]
    if cases is not None:
        said += f", kept as {counted(cases, 'example')} later scoring is checked against"
        if refused:
            said += f" ({refused} not kept: it contradicts an example kept before)"
    if version is not None and unchanged:  # recorded, but the brief reads as it did: no new version
        said += f"; nothing changed: v{version} already reads so"
    elif version is not None:
        said += f" v{version}" if what == "approved" else f": v{version}"
    channels = {c.name for c in desk.settings.delivery.channels}
    reached = [name for name in sent if name in channels]
    if what in ("approved", "send"):
        said += f"; sent to {', '.join(reached) or 'no channel'}"
    elif reached:
        said += f"; sent to {', '.join(reached)}"
    if failed:
        why = "; ".join(f"{name} ({reason or 'no reason given'})" for name, reason in failed)
        said += f"; FAILED to reach {why}: Hold's \"send now\" or 'brief deliver' tries again"
    if pending is not None:
        whom = "the review copy to the editors" if held else "the update to readers"
        said += f"; {whom} goes out at {pending:%H:%M} UTC"
    return said


def answered(request: Request, what: str, line: str, then: str, query: Mapping[str, str]) -> Response:
    """Back to ``then`` after an act, its line kept for this session; the query names its key only."""
    key = the_desk(request).said.keep(request.session["sid"], line)
    story = request.state.form.get("story", "")
    where = {**query, "done": what, "said": key} | ({"open": story} if story else {})
    anchor = f"#{quote(story)}" if story else ""  # back to the item acted on, its panel open
    return RedirectResponse(f"{then}?{urlencode(where)}{anchor}", status_code=303)


def done(request: Request, what: str, outcome: acts.Outcome, then: str) -> Response:
    """After an act (``ops.acts``, as the command line's): say what it did on ``then``."""
    pending = outcome.delivery.pending if outcome.delivery is not None else None
    line = said_line(
        the_desk(request),
        what,
        version=outcome.version,
        sent=outcome.sent,
        pending=pending,
        cases=len(outcome.cases) if request.state.form.get("as_case") else None,
        refused=len(outcome.refused),
        held=outcome.held,
        failed=outcome.failed,
        unchanged=outcome.published is not None and not outcome.published.changed,
    )
    return answered(request, what, line, then, {"date": outcome.day.isoformat()})


def stale_page(request: Request, refused: StaleAct) -> HTMLResponse:
    """An act refused because its form was made from an earlier version (409): what changed since,
    by whom, and the same act offered again, made from the current version, to send on purpose."""
    reads_only = ACT_FIELDS.get(request.url.path)  # a shared form sends fields this act does not read
    sent = [
        (k, v)
        for k, values in request.state.fields.items()
        if k not in ("csrf", "seen") and (reads_only is None or k in reads_only)
        for v in values
    ]
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
        back="/hold" if request.url.path.startswith("/hold/") else "/today",  # the page the form was on
        fields=sent,
        shown=asked_for(the_desk(request), request.state.form.get("date", ""), sent),
    )


def asked_for(desk: Desk, day: str, sent: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """What a refused form asked for, in words: the item and any other story by headline (as the
    current brief of ``day`` has them; a story it lacks by its id), then the rest as typed."""
    titles: dict[str, str] = {}
    try:
        wanted = parse_date(day)
        doc = reads.document(desk.store, wanted) if wanted is not None else None
        if doc is not None:
            titles = {i.story_id: i.title for i in doc.items} | {
                r.story_id: r.title for r in doc.retracted or ()
            }
    except (InputError, ValueError):
        pass  # no brief (or no date) to name them from: the ids as sent
    typed = any(k == "other_id" and v.strip() for k, v in sent)  # a story id typed wins over the list
    stories = [("item", titles.get(v, v)) for k, v in sent if k == "story" and v]
    words = [
        (
            FORM_WORDS.get(k, k),
            titles.get(v, v) if k in ("other", "other_id") else FACE_WORDS.get(v, v) if k == "field" else v,
        )
        for k, v in sent
        if k not in ("date", "story", "as_case", "retraction", "sure") and v and not (typed and k == "other")
    ]
    return stories + words


# the fields an act reads, where its form holds more: an item's marks and "same story as" share
# one form, and a mark button sends the form's "same story as" choice too
ACT_FIELDS = {
    "/today/mark": frozenset({"date", "story", "mark", "as_case"}),
    "/today/same": frozenset({"date", "story", "other", "other_id", "as_case"}),
}


# what a form's parts are called where a person reads them back (the 409 page's "what you asked")
FORM_WORDS = {
    "field": "what",
    "value": "new text",
    "note": "note",
    "mark": "mark",
    "other": "the same story as",
    "other_id": "the same story as",
    "apart": "articles apart",
}


def banner(request: Request) -> str | None:
    """The line the act this session made said (``said``), from the desk's own record; None for a
    key the desk did not give this session, whatever the query holds."""
    return the_desk(request).said.line(request.session.get("sid"), request.query_params.get("said"))
