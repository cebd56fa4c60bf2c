"""Where briefs go: the ``[output]`` and ``[[delivery]]`` settings, and their secrets.

A channel (and an ``[[alerts]]`` entry: both are an ``Endpoint``) is an Apprise URL
(``mailto://``, ``slack://``, ``tgram://``, ``ntfy://``, ``json://`` for any webhook …).
Secrets never sit in the config file: a URL names them as ``${VARIABLE}`` and they are read
from the environment when a message is sent; nothing that holds a resolved URL is ever
logged, recorded or exported (``target`` is the scheme and a server's name only). A URL that
carries a secret written out (a password, a bot token, a webhook's key, any key-like run of
letters and digits) is refused: ``literal_secrets`` says which.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from datetime import datetime, time, timedelta
from typing import Literal
from urllib.parse import quote, quote_plus, urlsplit
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from storage.errors import ConfigError
from tasks.config_paths import OptionalConfigPath

Format = Literal["html", "markdown", "text"]
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = r"^[a-z0-9][a-z0-9_-]*$"
_BY_SCHEME: dict[str, Format] = {
    "mailto": "html",
    "mailtos": "html",
    "slack": "markdown",
    "discord": "markdown",
    "tgram": "markdown",
    "matrix": "markdown",
    "matrixs": "markdown",
    "mmost": "markdown",
    "mmosts": "markdown",
    "ntfy": "markdown",
    "ntfys": "markdown",
    "json": "markdown",
    "jsons": "markdown",
}


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class OutputSettings(_Section):
    templates: OptionalConfigPath = Field(
        default=None, description="a folder of Jinja2 templates replacing the shipped ones by name"
    )
    base_url: str | None = Field(
        default=None, description="where the briefs folder is served; makes the feed's links absolute"
    )
    feed_entries: int = Field(default=30, ge=1, le=1000, description="dates in briefs/feed.xml")

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            from tasks.config_errors import scheme_of

            raise ValueError(f"must start with http:// or https:// ({scheme_of(value)})")
        return value.rstrip("/") if value else value


class Endpoint(_Section):
    """A named Apprise URL whose secrets come from the environment: a ``[[delivery]]`` channel or
    an ``[[alerts]]`` entry. Parsing, the refusal of a literal password, resolving, ``target``
    and the secrets to redact are the same for both."""

    name: str = Field(pattern=_NAME, description="lower-case letters, digits, - and _")
    url: str = Field(min_length=4, description="an Apprise URL; secrets as ${VARIABLE}")
    retries: int = Field(default=2, ge=0, le=10, description="attempts after the first, with backoff")
    backoff_s: float = Field(default=2.0, ge=0, le=600, description="first wait; doubles each retry")

    @field_validator("url")
    @classmethod
    def _no_literal_secret(cls, value: str) -> str:
        if "://" not in value and not _PLACEHOLDER.fullmatch(value):
            raise ValueError(
                f"{masked(value)!r} is not an Apprise URL such as mailto://… or json://host/path"
            )
        if "://" in value:
            scheme = value.split("://", 1)[0]
            if not _SCHEME.fullmatch(scheme) or any(map(_key_like, re.findall(r"[A-Za-z0-9]+", scheme))):
                raise ValueError(
                    f"{masked(scheme)!r} is not a URL scheme; start with one Apprise knows, such as "
                    "mailto://… or json://host/path"
                )
            netloc = value.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0]
            userinfo = netloc.rpartition("@")[0]
            if ":" in userinfo and not _PLACEHOLDER.search(userinfo.split(":", 1)[1]):
                scheme = value.split("://", 1)[0]
                raise ValueError(
                    "must not carry a password; name an environment variable instead, e.g. "
                    f"{scheme}://{userinfo.split(':', 1)[0]}:${{SMTP_PASSWORD}}@…"
                )
            found = literal_secrets(value)
            if found:
                raise ValueError(secret_advice(value, found))
        return value

    @property
    def variables(self) -> list[str]:
        return _PLACEHOLDER.findall(self.url)

    @property
    def scheme(self) -> str:
        return self.url.split("://", 1)[0].lower() if "://" in self.url else ""

    @property
    def target(self) -> str:
        """What the log may say about where a message went, never a secret: the scheme, and the
        host when it names a server (``mailtos://smtp.example.com``) or only variables. A host
        that is anything else (``tgram://`` and ``discord://`` put a bot's or a webhook's key
        there, ``pover://`` a token, ``ntfy://`` a topic) is shown as ``…``."""
        if "://" not in self.url:
            return "(URL from $" + ", $".join(self.variables) + ")"
        scheme, rest = self.url.split("://", 1)
        host = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rpartition("@")[2]
        return f"{scheme}://{host if _names_a_server(host) else '…'}"

    def resolve(self, environ: dict[str, str] | None = None) -> str:
        """The URL with its ``${VARIABLE}``s from the environment (quoted inside a URL's parts)."""
        env = os.environ if environ is None else environ
        missing = [v for v in self.variables if not env.get(v)]
        if missing:
            raise ConfigError(
                f"channel {self.name!r}: environment variable {missing[0]} is not set; "
                "export it where the run runs"
            )
        whole = _PLACEHOLDER.fullmatch(self.url)
        if whole:
            return env[whole.group(1)]
        return _PLACEHOLDER.sub(lambda m: quote(env[m.group(1)], safe=""), self.url)

    def secrets(self, environ: dict[str, str] | None = None) -> list[str]:
        """The values a message or an error must never show (also as they appear inside a URL)."""
        env = os.environ if environ is None else environ
        values = [env[v] for v in self.variables if env.get(v)]
        out: list[str] = []
        for value in values:
            # as it is, and as a URL carries it: quoted whole, quoted as a path (Apprise's
            # services keep its "/"), or as a form's value ("+" for a space)
            out += [value, quote(value, safe=""), quote(value), quote_plus(value)]
            if "://" in value:  # a whole URL in one variable: its path and query hold the tokens
                parts = urlsplit(value)
                pieces = re.split(r"[/?&=:@#]", f"{parts.netloc}/{parts.path}?{parts.query}")
                out += [p for p in pieces if len(p) >= 6]
                if parts.password:
                    out.append(parts.password)
        return sorted({s for s in out if len(s) >= 3}, key=len, reverse=True)


class Channel(Endpoint):
    """One place a brief goes: a name, an Apprise URL, a format, and which briefs."""

    format: Format | None = Field(default=None, description="html, markdown or text (default by scheme)")
    min_core: int = Field(default=0, ge=0, description="send only days with at least this many core stories")
    updates: bool = Field(default=True, description="send a correction when a new version replaces one sent")

    @property
    def body_format(self) -> Format:
        """The format asked for, else the scheme's (a URL wholly from a variable: that URL's scheme)."""
        if self.format:
            return self.format
        scheme = self.scheme
        whole = _PLACEHOLDER.fullmatch(self.url)
        if whole and "://" in os.environ.get(whole.group(1), ""):
            scheme = os.environ[whole.group(1)].split("://", 1)[0].lower()
        return _BY_SCHEME.get(scheme, "text")


class DeliverySettings(_Section):
    """``[delivery]``: the channels, and an optional last look before readers get a brief."""

    channels: list[Channel] = Field(default_factory=list)
    review_channel: str | None = Field(default=None, description="the channel that gets held briefs")
    hold: bool = Field(default=False, description="readers get a brief only once someone approves it")
    min_core: int = Field(
        default=1,
        ge=0,
        description=(
            "a day with fewer core stories, or on which more than half the sources failed, is "
            "withheld: not published to readers nor delivered, and the run fails saying why (0: never)"
        ),
    )
    hold_until: str | None = Field(
        default=None, description="HH:MM (in the configured timezone): deliver unapproved briefs then"
    )
    update_after: float = Field(
        default=10.0,
        ge=0,
        le=24 * 60,
        description=(
            "minutes: the first version after one a channel got opens a window this long, and the "
            "channel gets one update with the version current when it closes (0: every version at "
            "once); a retraction goes out at once, with whatever is pending"
        ),
    )

    @field_validator("hold_until")
    @classmethod
    def _clock(cls, value: str | None) -> str | None:
        return clock_time(value)

    @model_validator(mode="after")
    def _consistent(self) -> DeliverySettings:
        names = unique_names(self.channels, "channel")
        if self.review_channel is not None and self.review_channel not in names:
            raise ValueError(
                f"review_channel {self.review_channel!r} is not a channel; add a [[delivery.channels]] "
                f"entry named so (channels: {', '.join(names) or 'none'})"
            )
        if self.hold and self.review_channel is None:
            raise ValueError("hold = true needs review_channel = '<a channel name>' to show the brief to")
        return self

    @property
    def readers(self) -> list[Channel]:
        return [c for c in self.channels if c.name != self.review_channel]

    def channel(self, name: str) -> Channel:
        for c in self.channels:
            if c.name == name:
                return c
        known = ", ".join(c.name for c in self.channels) or "none configured"
        raise ConfigError(f"no delivery channel named {name!r} (channels: {known})")

    def deadline(self, held_at: datetime, zone: ZoneInfo) -> datetime | None:
        """The first ``hold_until`` after the brief was held (tomorrow's when today's has passed)."""
        if not self.hold_until:
            return None
        local = held_at.astimezone(zone)
        at = datetime.combine(local.date(), time.fromisoformat(self.hold_until), tzinfo=zone)
        if at <= local:
            at = datetime.combine(local.date() + timedelta(days=1), time.fromisoformat(self.hold_until), zone)
        return at.astimezone(held_at.tzinfo)


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,31}")
_SERVER = re.compile(r"^(?:localhost|\[[0-9A-Fa-f:.]+\]|(?:[A-Za-z0-9-]+\.)+[A-Za-z0-9-]+)(?::[0-9]{1,5})?$")
_KEY_LIKE = 16  # letters and digits in a row, at least two of each: a token, not a word or a number
_SECRET_PARAMETER = re.compile(r"(?i)^[+-]?(?:.*token|.*key|.*secret|pass|password|pwd|auth|authorization)$")
_MARK = "briefvar{}x"  # stands for a ${VARIABLE} while Apprise parses a URL


def _names_a_server(host: str) -> bool:
    """A DNS name, an IP address or localhost (with a port), or nothing but ``${VARIABLE}``s."""
    return bool(_SERVER.match(host)) or (bool(host) and not _PLACEHOLDER.sub("", host).strip(":"))


def _key_like(piece: str) -> bool:
    digits = sum(c.isdigit() for c in piece)
    return len(piece) >= _KEY_LIKE and digits >= 2 and len(piece) - digits >= 2


def literal_secrets(url: str) -> list[tuple[str, str]]:
    """What in ``url`` is a secret written out rather than named as ``${VARIABLE}``: pairs of
    (what it is, its text). Three kinds are found:

    - the parts Apprise marks private for the URL's service (``tgram://`` its bot token,
      ``discord://`` the webhook's id and token, ``slack://`` its three tokens, ``pover://`` the
      user key and token, a password or an API key anywhere), unless a variable is in them;
    - the value of a query parameter named like a secret (``?token=…``, ``?apikey=…``,
      ``?+Authorization=…``);
    - any key-like run of letters and digits (16 or more, with at least two of each) outside
      the variables, whatever the scheme: a webhook's secret path, a hex or base64 key.
    """
    if "://" not in url:
        return []
    names: dict[str, str] = {}

    def mark(match: re.Match[str]) -> str:
        names[match.group(1)] = _MARK.format(len(names))
        return names[match.group(1)]

    marked = _PLACEHOLDER.sub(mark, url)
    found: list[tuple[str, str]] = []

    def literal(text: str) -> bool:
        return bool(text) and not any(m in text.lower() for m in names.values())

    for name, value in _private_parts(marked):
        if literal(value):
            found.append((name, value))
    query = marked.split("?", 1)[1] if "?" in marked else ""
    for pair in query.split("&"):
        key, _, value = pair.partition("=")
        if _SECRET_PARAMETER.match(key) and literal(value) and all(value != v for _, v in found):
            found.append((f"?{key.lstrip('+-')}", value))
    rest = marked.split("://", 1)[1]
    for mark_ in names.values():  # a key written right beside a variable is a run of its own
        rest = re.sub(re.escape(mark_), " ", rest, flags=re.IGNORECASE)
    for piece in re.findall(r"[A-Za-z0-9]+", rest):
        if _key_like(piece) and literal(piece) and not any(piece in v for _, v in found):
            found.append(("a key-like part", piece))
    return found


def _private_parts(url: str) -> list[tuple[str, str]]:
    """The values Apprise's parser gives the private tokens and arguments of the URL's service."""
    try:
        from apprise.manager_plugins import NotificationManager

        plugins = NotificationManager()
        scheme = url.split("://", 1)[0].lower()
        if scheme not in plugins:
            return []
        plugin = plugins[scheme]
        parsed = plugin.parse_url(url)
    except Exception:  # a URL Apprise cannot read: sending will say so; the patterns still apply
        return []
    if not isinstance(parsed, dict):
        return []
    private = {"password"}
    for table in (plugin.template_tokens, plugin.template_args):
        for key, spec in table.items():
            if spec.get("private"):
                private |= {key, spec.get("map_to", key), spec.get("alias_of", key)}
    out = []
    for key in sorted(private & parsed.keys()):
        value = parsed[key]
        values = value if isinstance(value, list | tuple | set) else [value]
        out += [(key, str(v)) for v in values if isinstance(v, str | int) and str(v)]
    return out


def masked(text: str) -> str:
    """``text`` with every key-like run of letters and digits as ``…``: what a message may show of
    a URL that could not be read (its secrets could not be told apart)."""
    return re.sub(r"[A-Za-z0-9]+", lambda m: "…" if _key_like(m[0]) else m[0], text)


def secret_advice(url: str, found: list[tuple[str, str]]) -> str:
    """Why ``url`` is refused and the URL to write instead, without the secrets themselves."""
    scheme = url.split("://", 1)[0].lower()
    what = ", ".join(dict.fromkeys(name for name, _ in found))
    suggestion = url
    for name, value in sorted(found, key=lambda f: len(f[1]), reverse=True):
        variable = re.sub(r"[^A-Z0-9]+", "_", f"{scheme}_{name}".upper()).strip("_")
        if name == "a key-like part":
            variable = f"{scheme.upper()}_TOKEN"
        suggestion = suggestion.replace(value, f"${{{variable}}}")
    instead = f'url = "${{{scheme.upper()}_URL}}" with the whole URL in that variable'
    if suggestion != url and not literal_secrets(suggestion):
        instead = f'url = "{suggestion}", or {instead}'
    return (
        f"carries a secret written out ({what} of {scheme}://); secrets are read from the "
        f"environment, never the config file: write {instead}, and export the variable where "
        "the brief runs"
    )


def clock_time(value: str | None) -> str | None:
    """``value`` when it is a time of day (HH:MM), else a ValueError that says how to write one."""
    if value is not None:
        try:
            time.fromisoformat(value)
        except ValueError:
            raise ValueError(f"{value!r} is not a time of day; use HH:MM, e.g. '08:30'") from None
    return value


def unique_names(endpoints: Sequence[Endpoint], what: str) -> list[str]:
    """The endpoints' names, or a ValueError naming those given twice."""
    names = [e.name for e in endpoints]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"{what} names must be unique; repeated: {', '.join(dupes)}")
    return names


def delivery_from_toml(value: object) -> object:
    """``[[delivery]]`` (a list of channels) or ``[delivery]`` with ``[[delivery.channels]]``."""
    if isinstance(value, list):
        return {"channels": value}
    return value


def redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text
