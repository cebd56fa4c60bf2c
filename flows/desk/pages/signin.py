"""Sign in and out."""

from __future__ import annotations

from urllib.parse import quote, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from flows.desk.web import DeskOf, Form, page

router = APIRouter()
LANDING = "/today"
MAX_NEXT = 2000  # characters of a page's path and query kept for after the sign-in


def next_page(asked: str | None) -> str:
    """Where a sign-in leads: ``asked`` when it is a path of the desk itself (``/runs?date=…``),
    else Today. Never another site: not an absolute URL, not ``//host`` (a browser reads it as
    one), not a scheme, not a backslash (some browsers read ``/\\host`` as ``//host``), not a
    control character; nor the sign-in page again."""
    if not asked or len(asked) > MAX_NEXT or not asked.startswith("/") or asked.startswith("//"):
        return LANDING
    if "\\" in asked or any(ord(c) < 32 or ord(c) == 127 for c in asked):
        return LANDING
    parts = urlsplit(asked)
    if parts.scheme or parts.netloc or parts.path.startswith(("/signin", "/signout")):
        return LANDING
    return asked


def signin_for(request: Request) -> str:
    """The sign-in page, told the page asked for (its path and query) to lead back to it."""
    asked = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    kept = next_page(asked)
    return "/signin" if kept == LANDING else f"/signin?next={quote(kept, safe='')}"


@router.get("/")
def home() -> Response:
    return RedirectResponse(LANDING, status_code=303)


@router.get("/signin")
def signin_form(request: Request) -> Response:
    return page(request, "signin.html.j2", failed=False, next=next_page(request.query_params.get("next")))


@router.post("/signin")
def signin(request: Request, desk: DeskOf, form: Form) -> Response:
    """A name and a token, typed (the page lists no one); an address that has given wrong ones too
    often waits (429) before either is looked at."""
    access = desk.access
    then = next_page(form.get("next"))
    if not access.needs_sign_in:
        return RedirectResponse(then, status_code=303)
    address = request.client.host if request.client else ""
    name = form.get("name", "").strip()
    # counted per address and per name: a local program can forge the address a proxy names
    counted = (f"address {address}", f"name {name.casefold()}")
    wait = max(access.sign_ins.wait(key) for key in counted)
    if wait:
        return Response(
            f"refused: too many wrong sign-ins from this address or for this name; try again in {wait} s\n",
            status_code=429,
            media_type="text/plain; charset=utf-8",
            headers={"Retry-After": str(wait)},
        )
    if not access.check_token(name, form.get("token", "")):
        for key in counted:
            access.sign_ins.failure(key)
        return page(request, "signin.html.j2", status=401, failed=True, next=then)
    # a new session id (none a visitor held before survives); the person's earlier session ends
    access.sign_in(request.session, name)
    return RedirectResponse(then, status_code=303)


@router.post("/signout")
def signout(request: Request, desk: DeskOf) -> Response:
    access = desk.access
    access.revoke(request.session)  # a copy of this cookie opens nothing from now on
    access.open(request.session, access.local_person or "")
    return RedirectResponse("/signin" if access.needs_sign_in else LANDING, status_code=303)
