"""Real servers on 127.0.0.1 that receive what delivery sends: SMTP (aiosmtpd) and a webhook.

Each keeps what it received and can be told to refuse (SMTP 554, HTTP 500), so the tests
see a channel go down and come back.
"""

from __future__ import annotations

import email
import email.policy
import json
import socket
import threading
import time
from dataclasses import dataclass, field
from email.message import EmailMessage
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class MailServer:
    """aiosmtpd on a free port; with ``password`` it requires AUTH LOGIN/PLAIN (without TLS)."""

    password: str | None = None
    user: str = "brief"
    refuse: bool = False
    messages: list[EmailMessage] = field(default_factory=list)
    logins: list[tuple[str, str]] = field(default_factory=list)
    port: int = 0

    def start(self) -> MailServer:
        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult, LoginPassword

        server = self

        class Handler:
            async def handle_DATA(self, smtp, session, envelope):
                if server.refuse:
                    return "554 5.7.1 Message rejected: relay is down for maintenance"
                message = email.message_from_bytes(envelope.content, policy=email.policy.default)
                server.messages.append(message)  # type: ignore[arg-type]
                return "250 OK"

        def authenticate(smtp, session, envelope, mechanism, auth_data):
            if isinstance(auth_data, LoginPassword):
                login = (auth_data.login.decode(), auth_data.password.decode())
                server.logins.append(login)
                return AuthResult(success=login == (server.user, server.password))
            return AuthResult(success=False)

        self.port = free_port()
        options = {}
        if self.password is not None:
            options = {"authenticator": authenticate, "auth_require_tls": False, "auth_required": True}
        self._controller = Controller(Handler(), hostname="127.0.0.1", port=self.port, **options)
        self._controller.start()
        return self

    def stop(self) -> None:
        self._controller.stop()

    def url(self, to: str = "reader@example.com", password_var: str | None = None) -> str:
        auth = f"{self.user}:${{{password_var}}}@" if password_var else ""
        return (
            f"mailto://{auth}127.0.0.1:{self.port}?smtp=127.0.0.1&mode=insecure"
            f"&from=brief@example.com&to={to}"
        )

    def html_of(self, message: EmailMessage) -> str:
        part = message.get_body(preferencelist=("html",))
        assert part is not None, "the email has no HTML part"
        return part.get_content()


@dataclass
class Webhook:
    """An HTTP server that records each POST's path and JSON body; ``status`` answers it, after
    ``delay_s`` (a slow channel)."""

    status: int = 200
    delay_s: float = 0.0
    arrived: threading.Event = field(default_factory=threading.Event)  # a POST reached it
    posts: list[tuple[str, dict]] = field(default_factory=list)
    port: int = 0

    def start(self, port: int | None = None) -> Webhook:
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                hook.arrived.set()
                time.sleep(hook.delay_s)
                if hook.status == 200:
                    hook.posts.append((self.path, json.loads(body)))
                self.send_response(hook.status)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.port = port or free_port()
        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def url(self, path: str = "/hook") -> str:
        return f"json://127.0.0.1:{self.port}{path}"
