"""The editor's desk: a FastAPI application over the same functions as the CLI.

Pages render projections and the published files; every act (a mark, a correction, a retraction,
same story, two stories, answers, an approval) parses its form and calls the function of
``ops.acts`` the command line calls: the same events, with the person's name and ``via: "desk"``,
the same new version, and the same hold rules (answering a held brief's questions approves it).

This module makes the application: its gate and guard (``flows/desk/gate.py``, ``access.py``), its
resources (``web.Desk``, given to the pages by ``Depends``) and a router per page
(``flows/desk/pages``).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
import threading
import unicodedata
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.sessions import SessionMiddleware

from flows.desk import updates
from flows.desk.access import SESSION_COOKIE, SESSION_SECONDS, access_for
from flows.desk.gate import Gate, served_hosts
from flows.desk.headers import HEADERS
from flows.desk.pages import browse, history, hold, questions, signin, today
from flows.desk.server import ActsInFlight
from flows.desk.web import HERE, Desk, page, stale_page, templates
from flows.interrupt import Interrupted
from ops import acts, reads
from ops.workspace import Resources, resources_of
from storage.errors import ActConflict, BriefError, InputError, StaleAct
from tasks.settings import Settings

LOG = logging.getLogger("flows.desk")  # the desk's log: what failed, with its traceback
MAX_FORM = 64 * 1024
DECODED_BYTES = 256 * 2**20  # the log's files the desk keeps decoded in memory (the shared month: 6 MB)
WARM_DAYS = 45  # the latest days' files decoded as the desk starts: what Search, Sources and Runs read
ENDED = "refused: your session ended (signed out, or signed in elsewhere); sign in again"
STOPPING = "refused: the desk is stopping (Ctrl-C); nothing was recorded"
BAD_CSRF = "refused: the form's CSRF token is missing or wrong; reload the page, try again"
OPEN_PATHS = ("/signin", "/static/", "/favicon.ico")
FAVICON = HERE / "static" / "favicon.svg"  # also at /favicon.ico, where a browser asks without a link
STATIC_CACHE = "max-age=600"  # the desk's own stylesheet and script: a page load need not fetch them again


def create_app(
    settings: Settings,
    host: str = "127.0.0.1",
    person: str | None = None,
    ui_url: str | None = None,
    flush_every: float | None = updates.EVERY_S,
    resources: Resources | None = None,
) -> FastAPI:
    """The desk for ``settings``' store; refuses (ConfigError) a non-loopback ``host`` without people.
    ``ui_url``: the Prefect UI the runs page links to (default: from Prefect's settings, read when
    the runs page is shown: the other pages run without Prefect). ``flush_every``: seconds between
    the desk's sends of the updates whose window closed while it serves (``flows/desk/updates.py``).
    ``resources``: the process's (``ops.workspace.resources_of``: the store and the clock every page,
    act and session uses), built here when not given."""
    resources = resources or resources_of(settings, must_exist=False)
    access = access_for(settings, host, person or acts.approver(), resources.clock)
    decoded = reads.keep_decoded(resources.store, DECODED_BYTES)  # the latest days: as it serves
    app = FastAPI(
        title="dailybrief desk",
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=serving(settings, resources, flush_every, WARM_DAYS if decoded else 0),
    )
    app.state.desk = Desk(settings, resources, access, ui_url)
    app.state.acts = in_flight = ActsInFlight()  # what Ctrl-C waits for (flows/desk/server.py)
    templates()  # every page's template compiled now, not on its first load
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable) -> Response:
        session = request.session  # Starlette's signed cookie, read by SessionMiddleware
        claimed = access.person_of(session)
        fresh = claimed is None
        ended = fresh and access.ended(session)
        if claimed is None:  # no session, a forged, expired or signed-out one: a new anonymous (or local) one
            claimed = access.local_person or ""
            access.open(session, claimed)
        request.state.person = access.authorised(claimed)
        request.state.csrf = access.csrf_token(session)
        request.state.form = {}
        request.state.fields = {}
        open_path = request.url.path.startswith(OPEN_PATHS)
        if request.method == "POST":
            body = await request.body()  # the gate has refused a body over MAX_FORM already
            fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            form = {k: v[-1] for k, v in fields.items()}
            request.state.fields = fields  # every value of a field named more than once (ticks)
            if fresh or not access.csrf_ok(session, form.get("csrf")):
                return _finish(_text(403, ENDED if ended else BAD_CSRF))
            if request.state.person is None and not open_path:
                return _finish(_text(401, "refused: sign in first"))
            request.state.form = form
            return await _counted(in_flight, request, call_next)
        elif request.state.person is None and not open_path:  # back to the page asked for once signed in
            return _finish(RedirectResponse(signin.signin_for(request), status_code=303))
        return await _after(request, call_next)

    # the session cookie, read before the guard and written after it; the key is the desk's own
    app.add_middleware(
        SessionMiddleware,
        secret_key=access.key,
        session_cookie=SESSION_COOKIE,
        max_age=SESSION_SECONDS,
        same_site="strict",
        https_only=access.tls,
    )
    # added last, so it is the outermost layer: nothing inside runs for a request it refuses
    app.add_middleware(
        Gate, hosts=served_hosts(host, settings.desk.hosts), max_body=MAX_FORM, headers=HEADERS
    )

    answer_errors(app)
    serve_pages(app)
    return app


def serve_pages(app: FastAPI) -> None:
    """The desk's pages, and what a 405 names: every method of every route on a path (a page's
    GET and its form's POST are two routes)."""
    routers = [pages.router for pages in (signin, today, browse, questions, hold, history)] + [icon]
    app.state.methods = {}
    for router in routers:
        app.include_router(router)
        for route in router.routes:
            if isinstance(route, APIRoute):
                app.state.methods.setdefault(route.path, set()).update(route.methods)


