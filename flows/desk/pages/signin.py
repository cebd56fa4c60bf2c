"""Sign in and out."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from flows.desk.web import DeskOf, Form, page

router = APIRouter()


@router.get("/")
def home() -> Response:
    return RedirectResponse("/today", status_code=303)


@router.get("/signin")
def signin_form(request: Request) -> Response:
    return page(request, "signin.html.j2", failed=False)


@router.post("/signin")
def signin(request: Request, desk: DeskOf, form: Form) -> Response:
    """A name and a token, typed (the page lists no one); an address that has given wrong ones too
    often waits (429) before either is looked at."""
    access = desk.access
    if not access.needs_sign_in:
        return RedirectResponse("/today", status_code=303)
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
        return page(request, "signin.html.j2", status=401, failed=True)
    # a new session id (none a visitor held before survives); the person's earlier session ends
    access.sign_in(request.session, name)
    return RedirectResponse("/today", status_code=303)


@router.post("/signout")
def signout(request: Request, desk: DeskOf) -> Response:
    access = desk.access
    access.revoke(request.session)  # a copy of this cookie opens nothing from now on
    access.open(request.session, access.local_person or "")
    return RedirectResponse("/signin" if access.needs_sign_in else "/today", status_code=303)
