"""The desk's HTTP server: uvicorn, stopped so that no act is cut in half.

An act is several writes (its events, the new version's files one by one, ``brief.published``, the
deliveries and their records); a process killed among them leaves the day out of step. So Ctrl-C
(or SIGTERM) first stops taking requests, then waits for the acts under way however long they
take, saying so once; a second Ctrl-C stops at once. A page still being made gets ``GRACE_S``.

A request uvicorn cannot parse (a malformed request line or ``Content-Length``, two that disagree,
a header too long) never reaches the application: uvicorn answers it with a 400 itself. The desk's
protocol (``DeskProtocol``) makes that answer one line of the desk's, with the desk's headers. The
desk serves no WebSocket, so a request asking to upgrade to one is not handed to uvicorn's own
handshake (which refuses with its own answer) but answered by the desk like any other.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import uvicorn
from uvicorn.protocols.http.auto import AutoHTTPProtocol

from flows.desk.headers import encoded

if TYPE_CHECKING:
    from uvicorn.server import ServerState

    from tasks.settings import Settings

GRACE_S = 1  # on Ctrl-C, what a page still being made gets before it is cancelled
WAITING = "waiting for an act to finish… (Ctrl-C again to stop now)"
NOT_HTTP = (
    "refused: the request is not HTTP the desk can read (a malformed request line or header, a "
    "Content-Length that is not one number, or a header too long)"
)


@dataclass
class ActsInFlight:
    """The desk's acts (its POSTs) under way; once ``closing``, no new one is taken."""

    count: int = 0
    closing: bool = False
    said: bool = False
    say: Callable[[str], None] = field(default=lambda line: print(line, file=sys.stderr, flush=True))

    def wait_line(self) -> None:
        if not self.said:
            self.said = True
            self.say(WAITING)


class DeskServer(uvicorn.Server):
    """uvicorn, whose shutdown waits for the acts in flight before it gives pages their grace."""

    def __init__(self, config: uvicorn.Config, acts: ActsInFlight) -> None:
        super().__init__(config)
        self.acts = acts

    async def shutdown(self, sockets: list[Any] | None = None) -> None:
        for server in self.servers:  # no new connection; a POST on an open one is refused (503)
            server.close()
        self.acts.closing = True
        while self.acts.count and not self.force_exit:  # force_exit: the second Ctrl-C
            self.acts.wait_line()
            await asyncio.sleep(0.05)
        await super().shutdown(sockets)

    def stop(self) -> None:
        """Stop from another thread (``brief serve``): as a first Ctrl-C does."""
        self.acts.closing = True
        self.should_exit = True


class RefusedWithHeaders:
    """uvicorn's own 400, for a request it cannot parse, with the desk's headers and its one line.

    Mixed into the HTTP/1.1 protocol uvicorn picks (``AutoHTTPProtocol``: httptools when it is
    installed, else h11): both call ``send_400_response`` when their parser fails, and both close
    the connection after it."""

    transport: asyncio.Transport
    server_state: ServerState
    cycle: Any

    def send_400_response(self, msg: str) -> None:
        cycle = self.cycle
        if cycle is None or not cycle.response_started or cycle.response_complete:
            self.transport.write(bad_request(self.server_state.default_headers))
        # else a response is under way on this connection: a 400 cannot be put in its middle
        self.transport.close()

    def _unsupported_upgrade_warning(self) -> None:
        """Nothing to say: the desk takes no WebSocket (``ws="none"``), so a request asking to
        upgrade is answered as any other, by the desk, with its headers (uvicorn would log advice
        to install a WebSocket library)."""


def bad_request(default_headers: list[tuple[bytes, bytes]]) -> bytes:
    """The whole 400: its status line, the server's own headers (date, server), the desk's, and
    ``NOT_HTTP``."""
    body = (NOT_HTTP + "\n").encode()
    headers = [
        *default_headers,
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *encoded(),
    ]
    head = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
    return b"HTTP/1.1 400 Bad Request\r\n" + head + b"\r\n" + body


DeskProtocol: type[asyncio.Protocol] = type("DeskProtocol", (RefusedWithHeaders, AutoHTTPProtocol), {})


def server_config(app: Any, settings: Settings) -> uvicorn.Config:
    """uvicorn's settings for the desk: ``X-Forwarded-For`` is believed only when ``[desk] hosts``
    names the proxy the desk sits behind (else any local program could name the address that
    sign-in's limit counts)."""
    return uvicorn.Config(
        app,
        http=DeskProtocol,
        ws="none",  # the desk has no WebSocket: an upgrade is a plain request, gated and answered by it
        log_level="warning",
        access_log=False,
        proxy_headers=bool(settings.desk.hosts),
        timeout_graceful_shutdown=GRACE_S,
    )


def desk_server(app: Any, settings: Settings) -> DeskServer:
    """The desk's server over ``app`` (made by ``flows.desk.app.create_app``)."""
    return DeskServer(server_config(app, settings), app.state.acts)
