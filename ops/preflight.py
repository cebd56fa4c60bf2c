"""``brief check``: is everything the brief needs there, before it is left to run on its own?

One row per check: the config, the store's root, every source fetched once (a dated archive
for the date checked, a live feed as it is now) with the items it parsed and the newest one's
date, and every channel's URL and environment variables, sent one test message only when
asked. A failed or doubtful row says what is wrong and how to fix it. Nothing is written to
the log: a source's events are looked at, not appended.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Literal

from ops import workspace
from ops.workspace import Stage, quietly
from storage.errors import BriefError, ConfigError
from storage.events import Event
from storage.payloads import ArticleCollectedV4, FeedFailed
from storage.typed import payload_of
from tasks.channels import Channel, Endpoint
from tasks.collect import Source
from tasks.dedup import news_window
from tasks.deliver import Message
from tasks.nouns import counted
from tasks.settings import Settings, SourceSettings

Status = Literal["ok", "warn", "fail"]
RUN_ID = "check"  # the run id of the events a check looks at (never stored)


@dataclass(frozen=True)
class Check:
    """One row of the pre-flight: what was checked, how it went, what was found, how to fix it."""

    what: str
    status: Status
    detail: str
    fix: str = ""


def check_config(loaded: Settings | ConfigError) -> tuple[Settings | None, Check]:
    """The settings the command loaded, or None and the one line that says what is wrong with the
    file (``loaded``: the mistake the command met loading it)."""
    if isinstance(loaded, ConfigError):
        return None, Check("config", "fail", str(loaded), "correct the file, then run 'brief check' again")
    settings = loaded
    channels = len(channels_of(settings))
    detail = (
        f"{counted(len(settings.sources), 'source')}, "
        f"{counted(channels, 'channel')}, timezone {settings.timezone}"
    )
    if not settings.sources:
        return settings, Check(
            "config", "fail", "no [[sources]]", "add a [[sources]] entry with name = … and url = …"
        )
    return settings, Check("config", "ok", detail)


def in_force(settings: Settings) -> tuple[Settings, str, Check | None]:
    """The settings a run would use (``ops.policy.governing``: a pinned file's policy, else the
    adopted one, else the config's) and where their policy comes from; the config's when the store
    cannot be read (its own row says why). When the store opens but the policy in force cannot be
    restored (a file it keeps is gone), a failing row that says why, as 'brief run' would refuse."""
    from ops.policy import governing

    try:
        store = settings.storage.event_store()
        if not store.tree.exists():
            return settings, "config", None
    except (BriefError, OSError):
        return settings, "config", None
    try:
        chosen = governing(settings, store)
    except (BriefError, OSError) as exc:
        fix = "restore the store's policies/ folder, or adopt a policy again: brief policy adopt"
        return settings, "config", Check("policy", "fail", str(exc), fix)
    return chosen.settings, chosen.record["origin"], None


def check_story_model(settings: Settings, origin: str = "config") -> list[Check]:
    """A row when the pair model of the policy in force (``origin``: ``config``, ``adopted`` or
    ``pinned``) does not decide the stories: it was fitted on the cosines of other embedding models
    than the configured ones, so the rules decide (none otherwise). It names the ``[embedding]``
    setting that differs and the value the model needs, in one short line."""
    from pathlib import Path

    from tasks.pairs import fits, load_pair_model

    ref = settings.policy.story_model
    model = load_pair_model(ref)
    english, other = settings.embedding.model, settings.embedding.multilingual or None
    if model is None or fits(model, english, other):
        return []
    named = model.card.get("embedding") or {}
    needs = [
        f'{key} = "{fitted}"'
        for key, fitted, configured in (
            ("model", named.get("english"), english),
            ("multilingual", named.get("multilingual"), other),
        )
        if fitted and fitted != configured
    ]
    shown = ref.partition("@")[0] if ref.startswith("builtin:") else Path(ref).name
    if origin == "adopted":  # its file is the store's copy, named by its digest
        shown = f"the adopted {shown if ref.startswith('builtin:') else 'pair model'}"
    return [
        Check(
            "story model",
            "warn",
            f"the rules decide: {shown} needs [embedding] {', '.join(needs)}",
            f"set {'it' if len(needs) == 1 else 'them'} or refit: brief learn",
        )
    ]


def check_storage(settings: Settings) -> Check:
    """The store's root opens (on S3: the bucket exists and answers) and takes a probe file; how many
    days it holds."""
    from ops.workspace import store_of, writable

    try:
        store = store_of(settings, must_exist=False)
        days = store.days()
        writable(settings, store)
    except (BriefError, OSError) as exc:
        said = str(exc)  # the store's own refusals name [storage] root and how to fix it already
        fix = "" if "[storage] root" in said else "fix [storage] root (or the bucket, or its credentials)"
        return Check("storage", "fail", said, fix)
    if not days:
        return Check("storage", "ok", f"{settings.storage.root}: empty; the first run fills it")
    return Check(
        "storage", "ok", f"{settings.storage.root}: {counted(len(days), 'day')}, the last {days[-1]}"
    )


def channels_of(settings: Settings) -> list[tuple[str, Endpoint]]:
    """Every channel a message may go to, with its role: the ``[[delivery]]`` channels, then the
    ``[[alerts]]`` ones (checked the same way, as ``("alert", channel)``)."""
    return [("channel", c) for c in settings.delivery.channels] + [("alert", a) for a in settings.alerts]


# -- sources -----------------------------------------------------------------------------

FIXES = {
    "NOT_FOUND": "no archive for that date: check the url's folder and its {date}, or give a --date it has",
    "BAD_URL": "fix the source's url: http(s)://… or file://…",
    "NOT_A_FEED": "the URL is a web page, not its feed: use the page's RSS or Atom link as url",
    "MALFORMED_FEED": "the feed does not parse: check the URL in a browser, or ask the site to fix its feed",
    "TOO_LARGE": "the feed is over 10 MB: use a smaller feed of the site (a category, the latest items)",
    "BAD_ENCODING": "the server sent a broken compressed body: try again later, or use another feed URL",
    "TOO_MANY_REDIRECTS": "the URL redirects in a loop: open it in a browser and use where it ends",
    "NETWORK_ERROR": "the host cannot be reached: check its name in the url, and this machine's network",
    "NETWORK_TIMEOUT": "the host did not answer in time: check the url, or try again later",
}


def source_fix(error: str) -> str:
    if error in FIXES:
        return FIXES[error]
    if error in ("HTTP_404", "HTTP_410"):
        return "the feed is gone from that URL: find the site's current feed and fix url"
    if error in ("HTTP_401", "HTTP_403"):
        return "the site refuses the request: check the url, or whether the feed needs a login"
    if error.startswith("HTTP_"):
        return "the site is failing now: try again later; if it lasts, check the url"
    return "check the source's url"


def judge_source(
    name: str, archive: bool, day: date, events: list[Event], window: tuple[datetime, datetime]
) -> Check:
    """What one fetch of a source says: failed (why, how to fix), or its items and the newest
    item's date; a warning when it holds no item, or none in the news window of ``day``."""
    what = f"source {name}"
    for e in events:
        if e.event_type == "feed.failed":
            failed = payload_of(e, FeedFailed)
            return Check(what, "fail", f"{failed.error}: {failed.message}", source_fix(failed.error))
    items = [payload_of(e, ArticleCollectedV4) for e in events if e.event_type == "article.collected"]
    where = f"archive of {day}" if archive else "live feed, now"
    if not items:
        return Check(
            what,
            "warn",
            f"{where}: parsed, but it holds no items",
            "open the url in a browser: a feed that stays empty gives the brief nothing",
        )
    dates = [_utc(p.published_at) for p in items if p.published_at]
    newest = max(dates, default=None)
    detail = f"{where}: {counted(len(items), 'item')}, " + (
        f"newest {newest:%Y-%m-%d %H:%M} UTC" if newest else "none dated"
    )
    if newest is not None and newest < window[0]:
        return Check(
            what,
            "warn",
            f"{detail}, before the news window of {day}",
            "the feed may have stopped updating: check that url is still the site's feed",
        )
    return Check(what, "ok", detail)


def check_source(src: SourceSettings, day: date, today: date, settings: Settings) -> Check:
    """Fetch the source once (one retry at most): its archive of ``day``, or a live feed now."""
    from tasks.steps.collect import collect_source

    source = Source(src.name, src.url, src.language, src.kind)
    when = day if source.is_archive else today
    try:
        events = collect_source(source, when, RUN_ID, retries=1, backoff_s=0.5, timeout_s=15.0)
    except Exception as exc:  # collection records a broken feed as feed.failed; this is anything else
        return Check(
            f"source {src.name}",
            "fail",
            f"{type(exc).__name__}: {exc}",
            "reading this feed breaks the collector: report it with the feed's URL",
        )
    window = news_window(when, settings.zone, settings.policy.lookback_hours)
    return judge_source(src.name, source.is_archive, when, events, window)


def _utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


# -- channels ----------------------------------------------------------------------------


def check_channel(
    channel: Endpoint,
    role: str = "channel",
    *,
    send_test: bool = False,
    environ: Mapping[str, str] | None = None,
) -> Check:
    """A channel's variables are set and Apprise accepts its URL; with ``send_test``, one test
    message goes out (no retry). Nothing said here holds a secret."""
    import os

    from tasks.steps.send import rejects, send

    env = dict(os.environ if environ is None else environ)
    what = f"{role} {channel.name}"
    missing = [v for v in channel.variables if not env.get(v)]
    if missing:
        names = ", ".join(f"${v}" for v in missing)
        return Check(
            what,
            "fail",
            f"{names} not set",
            f"export {missing[0]}=… where the brief runs (the shell, the service's environment "
            "or the worker's), or fix the variable's name in the url",
        )
    why = rejects(channel.resolve(env), channel.secrets(env))
    if why is not None:
        return Check(
            what, "fail", why, "check the URL's form for its service: https://github.com/caronc/apprise/wiki"
        )
    variables = f"; {', '.join('$' + v for v in channel.variables)} set" if channel.variables else ""
    if not send_test:
        return Check(what, "ok", f"{channel.target}{variables}; not sent (--send-test sends one)")
    # an alert is plain text (tasks/steps/alert.py); a delivery channel has its format
    message = test_message(
        channel.name, role, channel.body_format if isinstance(channel, Channel) else "text"
    )
    [attempt] = send(channel.model_copy(update={"retries": 0}), message, environ=env)
    if not attempt.ok:
        return Check(
            what,
            "fail",
            f"{channel.target}: the test message failed: {attempt.reason}",
            "fix the URL or its variables, or the service's side, then run 'brief check --send-test' again",
        )
    return Check(what, "ok", f"{channel.target}{variables}; test message sent")


def test_message(name: str, role: str, body_format: Literal["html", "markdown", "text"]) -> Message:
    text = f"A test message from 'brief check' (dailybrief) to the {role} '{name}': it works."
    body = f"<p>{text}</p>" if body_format == "html" else text
    return Message(f"dailybrief: test of the {role} '{name}'", body, body_format)


# -- all of it ---------------------------------------------------------------------------


def preflight(
    settings: Settings,
    day: date,
    today: date,
    *,
    send_test: bool = False,
    environ: Mapping[str, str] | None = None,
) -> list[Check]:
    """The checks after the config's, in its order: storage, sources (at once), channels."""
    checks = [check_storage(settings)]
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(settings.sources)))) as pool:
        checks += list(pool.map(lambda s: check_source(s, day, today, settings), settings.sources))
    checks += [
        check_channel(channel, role, send_test=send_test, environ=environ)
        for role, channel in channels_of(settings)
    ]
    return checks


@dataclass(frozen=True)
class Report:
    """``brief check``: every check in order; ``settings`` is None when the config itself is wrong."""

    settings: Settings | None
    checks: Sequence[Check]

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def warned(self) -> int:
        return sum(c.status == "warn" for c in self.checks)


def check(
    loaded: Settings | ConfigError,
    day: date | None,
    *,
    send_test: bool = False,
    stage: Stage = quietly,
    clock: workspace.Clock = workspace.SYSTEM_CLOCK,
) -> Report:
    """The config (the settings the command loaded, or the mistake it met loading them), then (when
    it loaded) the store, every source of ``day`` (default today by ``clock``) fetched once and
    every channel (a test message to each with ``send_test``)."""
    settings, config_check = check_config(loaded)
    checks = [config_check]
    if settings is not None:
        chosen, origin, unrestored = in_force(settings)
        checks += [unrestored] if unrestored else check_story_model(chosen, origin)
        now = workspace.today(settings, clock)
        wanted = workspace.refuse_future(day or now, settings, "--date", clock)
        with stage("fetching every source once …"):
            checks += preflight(settings, wanted, now, send_test=send_test)
    return Report(settings, checks)