async def _counted(in_flight: ActsInFlight, request: Request, call_next: Callable) -> Response:
    """A form's act, counted while it runs (Ctrl-C waits for it); refused once the desk is stopping."""
    if in_flight.closing:
        return _finish(_text(503, STOPPING))
    in_flight.count += 1
    try:
        return await _after(request, call_next)
    finally:
        in_flight.count -= 1


def serving(
    settings: Settings, resources: Resources, flush_every: float | None, warm_days: int
) -> Callable[[Any], contextlib.AbstractAsyncContextManager]:
    """The application's lifespan: the latest ``warm_days`` of the log decoded in a thread of their
    own (a large store does not hold back the desk's start, nor its first page), and the updates'
    timer (``flows/desk/updates.py``)."""
    timer = updates.lifespan(settings, resources, flush_every)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        if warm_days:
            warming = threading.Thread(
                target=reads.warm, args=(resources.store, warm_days), name="desk-warm", daemon=True
            )
            warming.start()
            app.state.warming = warming
        async with timer(app):
            yield

    return lifespan


icon = APIRouter()


@icon.get("/favicon.ico", include_in_schema=False)
def favicon() -> Response:
    """The desk's icon where a browser asks for one without a link (the pages link the same file)."""
    return FileResponse(FAVICON, media_type="image/svg+xml")


def _wants_page(request: Request) -> bool:
    """Whether a request is a browser's for a page (it accepts HTML), and the gate let it in (the
    person and the form token a page shows are known)."""
    known = getattr(request.state, "csrf", None) is not None and hasattr(request.state, "person")
    return known and "text/html" in request.headers.get("accept", "")


