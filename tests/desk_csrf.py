"""The CSRF token of a session on a desk without ``[desk.people]`` and with an empty store: no page
of it carries a form to read the token from (its /signin says no sign-in is needed), so it is the
token the desk gives the session its cookie names."""

from __future__ import annotations

import base64
import json


def session_csrf(client) -> str:
    """Opens a session (a page of the desk) on a test client, then the desk's token for it."""
    client.get("/signin")
    return csrf_for(client.cookies["desk_session"], client.app)


def csrf_for(cookie: str, app) -> str:
    """The token ``app`` gives the session ``cookie`` holds."""
    body = cookie.split(".", 1)[0]  # Starlette's session cookie: base64 JSON, then its signature
    session = json.loads(base64.b64decode(body + "=" * (-len(body) % 4)))
    return app.state.desk.access.csrf_token(session)
