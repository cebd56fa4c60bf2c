"""Where briefs go: the ``[output]`` and ``[[delivery]]`` settings, and their secrets.

A channel is an Apprise URL (``mailto://``, ``slack://``, ``tgram://``, ``ntfy://``, ``json://``
for any webhook …). Secrets never sit in the config file: a URL names them as ``${VARIABLE}``
and they are read from the environment when a message is sent; nothing that holds a resolved
URL is ever logged, recorded or exported (``target`` is the scheme and host only).
"""

from __future__ import annotations

import os
import re
from datetime import datetime, time, timedelta
from typing import Literal
from urllib.parse import quote, urlsplit
from zoneinfo import ZoneInfo

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from storage.errors import ConfigError

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
    templates: str | None = Field(
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
            raise ValueError(f"{value!r} must start with http:// or https://")
        return value.rstrip("/") if value else value


class Channel(_Section):
    """One place a brief goes: a name, an Apprise URL, a format, and which briefs."""

    name: str = Field(pattern=_NAME, description="lower-case letters, digits, - and _")
    url: str = Field(min_length=4, description="an Apprise URL; secrets as ${VARIABLE}")
    format: Format | None = Field(default=None, description="html, markdown or text (default by scheme)")
    min_core: int = Field(default=0, ge=0, description="send only days with at least this many core stories")
    updates: bool = Field(default=True, description="send a correction when a new version replaces one sent")
    retries: int = Field(default=2, ge=0, le=10, description="attempts after the first, with backoff")
    backoff_s: float = Field(default=2.0, ge=0, le=600, description="first wait; doubles each retry")

    @field_validator("url")
    @classmethod
    def _no_literal_secret(cls, value: str) -> str:
        if "://" not in value and not _PLACEHOLDER.fullmatch(value):
            raise ValueError(f"{value!r} is not an Apprise URL such as mailto://… or json://host/path")
        if "://" in value:
            netloc = value.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0]
            userinfo = netloc.rpartition("@")[0]
            if ":" in userinfo and not _PLACEHOLDER.search(userinfo.split(":", 1)[1]):
                scheme = value.split("://", 1)[0]
                raise ValueError(
                    "must not carry a password; name an environment variable instead, e.g. "
                    f"{scheme}://{userinfo.split(':', 1)[0]}:${{SMTP_PASSWORD}}@…"
                )
        return value

    @property
    def variables(self) -> list[str]:
        return _PLACEHOLDER.findall(self.url)

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

    @property
    def scheme(self) -> str:
        return self.url.split("://", 1)[0].lower() if "://" in self.url else ""

    @property
    def target(self) -> str:
        """What the log may say about where a message went: scheme and host, never a secret."""
        if "://" not in self.url:
            return "(URL from $" + ", $".join(self.variables) + ")"
        scheme, rest = self.url.split("://", 1)
        host = rest.split("/", 1)[0].split("?", 1)[0].rpartition("@")[2]
        return f"{scheme}://{host}"

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
            out += [value, quote(value, safe="")]
            if "://" in value:  # a whole URL in one variable: its path and query hold the tokens
                parts = urlsplit(value)
                pieces = re.split(r"[/?&=:@#]", f"{parts.netloc}/{parts.path}?{parts.query}")
                out += [p for p in pieces if len(p) >= 6]
                if parts.password:
                    out.append(parts.password)
        return sorted({s for s in out if len(s) >= 3}, key=len, reverse=True)


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

    @field_validator("hold_until")
    @classmethod
    def _clock(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                time.fromisoformat(value)
            except ValueError:
                raise ValueError(f"{value!r} is not a time of day; use HH:MM, e.g. '08:30'") from None
        return value

    @model_validator(mode="after")
    def _consistent(self) -> DeliverySettings:
        names = [c.name for c in self.channels]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"channel names must be unique; repeated: {', '.join(dupes)}")
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


def delivery_from_toml(value: object) -> object:
    """``[[delivery]]`` (a list of channels) or ``[delivery]`` with ``[[delivery.channels]]``."""
    if isinstance(value, list):
        return {"channels": value}
    return value


def redact(text: str, secrets: list[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, "***")
    return text
