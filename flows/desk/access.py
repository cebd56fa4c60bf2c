"""Who may use the desk, and the checks every request passes.

- **Loopback** (127.0.0.1, ::1, localhost) is the default; with no ``[desk.people]`` the person is
  the one running it (``$BRIEF_USER`` or ``$USER``).
- **Any other address** needs ``[desk.people]``: each name with the environment variable holding
  its token, every variable set. People sign in with name and token; a wrong one gets 401, and
  more than ``SIGN_IN_TRIES`` wrong ones from one address, or for one name, within
  ``SIGN_IN_WINDOW`` seconds 429.
  With people configured, loopback asks them to sign in too.
- **Sessions** are Starlette's signed session cookies (itsdangerous, ``HttpOnly``,
  ``SameSite=Strict``, ``Secure`` when ``[desk] tls``) with a key made when the desk starts:
  restarting it signs everyone out. A session holds its id, its person and when it ends; signing
  out records its id as revoked on the server until the cookie would have expired, so a copy of
  the old cookie writes nothing; so does signing in again: a person has one session, the latest.
- **CSRF**: every form carries the session's token: an HMAC-SHA256 of the session's id under the
  desk's key (its own purpose prefix), 22 characters of it (132 bits), the same in every form of
  the session. It cannot be made without the key, belongs to one session (a new session, a new
  token) and ends with it; a POST without the right one is refused with 403 before anything is
  read from the store.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from flows.desk.gate import is_loopback
from ops.workspace import SYSTEM_CLOCK, Clock
from storage.errors import ConfigError
from tasks.settings import Settings

SESSION_COOKIE = "desk_session"
SESSION_SECONDS = 12 * 3600
CSRF_CHARS = 22  # of the token's base64 text: 132 bits
SIGN_IN_TRIES = 5  # wrong sign-ins an address, or a name, may have within the window
SIGN_IN_WINDOW = 300  # seconds
KEPT_ADDRESSES = 10_000  # addresses with wrong tries remembered before the old ones are pruned

Session = MutableMapping[str, Any]


@dataclass
class SignInLimit:
    """Wrong sign-ins per key (a client's address, a name) over the last ``window`` seconds: past
    ``tries`` of them, the key waits (a token is long and random; this keeps a guesser from trying
    at line speed)."""

    tries: int = SIGN_IN_TRIES
    window: float = SIGN_IN_WINDOW
    clock: Callable[[], float] = time.monotonic
    failed: dict[str, list[float]] = field(default_factory=dict)

    def wait(self, address: str) -> int:
        """Seconds ``address`` must wait before its next try (0: it may try now)."""
        now = self.clock()
        recent = [t for t in self.failed.get(address, []) if t > now - self.window]
        if recent:
            self.failed[address] = recent
        else:
            self.failed.pop(address, None)
        if len(recent) < self.tries:
            return 0
        return max(1, int(recent[0] + self.window - now + 0.999))

    def failure(self, address: str) -> None:
        now = self.clock()
        if len(self.failed) >= KEPT_ADDRESSES:  # many addresses: forget those whose tries are old
            self.failed = {a: ts for a, ts in self.failed.items() if ts[-1] > now - self.window}
        self.failed.setdefault(address, []).append(now)


@dataclass
class Access:
    """The people and their tokens (read from the environment once, at start), the signing key,
    the sessions signed out and the sign-in attempts."""

    tokens: dict[str, str]  # name -> token
    local_person: str | None  # who a loopback desk without people acts as
    tls: bool = False  # the desk is reached through TLS: its cookie is Secure
    key: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    revoked: dict[str, float] = field(default_factory=dict)  # session id -> when its cookie expires
    signed_in: dict[str, tuple[str, int]] = field(default_factory=dict)  # person -> (session id, until)
    sign_ins: SignInLimit = field(default_factory=SignInLimit)
    clock: Clock = SYSTEM_CLOCK  # the desk's: when a session ends is by the clock its acts use

    @property
    def needs_sign_in(self) -> bool:
        return bool(self.tokens)

    def now(self) -> float:
        """Now by the desk's clock, in seconds since the epoch (what a session's end is counted in)."""
        return self.clock.now().timestamp()

    def check_token(self, name: str, token: str) -> bool:
        wanted = self.tokens.get(name)
        # compare against something of the same shape either way: no timing hint of which names exist
        same = hmac.compare_digest(
            (wanted or secrets.token_hex(16)).encode(), token.encode("utf-8", "replace")
        )
        return same and bool(wanted)

    def person_of(self, session: Session) -> str | None:
        """The person a session names ("" for a visitor not signed in), or None when it is empty,
        not one of the desk's, expired or signed out."""
        sid, until, person = session.get("sid"), session.get("until"), session.get("person")
        if not (isinstance(sid, str) and isinstance(until, int) and isinstance(person, str)):
            return None
        if until < self.now() or sid in self.revoked:
            return None
        return person

    def ended(self, session: Session) -> bool:
        """Whether ``session`` is one this desk ended before its time (signed out, or its person
        signed in elsewhere)."""
        sid, until = session.get("sid"), session.get("until")
        return isinstance(sid, str) and isinstance(until, int) and until >= self.now() and sid in self.revoked

    def open(self, session: Session, person: str) -> None:
        """A new session for ``person`` in place of whatever ``session`` held (a new id each time:
        signing in never keeps an id a visitor had before)."""
        session.clear()
        session.update(sid=secrets.token_urlsafe(16), until=int(self.now()) + SESSION_SECONDS, person=person)

    def sign_in(self, session: Session, person: str) -> None:
        """A new session for ``person``, who gave their token; the session they signed in with before
        (another browser, a copied cookie) ends: a person has one session, the latest. So does the
        live session this browser held, whoever's it was: a copy of its cookie opens nothing."""
        self.revoke(session)
        earlier = self.signed_in.get(person)
        if earlier is not None:
            self._end(*earlier)
        self.open(session, person)
        self.signed_in[person] = (session["sid"], session["until"])

    def revoke(self, session: Session) -> None:
        """End ``session`` for good: a copy of its cookie is refused from now on."""
        if self.person_of(session) is None:
            return
        self._end(session["sid"], session["until"])
        if self.signed_in.get(session["person"], ("",))[0] == session["sid"]:
            del self.signed_in[session["person"]]

    def _end(self, sid: str, until: int) -> None:
        now = self.now()
        for old in [s for s, ends in self.revoked.items() if ends < now]:
            del self.revoked[old]  # an expired cookie is refused anyway
        self.revoked[sid] = until

    def authorised(self, person: str) -> str | None:
        """Who may act: a configured person signed in, or the local person of a loopback desk."""
        if self.needs_sign_in:
            return person if person in self.tokens else None
        return person if person and person == self.local_person else None

    def csrf_token(self, session: Session) -> str:
        """The session's CSRF token: every form of the session carries this one short value."""
        mac = hmac.new(self.key.encode(), b"desk-csrf:" + session["sid"].encode(), hashlib.sha256)
        return base64.urlsafe_b64encode(mac.digest()).decode()[:CSRF_CHARS]

    def csrf_ok(self, session: Session, token: str | None) -> bool:
        """Whether ``token`` is this desk's token for this live session (any text may be given: a
        token that is not one simply does not match)."""
        if not token or self.person_of(session) is None:
            return False
        return hmac.compare_digest(self.csrf_token(session).encode(), token.encode("utf-8", "replace"))


def access_for(settings: Settings, host: str, local_person: str, clock: Clock = SYSTEM_CLOCK) -> Access:
    """The desk's access rules for ``host``, its sessions timed by ``clock``; a ConfigError (one line,
    exit 2) when it must not start."""
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
    return Access(tokens, None if people else local_person, tls=settings.desk.tls, clock=clock)
