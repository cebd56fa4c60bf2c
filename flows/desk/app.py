"""The editor's desk: a FastAPI application over the same functions as the CLI.

Pages render projections and the published files; every act (a mark, a correction, a retraction,
same story, two stories, answers, an approval) parses its form and calls the function of
``ops.acts`` the command line calls: the same events, with the person's name and ``via: "desk"``,
the same new version, and the same hold rules (answering a held brief's questions approves it).
"""

from __future__ import annotations

import functools
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
from ops import acts
from storage.errors import BriefError, InputError
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
    # not no-referrer: under it a browser sends "Origin: null" with the desk's own forms, which the
    # gate refuses as an opaque origin; same-origin keeps the Origin for them and no referrer for others
    "Referrer-Policy": "same-origin",
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
    ``ui_url``: the Prefect UI the runs page links to (default: from Prefect's settings, read when
    the runs page is first shown: the other pages run without Prefect)."""
    access = access_for(settings, host, person or acts.approver())
    store = settings.storage.event_store()
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

    def by(request: Request) -> acts.Act:
        """The act's who, where and day: the person signed in, at the desk, the form's day."""
        who = request.state.person or "desk"
        return acts.Act(day_of(request), who, "desk", as_case=bool(request.state.form.get("as_case")))

    def done(request: Request, what: str, outcome: acts.Outcome, then: str) -> Response:
        """After an act (``ops.acts``, as the command line's): say what it did on ``then``."""
        said = f"{what} recorded"
        if request.state.form.get("as_case"):
            said += f", kept as {len(outcome.cases)} regression case(s)"
            if outcome.refused:
                said += f" ({len(outcome.refused)} not kept: it contradicts a case in the set)"
        said += f": v{outcome.version}"
        if outcome.sent:
            said += f"; sent to {', '.join(outcome.sent)}"
        query = urlencode({"date": outcome.day.isoformat(), "done": said})
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
        form = request.state.form
        outcome = acts.mark(settings, by(request), {form.get("story", ""): form.get("mark", "")})
        return done(request, "mark", outcome, "/today")

    @app.post("/today/correct")
    def correct(request: Request) -> Response:
        form = request.state.form
        fields = {form.get("field", ""): form.get("value", "")}
        outcome = acts.correct(settings, by(request), form.get("story", ""), fields, form.get("note", ""))
        return done(request, "correction", outcome, "/today")

    @app.post("/today/retract")
    def retract(request: Request) -> Response:
        form = request.state.form
        outcome = acts.retract(settings, by(request), form.get("story", ""), form.get("note", ""))
        return done(request, "retraction", outcome, "/today")

    @app.post("/today/same")
    def same(request: Request) -> Response:
        form = request.state.form
        outcome = acts.same_story(settings, by(request), [form.get("story", ""), form.get("other", "")])
        return done(request, "same story", outcome, "/today")

    @app.post("/today/split")
    def split(request: Request) -> Response:
        form, apart = request.state.form, request.state.fields.get("apart", [])
        outcome = acts.two_stories(settings, by(request), form.get("story", ""), apart)
        return done(request, "two stories", outcome, "/today")

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
        from flows.desk.runs import WINDOW_DAYS, prefect_ui_url, recent_runs

        prefect_ui = ui_url or prefect_ui_url()
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

        form, act = request.state.form, by(request)
        replies = []
        for q in reads.open_questions(store, act.day):
            key = f"q:{q['question_id']}"
            if key not in form:
                continue  # not on the page the person answered: left open
            try:
                given, how = interpret(q, form[key])
            except InputError as problem:
                raise InputError(f"question {q['prompt']!r}: {problem}") from None
            replies.append(acts.Answer(q["question_id"], given, how))
        if not replies:
            raise InputError("none of these questions is open any more; reload the page")
        return done(request, "answers", acts.answer(settings, act, replies), "/questions")

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
        outcome = acts.approve(settings, by(request))
        sent = ", ".join(outcome.sent) or "no channel"
        said = f"approved v{outcome.version}; sent to {sent}"
        return RedirectResponse(f"/hold?{urlencode({'date': outcome.day.isoformat(), 'done': said})}", 303)

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
