"""Who may use the desk, and the checks every request passes.

- **Loopback** (127.0.0.1, ::1, localhost) is the default; with no ``[desk.people]`` the person is
  the one running it (``$BRIEF_USER`` or ``$USER``).
- **Any other address** needs ``[desk.people]``: each name with the environment variable holding
  its token, every variable set. People sign in with name and token; a wrong one gets 401.
  With people configured, loopback asks them to sign in too.
- **Sessions** are signed cookies (``HttpOnly``, ``SameSite=Strict``) with a key made when the
  desk starts: restarting it signs everyone out. Signing out ends the session on the server too:
  its nonce is kept as revoked until the cookie would have expired, so a copy of the old cookie
  writes nothing.
- **CSRF**: every form carries a token derived from the session; a POST without the right one is
  refused with 403 before anything is read from the store.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from dataclasses import dataclass, field

from flows.desk.gate import is_loopback
from storage.errors import ConfigError
from tasks.settings import Settings

SESSION_COOKIE = "desk_session"
SESSION_SECONDS = 12 * 3600


@dataclass
class Access:
    """The people and their tokens (read from the environment once, at start) and the signing key."""

    tokens: dict[str, str]  # name -> token
    local_person: str | None  # who a loopback desk without people acts as
    key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    revoked: dict[str, int] = field(default_factory=dict)  # nonce -> expiry of a signed-out session

    @property
    def needs_sign_in(self) -> bool:
        return bool(self.tokens)

    def check_token(self, name: str, token: str) -> bool:
        wanted = self.tokens.get(name)
        # compare against something of the same shape either way: no timing hint of which names exist
        same = hmac.compare_digest(
            (wanted or secrets.token_hex(16)).encode(), token.encode("utf-8", "replace")
        )
        return same and bool(wanted)

    def _sign(self, text: str) -> str:
        return hmac.new(self.key, text.encode(), hashlib.sha256).hexdigest()

    def new_session(self, person: str) -> str:
        """``nonce.expiry.person.signature``: the nonce makes each session's CSRF token its own; the
        person's name in base64url, so any name fits in a cookie."""
        name = base64.urlsafe_b64encode(person.encode()).decode().rstrip("=")
        body = f"{secrets.token_hex(8)}.{int(time.time()) + SESSION_SECONDS}.{name}"
        return f"{body}.{self._sign(body)}"

    def parse(self, cookie: str | None) -> str | None:
        """The person a session cookie names ("" for a visitor not signed in), or None when there is
        no cookie, or it is forged or expired."""
        if not cookie or cookie.count(".") < 3:
            return None
        body, _, signature = cookie.rpartition(".")
        if not same_text(self._sign(body), signature):
            return None
        nonce, expiry, person = body.split(".", 2)
        if not expiry.isascii() or not expiry.isdigit() or int(expiry) < time.time():
            return None
        if nonce in self.revoked:
            return None
        try:
            return base64.urlsafe_b64decode(person + "=" * (-len(person) % 4)).decode()
        except ValueError:
            return None

    def revoke(self, cookie: str | None) -> None:
        """End the session ``cookie`` names, for good: its copies are refused from now on."""
        if self.parse(cookie) is None or cookie is None:
            return
        nonce, expiry, _ = cookie.rpartition(".")[0].split(".", 2)
        now = time.time()
        for old in [n for n, until in self.revoked.items() if until < now]:
            del self.revoked[old]  # an expired cookie is refused anyway
        self.revoked[nonce] = int(expiry)

    def authorised(self, person: str) -> str | None:
        """Who may act: a configured person signed in, or the local person of a loopback desk."""
        if self.needs_sign_in:
            return person if person in self.tokens else None
        return person if person and person == self.local_person else None

    def csrf_token(self, cookie: str) -> str:
        return self._sign(f"csrf|{cookie}")

    def csrf_ok(self, cookie: str | None, token: str | None) -> bool:
        return bool(cookie and token) and same_text(self.csrf_token(cookie or ""), token or "")


def same_text(expected: str, given: str) -> bool:
    """A constant-time comparison that any text can be given to (a cookie or a form field may hold
    characters that are not ASCII: they simply do not match)."""
    return hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))


def access_for(settings: Settings, host: str, local_person: str) -> Access:
    """The desk's access rules for ``host``; a ConfigError (one line, exit 2) when it must not start."""
    people = settings.desk.people
    if not is_loopback(host) and not people:
        raise ConfigError(
            f"--host {host} is reachable from other machines: add a [desk.people] table naming each person "
            'with the environment variable holding their token (e.g. ann = "DESK_TOKEN_ANN"), or use '
            "--host 127.0.0.1"
        )
    tokens = {}
    for name, env in people.items():
        token = os.environ.get(env, "")
        if len(token) < 16:
            raise ConfigError(
                f"[desk.people] {name}: the environment variable {env} is "
                + ("not set" if not token else "shorter than 16 characters")
                + "; set it to a long random token, e.g. from: "
                + "python -c 'import secrets; print(secrets.token_urlsafe())'"
            )
        tokens[name] = token
    return Access(tokens, None if people else local_person)
