"""One scripted HTTP server on 127.0.0.1 for the fuzz tests of a process.

A test sets the next ``Reply`` (status, headers, body, and whether the connection closes
without a length, so that a truncated body is read to its end); the server answers every
request with it, ``ECHO`` in the body replaced by the request's ``Authorization`` header and
path (as a service that repeats a key or a URL in its error does), and keeps the requests.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ECHO = b"<<echo>>"


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    close: bool = False  # no Content-Length: the body ends when the connection closes


@dataclass
class Scripted:
    server: ThreadingHTTPServer
    reply: Reply = field(default_factory=Reply)
    requests: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def answer(self, reply: Reply) -> None:
        self.reply = reply
        self.requests.clear()


_SERVER: Scripted | None = None
_LOCK = threading.Lock()


def scripted() -> Scripted:
    """The process's scripted server, started on first use (a daemon thread; it ends with the process)."""
    global _SERVER
    with _LOCK:
        if _SERVER is None:
            _SERVER = _start()
        return _SERVER


def _start() -> Scripted:
    state: Scripted

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # a reply's headers and body go out at once, not 40 ms apart

        def log_message(self, *args: object) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            state.requests.append((self.path, dict(self.headers), body))
            reply = state.reply
            said = f"{self.headers.get('Authorization', '')} {self.path}".encode("utf-8", "replace")
            reply = Reply(reply.status, reply.body.replace(ECHO, said), reply.headers, reply.close)
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.close:
                self.send_header("Connection", "close")
                self.close_connection = True
            else:
                self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply.body)

        do_GET = do_POST = do_HEAD = _answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state = Scripted(server)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return state
