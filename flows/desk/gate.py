"""The desk's outer gate: what a request must be before the application reads a byte of it.

- **Host.** A request names the desk by a loopback name (``127.0.0.1``, ``localhost``, ``[::1]``),
  by the address it listens on, or by a name listed in ``[desk] hosts``; any other ``Host`` is
  refused with 421. This is what stops DNS rebinding: a foreign site whose name resolves to
  127.0.0.1 still sends its own name as ``Host``.
- **Origin.** A POST whose ``Origin`` (or, without one, ``Sec-Fetch-Site``) says another site sent
  it is refused with 403, before the CSRF token is even looked at.
- **Size.** A body announced larger than the limit by ``Content-Length`` is refused with 413 before
  it is read; a body without one is read only up to the limit, then refused the same way. A
  ``Content-Length`` that is not a number is refused with 400.
- **HEAD** is answered as GET is, without the body.

Every refusal carries the desk's security headers and says in one line what was wrong.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an address, IPv6 with or without brackets) is this machine's
    loopback: the address is parsed, so ``127.evil.example`` is not."""
    name = host.strip().strip("[]").lower().rstrip(".")
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str | None:
    """The host of a ``Host`` header without its port (``[::1]:8484`` → ``::1``); None when the
    header is not a host at all."""
    text = header.strip()
    if not text or any(c in text for c in "/\\@?# \t"):
        return None
    try:
        parts = urlsplit(f"//{text}")
        name = parts.hostname
        _ = parts.port  # a port that is not a number is a bad header
    except ValueError:
        return None
    return name.rstrip(".") if name else None


def local_url(scope: Scope) -> str:
    """The desk's address on this machine: loopback, with the port it listens on."""
    server = scope.get("server")
    port = server[1] if server and server[1] else None
    return f"http://127.0.0.1:{port}" if port else "http://127.0.0.1"


class Gate:
    """Pure ASGI middleware: the Host, Origin and size checks above, then the application."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], max_body: int, headers: dict[str, str]) -> None:
        self.app = app
        self.hosts = frozenset(h.strip().strip("[]").lower().rstrip(".") for h in hosts if h.strip())
        self.max_body = max_body
        self.headers = [(k.lower().encode(), v.encode()) for k, v in headers.items()]

    def allowed(self, name: str | None) -> bool:
        return name is not None and (is_loopback(name) or name.lower() in self.hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        announced = headers.get("content-length")
        if announced is not None and not (announced.isascii() and announced.strip().isdigit()):
            await self.refuse(send, 400, "refused: the Content-Length header is not a number")
            return
        host = headers.get("host", "")
        if not self.allowed(host_name(host)):
            shown = host if len(host) <= 80 else host[:77] + "..."
            if scope["method"] in ("POST", "PUT", "PATCH"):
                await self.read_body(headers, receive)  # up to the limit: a refusal is read, not a reset
            await self.refuse(
                send,
                421,
                f"refused: this desk is not served as {shown!r}; open it as {local_url(scope)} "
                "or add the name to [desk] hosts",
            )
            return
        if scope["method"] == "HEAD":  # answered as GET, without its body
            await self.app({**scope, "method": "GET"}, receive, headless(send))
            return
        if scope["method"] == "POST":
            why = self.foreign(headers)
            if why:
                await self.read_body(headers, receive)  # up to the limit: a refusal is read, not a reset
                await self.refuse(send, 403, f"refused: {why}")
                return
            body = await self.read_body(headers, receive)
            if body is None:
                await self.refuse(send, 413, f"refused: the form is larger than {self.max_body // 1024} KiB")
                return
            receive = replay(body, receive)
        await self.app(scope, receive, send)

    def foreign(self, headers: dict[str, str]) -> str | None:
        """Why a POST came from another site, or None. Forms of the desk itself carry its own
        origin; clients that send no ``Origin`` (curl, scripts) still need the CSRF token."""
        origin = headers.get("origin")
        if origin is not None:
            if origin == "null":
                return "the form was sent from an opaque origin; use the desk's own page"
            try:
                parts = urlsplit(origin.strip())
                name = parts.hostname
                same = parts.netloc.lower() == headers.get("host", "").lower() and self.allowed(name)
                # behind a proxy that rewrites Host, the page's origin is the public name itself
                public = name is not None and name.lower().rstrip(".") in self.hosts
                proxied = public and not is_loopback(name or "")
            except ValueError:  # not a URL at all (an unclosed IPv6 bracket, a bad port)
                same = proxied = False
            return None if same or proxied else "the form was sent from another site; use the desk's own page"
        if headers.get("sec-fetch-site") == "cross-site":
            return "the form was sent from another site; use the desk's own page"
        return None

    async def read_body(self, headers: dict[str, str], receive: Receive) -> bytes | None:
        """The whole body, or None as soon as it is known to pass the limit (announced or read)."""
        announced = headers.get("content-length")
        if announced is not None and int(announced) > self.max_body:  # a number: checked on arrival
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)

    async def refuse(self, send: Send, status: int, line: str) -> None:
        body = (line + "\n").encode()
        headers = [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
            *self.headers,
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def replay(body: bytes, then: Receive) -> Receive:
    """A ``receive`` that gives the application the body already read, once, and afterwards what
    the connection says (a disconnect, when it comes)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return await then()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def headless(send: Send) -> Send:
    """A ``send`` that passes the head of a response (its length included) and drops its body."""

    async def send_head(message: Message) -> None:
        if message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await send(message)

    return send_head


def served_hosts(bound: str, configured: Iterable[str]) -> list[str]:
    """The names a desk bound to ``bound`` answers to besides loopback: the address itself (unless
    it is a wildcard) and ``[desk] hosts``."""
    names = [h for h in configured if h]
    if bound.strip("[]") not in WILDCARDS:
        names.append(bound)
    return names
