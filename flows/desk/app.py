"""The editor's desk: a FastAPI application over the same functions as the CLI.

Pages render projections and the published files; every act (a mark, a correction, a retraction,
answers, an approval) calls the step the CLI calls, appends the same events with the person's name
and ``via: "desk"``, then publishes the new version as ``brief review`` does.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

import jinja2
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from flows.desk import reads
from flows.desk.access import SESSION_COOKIE, SESSION_SECONDS, access_for
from flows.desk.gate import Gate, served_hosts
from storage.errors import BriefError, InputError
from storage.events import Event, utcnow
from tasks import render, versions
from tasks.settings import Settings
from tasks.steps.publish import labels_for

HERE = Path(__file__).parent
MAX_FORM = 64 * 1024
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
OPEN_PATHS = ("/signin", "/static/")


@functools.cache
def templates() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(HERE / "templates")),
        autoescape=True,  # every template: feed and model text is always escaped
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def create_app(
    settings: Settings, host: str = "127.0.0.1", person: str | None = None, ui_url: str | None = None
) -> FastAPI:
    """The desk for ``settings``' store; refuses (ConfigError) a non-loopback ``host`` without people.
    ``ui_url``: the Prefect UI the runs page links to (default: from Prefect's settings)."""
    from flows.deliver import approver
    from flows.desk.runs import prefect_ui_url

    prefect_ui = ui_url or prefect_ui_url()

    access = access_for(settings, host, person or approver())
    store = settings.storage.event_store()
    writing = threading.Lock()  # one act at a time: each publishes a version
    app = FastAPI(title="dailybrief desk", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable) -> Response:
        cookie = request.cookies.get(SESSION_COOKIE)
        claimed = access.parse(cookie)
        fresh = None
        if claimed is None:  # no session, a forged or an expired one: a new anonymous (or local) one
            fresh = cookie = access.new_session(access.local_person or "")
            claimed = access.local_person or ""
        assert cookie is not None
        request.state.cookie = cookie
        request.state.person = access.authorised(claimed)
        request.state.csrf = access.csrf_token(cookie)
        request.state.form = {}
        request.state.fields = {}
        open_path = request.url.path.startswith(OPEN_PATHS)
        response: Response
        if request.method == "POST":
            body = await request.body()  # the gate has refused a body over MAX_FORM already
            fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            form = {k: v[-1] for k, v in fields.items()}
            request.state.fields = fields  # every value of a field named more than once (ticks)
            if fresh is not None or not access.csrf_ok(cookie, form.get("csrf")):
                return _finish(
                    _text(
                        403, "refused: the form's CSRF token is missing or wrong; reload the page, try again"
                    ),
                    fresh,
                )
            if request.state.person is None and not open_path:
                return _finish(_text(401, "refused: sign in first"), fresh)
            request.state.form = form
        elif request.state.person is None and not open_path:
            return _finish(RedirectResponse("/signin", status_code=303), fresh)
        response = await call_next(request)
        return _finish(response, fresh)

    # added last, so it is the outermost layer: nothing inside runs for a request it refuses
    app.add_middleware(
        Gate, hosts=served_hosts(host, settings.desk.hosts), max_body=MAX_FORM, headers=HEADERS
    )

    def page(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = (
            templates()
            .get_template(name)
            .render(
                person=request.state.person,
                csrf=request.state.csrf,
                sign_in=access.needs_sign_in,
                **context,
            )
        )
        return HTMLResponse(html, status_code=status)

    def day_of(request: Request) -> date:
        text = request.query_params.get("date") or request.state.form.get("date")
        if text:
            try:
                return date.fromisoformat(text)
            except ValueError:
                raise InputError(f"date {text!r} is not a date; use YYYY-MM-DD") from None
        latest = reads.latest_day(store)
        if latest is None:
            raise InputError("no brief is published yet; run 'brief run' first")
        return latest

    def act(request: Request, what: str, make: Callable[[Any], list[Event]], then: str) -> Response:
        """Record a person's act (events from a CLI step), publish the new version, go to ``then``;
        with the form's "as_case" ticked, keep the correction as a regression case too."""
        from flows.review import republish
        from ops.policy import governed_context

        day = day_of(request)
        done = f"{what} recorded"
        with writing:
            ctx, _ = governed_context(settings, day, f"desk-{what}-{utcnow().strftime('%Y%m%dT%H%M%S%f')}")
            events = make(ctx)
            ctx.store.append(events)
            published, _ = republish(ctx)
            if request.state.form.get("as_case"):
                from ops.regress import cases_of_corrections

                refused: list[str] = []
                who = request.state.person or "desk"
                kept = cases_of_corrections(settings, ctx.store, events, who, refused)
                done += f", kept as {len(kept)} regression case(s)"
                done += f" ({len(refused)} not kept: it contradicts a case in the set)" if refused else ""
        query = urlencode({"date": day.isoformat(), "done": f"{done}: v{published.version}"})
        return RedirectResponse(f"{then}?{query}", status_code=303)

    @app.exception_handler(BriefError)
    async def mistake(request: Request, exc: BriefError) -> Response:
        status = 400 if isinstance(exc, InputError) else 500
        return _finish(page(request, "error.html.j2", status=status, message=str(exc)), None)

    @app.get("/")
    def home() -> Response:
        return RedirectResponse("/today", status_code=303)

    # --- sign in ---------------------------------------------------------------------------

    @app.get("/signin")
    def signin_form(request: Request) -> Response:
        return page(request, "signin.html.j2", people=sorted(access.tokens), failed=False)

    @app.post("/signin")
    def signin(request: Request) -> Response:
        form = request.state.form
        name, token = form.get("name", ""), form.get("token", "")
        if not access.needs_sign_in:
            return RedirectResponse("/today", status_code=303)
        if not access.check_token(name, token):
            return page(request, "signin.html.j2", status=401, people=sorted(access.tokens), failed=True)
        response = RedirectResponse("/today", status_code=303)
        _set_session(response, access.new_session(name))
        return response

    @app.post("/signout")
    def signout(request: Request) -> Response:
        access.revoke(request.state.cookie)
        response = RedirectResponse("/signin" if access.needs_sign_in else "/today", status_code=303)
        _set_session(response, access.new_session(access.local_person or ""))
        return response

    # --- today -----------------------------------------------------------------------------

    @app.get("/today")
    def today(request: Request) -> Response:
        day = day_of(request)
        wanted = request.query_params.get("version")
        version = int(wanted) if wanted and wanted.isdigit() else None
        doc = reads.document(store, day, version)
        return page(
            request,
            "today.html.j2",
            day=day.isoformat(),
            brief=render.view(doc, labels_for(settings)),
            items=[(i["story_id"], i["title"]) for i in doc["items"]],
            parts={i["story_id"]: i["citations"] for i in doc["items"]},
            current=version is None,
            marks=("off-topic", "related", "core", "lead"),
            done=request.query_params.get("done"),
            questions=len(reads.open_questions(store, day)),
        )

    @app.post("/today/mark")
    def mark(request: Request) -> Response:
        from flows.review import apply_marks

        form, who = request.state.form, request.state.person
        marks = {form.get("story", ""): form.get("mark", "")}
        return act(request, "mark", lambda ctx: apply_marks(ctx, marks, by=who, via="desk"), "/today")

    @app.post("/today/correct")
    def correct(request: Request) -> Response:
        from tasks import steps

        form, who = request.state.form, request.state.person
        return act(
            request,
            "correction",
            lambda ctx: steps.correct_item(
                ctx,
                form.get("story", ""),
                form.get("field", ""),
                form.get("value", ""),
                form.get("note", ""),
                who,
                "desk",
            ),
            "/today",
        )

    @app.post("/today/retract")
    def retract(request: Request) -> Response:
        from tasks import steps

        form, who = request.state.form, request.state.person
        return act(
            request,
            "retraction",
            lambda ctx: steps.retract_item(ctx, form.get("story", ""), form.get("note", ""), who, "desk"),
            "/today",
        )

    @app.post("/today/same")
    def same(request: Request) -> Response:
        from tasks import steps

        form, who = request.state.form, request.state.person
        stories = [form.get("story", ""), form.get("other", "")]
        return act(request, "same story", lambda ctx: steps.same_story(ctx, stories, who, "desk"), "/today")

    @app.post("/today/split")
    def split(request: Request) -> Response:
        from tasks import steps

        form, who = request.state.form, request.state.person
        apart = request.state.fields.get("apart", [])
        return act(
            request,
            "two stories",
            lambda ctx: steps.two_stories(ctx, form.get("story", ""), apart, who, "desk"),
            "/today",
        )

    # --- story ------------------------------------------------------------------------------

    @app.get("/story")
    def story(request: Request) -> Response:
        from flows.desk.timeline import story_timeline

        story_id = request.query_params.get("id", "")
        found = story_timeline(store, story_id) if story_id else None
        if found is None:
            raise InputError(f"no story {story_id!r} in the log; open one from Today or from Search")
        return page(request, "story.html.j2", t=found)

    # --- search -----------------------------------------------------------------------------

    @app.get("/search")
    def find(request: Request) -> Response:
        import time

        from flows.desk.search import search

        q = request.query_params.get("q", "").strip()
        latest = reads.latest_day(store) or date.today()
        end = _date_param(request.query_params.get("end"), "end") or latest
        start = _date_param(request.query_params.get("start"), "start") or end - timedelta(days=30)
        t0 = time.perf_counter()
        results = search(store, q, start, end) if q else None
        ms = (time.perf_counter() - t0) * 1000
        return page(
            request,
            "search.html.j2",
            q=q,
            start=start.isoformat(),
            end=end.isoformat(),
            results=results,
            ms=ms,
        )

    # --- sources ----------------------------------------------------------------------------

    @app.get("/sources")
    def sources(request: Request) -> Response:
        from flows.desk import health

        end = _date_param(request.query_params.get("date"), "date") or reads.latest_day(store) or date.today()
        return page(
            request,
            "sources.html.j2",
            end=end.isoformat(),
            earlier=(end - timedelta(days=health.WINDOW_DAYS)).isoformat(),
            window=health.WINDOW_DAYS,
            sources=health.source_health(store, settings, end),
            chart_w=health.CHART_W,
            chart_h=health.CHART_H,
            bar_w=health.BAR_W,
        )

    # --- runs -------------------------------------------------------------------------------

    @app.get("/runs")
    def runs(request: Request) -> Response:
        from flows.desk.runs import WINDOW_DAYS, recent_runs

        end = _date_param(request.query_params.get("date"), "date") or reads.latest_day(store) or date.today()
        return page(
            request,
            "runs.html.j2",
            end=end.isoformat(),
            earlier=(end - timedelta(days=WINDOW_DAYS)).isoformat(),
            window=WINDOW_DAYS,
            runs=recent_runs(store, end, prefect_ui),
            ui_url=prefect_ui,
        )

    # --- questions -------------------------------------------------------------------------

    @app.get("/questions")
    def questions(request: Request) -> Response:
        day = day_of(request)
        return page(
            request,
            "questions.html.j2",
            day=day.isoformat(),
            questions=reads.open_questions(store, day),
            done=request.query_params.get("done"),
        )

    @app.post("/questions")
    def answer(request: Request) -> Response:
        from flows.review import interpret
        from tasks import steps

        form, who = request.state.form, request.state.person

        def answers(ctx) -> list[Event]:
            events: list[Event] = []
            for q in reads.open_questions(store, ctx.day):
                key = f"q:{q['question_id']}"
                if key not in form:
                    continue  # not on the page the person answered: left open
                try:
                    given, by = interpret(q, form[key])
                except InputError as problem:
                    raise InputError(f"question {q['prompt']!r}: {problem}") from None
                events += steps.resolve(ctx, q, given, by, person=who, via="desk")
            if not events:
                raise InputError("none of these questions is open any more; reload the page")
            return events

        return act(request, "answers", answers, "/questions")

    # --- hold ------------------------------------------------------------------------------

    @app.get("/hold")
    def hold(request: Request) -> Response:
        day = day_of(request)
        state = reads.delivery_state(store, day)
        return page(
            request,
            "hold.html.j2",
            day=day.isoformat(),
            hold=settings.delivery.hold,
            held=state.held,
            approved=state.approved,
            delivered=sorted(state.delivered.values(), key=lambda d: d["at"]),
            done=request.query_params.get("done"),
        )

    @app.post("/hold/approve")
    def approve(request: Request) -> Response:
        from flows.deliver import approve as approve_day

        day = day_of(request)
        with writing:
            outcome = approve_day(settings, day, request.state.person, via="desk")
        sent = ", ".join(s.channel for s in outcome.sent if s.ok) or "no channel"
        query = urlencode({"date": day.isoformat(), "done": f"approved v{outcome.version}; sent to {sent}"})
        return RedirectResponse(f"/hold?{query}", status_code=303)

    # --- history ---------------------------------------------------------------------------

    @app.get("/history")
    def history(request: Request) -> Response:
        return page(request, "history.html.j2", days=reads.versions(store))

    @app.get("/diff")
    def diff(request: Request) -> Response:
        day = day_of(request)
        a, b = request.query_params.get("a", ""), request.query_params.get("b", "")
        if not (a.isdigit() and b.isdigit()):
            raise InputError("give two versions to compare: a=N&b=M")
        older, newer = reads.document(store, day, int(a)), reads.document(store, day, int(b))
        changes = versions.diff(older, newer)
        acts = reads.acts(store, day)
        known = {v.version: v for v in reads.versions(store, [day]).get(day, [])}
        return page(
            request,
            "diff.html.j2",
            day=day.isoformat(),
            a=int(a),
            b=int(b),
            changes=[(c, _causes(c, older, newer, acts)) for c in changes],
            published={n: v.published_at for n, v in known.items()},
            delivered=sorted(reads.delivery_state(store, day).delivered.values(), key=lambda d: d["at"]),
        )

    return app


def _causes(change: versions.ItemChange, older: dict, newer: dict, acts: list[dict]) -> list[dict]:
    """People's acts about the changed item: on its story, or on an article it cites (or links)."""
    cited = {
        c["article_id"]
        for doc in (older, newer)
        for item in doc["items"]
        if item["story_id"] == change.story_id
        for c in item["citations"]
    }
    return [
        a
        for a in acts
        if a["subject"] == change.story_id
        or a["subject"] in cited
        or cited.intersection(a["payload"].get("article_ids") or ())  # a same-story link names both
    ]


def _date_param(text: str | None, name: str) -> date | None:
    if not text:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise InputError(f"{name} {text!r} is not a date; use YYYY-MM-DD") from None


def _text(status: int, message: str) -> Response:
    return Response(message + "\n", status_code=status, media_type="text/plain; charset=utf-8")


def _set_session(response: Response, cookie: str) -> None:
    response.set_cookie(
        SESSION_COOKIE, cookie, max_age=SESSION_SECONDS, httponly=True, samesite="strict", path="/"
    )


def _finish(response: Response, fresh: str | None) -> Response:
    for name, value in HEADERS.items():
        response.headers[name] = value
    if fresh is not None:
        _set_session(response, fresh)
    return response


def listen(app: FastAPI, host: str, port: int) -> None:
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