def answer_errors(app: FastAPI) -> None:
    """A mistake in the request is a 400 of one line, a stale act a 409 with what changed, anything
    else a 500 of one line; every one with the desk's headers."""

    @app.exception_handler(BriefError)
    async def mistake(request: Request, exc: BriefError) -> Response:
        written = isinstance(exc, InputError)  # refused before anything was recorded
        if not written:
            LOG.error("%s %s failed: %s", request.method, request.url.path, exc, exc_info=exc)
        status = 400 if written else 500
        read = request.method in ("GET", "HEAD")  # a page asked for: nothing was to be written
        return _finish(
            page(request, "error.html.j2", status=status, message=str(exc), written=written, read=read)
        )

    @app.exception_handler(Exception)
    async def failure(request: Request, exc: Exception) -> Response:
        # outside every middleware (Starlette's ServerErrorMiddleware): the headers are added here
        return _finish(_text(500, "failed: the desk met an error it did not expect; it is in the desk's log"))

    @app.exception_handler(StarletteHTTPException)
    async def no_such(request: Request, exc: StarletteHTTPException) -> Response:
        # a page that is not there, a method a page does not take: one line, as every refusal
        said = {
            404: f"not found: the desk has no page {printable(request.url.path[:100])}",
            405: f"refused: this page does not take {request.method}; use the page's form",
        }
        line = said.get(exc.status_code, f"refused: {exc.detail}")
        if exc.status_code == 404 and request.method == "GET" and _wants_page(request):
            # a person's browser: the line in a page of the desk, with its navigation
            return _finish(page(request, "error.html.j2", status=404, message=line, written=True, read=True))
        answer = _text(exc.status_code, line)
        if exc.status_code == 405:  # the methods every route of the path takes; HEAD wherever GET
            answer.headers["Allow"] = _allowed(request, (exc.headers or {}).get("Allow", ""))
        return _finish(answer)

    @app.exception_handler(ActConflict)
    async def conflict(request: Request, exc: ActConflict) -> Response:
        return _finish(page(request, "error.html.j2", status=409, message=str(exc), written=True, read=False))

    @app.exception_handler(StaleAct)
    async def changed_meanwhile(request: Request, exc: StaleAct) -> Response:
        return _finish(stale_page(request, exc))


def printable(text: str) -> str:
    """``text`` with control and format characters (a NUL, a bidirectional override) shown as
    ``?``: a refusal repeats what was asked, never what it could do to a terminal or a log."""
    return "".join("?" if unicodedata.category(c) in ("Cc", "Cf") else c for c in text)


def _allowed(request: Request, said: str) -> str:
    """What a 405's ``Allow`` names: the methods of the desk's routes on the request's path, or
    what the refusing app said (the static files); HEAD wherever GET (the gate answers it), each once."""
    methods = sorted(request.app.state.methods.get(request.url.path, ())) or [
        m for m in said.split(", ") if m
    ]
    if "GET" in methods:
        methods.append("HEAD")
    return ", ".join(dict.fromkeys(methods))


async def _after(request: Request, call_next: Callable) -> Response:
    response = _finish(await call_next(request))
    if request.url.path.startswith(("/static/", "/favicon.ico")) and response.status_code in (200, 304):
        response.headers["Cache-Control"] = STATIC_CACHE  # no token or data in them
    return response


def _text(status: int, message: str) -> Response:
    return Response(message + "\n", status_code=status, media_type="text/plain; charset=utf-8")


def _finish(response: Response) -> Response:
    for name, value in HEADERS.items():
        response.headers[name] = value
    return response


def bind(host: str, port: int, flag: str = "--port") -> socket.socket:
    """The desk's listening socket, bound before anything is announced: a busy port is one line."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InputError(f"--host {host!r} is not an address of this machine ({exc.strerror})") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InputError(
                f"port {port} on {host} is already in use by another program; "
                f"stop it or choose another with {flag}"
            ) from None
        raise InputError(
            f"cannot listen on {host}:{port} ({exc.strerror}); choose another --host or {flag}"
        ) from None
    return sock


def listen(app: FastAPI, sock: socket.socket, settings: Settings) -> None:
    """Serve the desk on a socket from :func:`bind` until Ctrl-C (or SIGTERM): no new request is
    taken, the acts under way are waited for (a second Ctrl-C stops at once), a page still being
    made gets ``flows.desk.server.GRACE_S``, the timer that sends updates stops, and the command exits
    (``Interrupted``: one line, 130), not after the seconds Python takes to tear a process down."""
    from flows.desk.server import desk_server

    server = desk_server(app, settings)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:  # uvicorn stops, then raises the Ctrl-C it caught
        if app.state.acts.count:  # a second Ctrl-C while an act was under way
            raise Interrupted(
                "the desk stopped at once (Ctrl-C twice); the act under way may be recorded in part: "
                "see History before acting again"
            ) from None
        raise Interrupted(
            "the desk stopped (Ctrl-C); nothing is lost: every act was recorded when made"
        ) from None
    finally:
        sock.close()
