"""The desk's security headers: the one place they are written.

Every answer carries them: the pages and refusals of the application (``flows/desk/app.py``), the
gate's (``flows/desk/gate.py``), and the 400 the HTTP server gives a request it cannot parse
(``flows/desk/server.py``).
"""

from __future__ import annotations

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


def encoded() -> list[tuple[bytes, bytes]]:
    """The headers as an ASGI server writes them: lower-case names, bytes."""
    return [(name.lower().encode(), value.encode()) for name, value in HEADERS.items()]
