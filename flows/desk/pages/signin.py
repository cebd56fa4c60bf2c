"""Sign in and out."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from flows.desk.web import DeskOf, Form, page, set_session

router = APIRouter()


@router.get("/")
def home() -> Response:
    return RedirectResponse("/today", status_code=303)


@router.get("/signin")
def signin_form(request: Request, desk: DeskOf) -> Response:
    return page(request, "signin.html.j2", people=sorted(desk.access.tokens), failed=False)


@router.post("/signin")
def signin(request: Request, desk: DeskOf, form: Form) -> Response:
    access = desk.access
    name, token = form.get("name", ""), form.get("token", "")
    if not access.needs_sign_in:
        return RedirectResponse("/today", status_code=303)
    if not access.check_token(name, token):
        return page(request, "signin.html.j2", status=401, people=sorted(access.tokens), failed=True)
    response = RedirectResponse("/today", status_code=303)
    set_session(response, access.new_session(name))
    return response


@router.post("/signout")
def signout(request: Request, desk: DeskOf) -> Response:
    access = desk.access
    access.revoke(request.state.cookie)  # a copy of this cookie opens nothing from now on
    response = RedirectResponse("/signin" if access.needs_sign_in else "/today", status_code=303)
    set_session(response, access.new_session(access.local_person or ""))
    return response
