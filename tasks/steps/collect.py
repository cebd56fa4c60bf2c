"""Collect one source for the run (and, for archives, the days the window reaches back into).

The step's I/O lives here: reading a ``file://`` archive or GETting an http(s) URL with
retries (backoff and jitter) on retryable failures only, and the clock; ``tasks/collect.py``
turns what was fetched into events.

The sources of a run are fetched at once (``fetch_one`` each, on threads), within the
``[collect]`` limits (``tasks/steps/hosts.py``), each fetch within its own timeout; what they
collected is appended afterwards in the order of the sources (``absorb``), so the log of a
run does not depend on which source answered first.
"""

from __future__ import annotations

import dataclasses
import functools
import glob
import random
import ssl
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
import polars as pl

from storage import tombstones
from storage.events import Event, utcnow
from storage.payloads import FeedFailed, FeedFetchedV2
from storage.raw import digest as body_digest
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks.collect import (
    MAX_BYTES,
    RETRYABLE_STATUS,
    Fetched,
    FetchError,
    Source,
    Validators,
    archive_skip_reason,
    failed_event,
    feed_events,
    live_skip_reason,
)
from tasks.settings import CollectSettings
from tasks.steps.context import RunContext, lookback_days
from tasks.steps.hosts import HostSlots, host_slots


@dataclass(frozen=True)
class SourceOutcome:
    source: str
    items: int
    new_events: int
    error: str | None = None
    message: str | None = None
    skipped: str | None = None  # why the source was not fetched (a live feed and a date not today, …)
    counts: Mapping[str, int] = field(default_factory=dict)  # events counted, by type (dry runs too)
    days: frozenset[date] = frozenset()  # the days it appended to
    # what it collected and has not appended yet: one batch per day, the brief date's first
    batches: tuple[tuple[Event, ...], ...] = ()


def fetch_one(ctx: RunContext, source_name: str) -> SourceOutcome:
    """Fetch one source for the run and say it as events, appending nothing: ``absorb``
    appends the outcomes of all the run's sources, in their order, once they are all in.

    The collect tasks of a run's sources run at once on one context: each works through a
    ``fork`` of it and leaves the shared context as it was (a dict that changes size while
    another thread iterates it fails that thread: Prefect walked the context it handed to each
    task, and a run failed now and then with "dictionary changed size during iteration").
    """
    return _collect(ctx.fork(), source_name)


def collect_one(ctx: RunContext, source_name: str) -> SourceOutcome:
    """Fetch one source and append what it said at once (a backfill's archives, whose order
    in the log is the days'); the outcome says what it counted and which days it wrote."""
    own = ctx.fork()
    outcome = _appended(own, _collect(own, source_name))
    return dataclasses.replace(outcome, counts=dict(own.counts), days=frozenset(own.written_days))


def absorb(ctx: RunContext, outcomes: Sequence[SourceOutcome]) -> list[SourceOutcome]:
    """Append what the sources' tasks collected, in the order of the outcomes (the sources'),
    and add what they counted, and the days they wrote, to the run's context."""
    done = []
    for outcome in outcomes:
        if outcome.batches:
            outcome = _appended(ctx, outcome)
        else:
            ctx.absorb(outcome.counts, outcome.days)
        done.append(outcome)
    return done


def collect_sources(ctx: RunContext) -> list[SourceOutcome]:
    """Every source of the run fetched at once (``[collect] max_fetches`` threads), then appended
    in their order: the flow does the same with one task per source."""
    names = [s.name for s in ctx.settings.sources]
    with ThreadPoolExecutor(max_workers=min(len(names), ctx.settings.collect.max_fetches) or 1) as pool:
        outcomes = list(pool.map(lambda name: fetch_one(ctx, name), names))
    return absorb(ctx, outcomes)


def _appended(ctx: RunContext, outcome: SourceOutcome) -> SourceOutcome:
    """``outcome`` with its batches appended through ``ctx``; a batch of a day before the brief
    date that failed is left out (that day is not the one being briefed)."""
    written, counts, days = 0, Counter(outcome.counts), set(outcome.days)
    for k, batch in enumerate(outcome.batches):
        if k and any(e.event_type == "feed.failed" for e in batch):
            continue
        written += ctx.append(batch)
        counts.update(e.event_type for e in batch)
        days.update(e.brief_date for e in batch if ctx.recorder.keeps)
    new_events = outcome.new_events + written
    return dataclasses.replace(
        outcome, new_events=new_events, counts=dict(counts), days=frozenset(days), batches=()
    )


def slots_of(ctx: RunContext) -> HostSlots:
    """The process's fetch slots for the run's ``[collect]`` limits."""
    return host_slots(ctx.settings.collect.per_host, ctx.settings.collect.max_fetches)


def _collect(ctx: RunContext, source_name: str) -> SourceOutcome:
    src = next(s for s in ctx.settings.sources if s.name == source_name)
    source = Source(src.name, src.url, src.language, src.kind)
    why = archive_skip(source, ctx.day) if source.is_archive else live_skip_reason(ctx.day, ctx.today())
    if why is not None:
        # a live feed only knows today (another date rests on the facts already stored for it);
        # an archive that starts later has nothing of the day
        skipped = ctx.emit(
            "feed.skipped",
            {"source": src.name, "url": src.url, "reason": why},
            subject=src.name,
            producer="collect@1",
        )
        return SourceOutcome(src.name, 0, 0, None, f"skipped: {why}", skipped=why, batches=((skipped,),))
    # a file has no validators: the log is not searched for them
    validators = last_validators(ctx, source.url_for(ctx.day)) if source.over_http else None
    limits = {"timeout_s": ctx.settings.collect.timeout_s, "slots": slots_of(ctx)}
    events = collect_kept(
        ctx.store, source, ctx.day, ctx.run_id, keep=ctx.recorder.keeps, validators=validators, **limits
    )
    batches = [tuple(events)]
    if source.is_archive:
        batches += lookback_batches(ctx, source, **limits)
    failed = [e for e in events if e.event_type == "feed.failed"]
    items = sum(e.event_type == "article.collected" for e in events)
    if failed:
        first = payload_of(failed[0], FeedFailed)
        said = first.message
        if first.error == "NOT_FOUND" and (holds := archive_holds(source)):
            missing = Path(unquote(urlsplit(source.url_for(ctx.day)).path))
            said = f"no file {missing.parent.name}/{missing.name} ({holds})"
        return SourceOutcome(src.name, 0, 0, first.error, said, batches=tuple(batches))
    return SourceOutcome(src.name, items, 0, batches=tuple(batches))


def archive_collected(ctx: RunContext, source_name: str, fetched: dict[date, set[tuple[str, str]]]) -> bool:
    """Whether a ``file://`` archive's files for ``ctx``'s day and the lookback days are each in the
    log already with the bytes they hold now (a ``feed.fetched`` of the file's URL and content hash
    in its day): reading them again would append nothing (a backfill's collection skips them).

    ``fetched``: each day's (URL, content hash) pairs, filled as days are read (one read a day for
    a whole backfill)."""
    src = next(s for s in ctx.settings.sources if s.name == source_name)
    source = Source(src.name, src.url, src.language, src.kind)
    if not source.is_archive or source.over_http:
        return False
    days_back = lookback_days(ctx.settings.policy.lookback_hours)
    for day in (ctx.day - timedelta(days=back) for back in range(days_back + 1)):
        url = source.url_for(day)
        path = Path(unquote(urlsplit(url).path))
        if not path.is_file():
            return False
        if day not in fetched:
            rows = ctx.store.query(functools.partial(ctx.store.scan, [day], event_types=["feed.fetched"]))
            fetched[day] = {
                (p.url, p.content_hash)
                for p in (payload_of(r, FeedFetchedV2) for r in rows.iter_rows(named=True))
            }
        if (url, body_digest(path.read_bytes())) not in fetched[day]:
            return False
    return True


def archive_skip(source: Source, day: date) -> str | None:
    """Why a ``file://`` archive is not read for ``day``: its day's file is absent and its folder
    holds only later days (see ``archive_skip_reason``). An archive over HTTP cannot be listed."""
    url = source.url_for(day)
    if urlsplit(url).scheme not in ("", "file") or Path(unquote(urlsplit(url).path)).is_file():
        return None
    dated = archive_dates(source)
    return None if dated is None else archive_skip_reason(day, dated)


def archive_dates(source: Source) -> list[date] | None:
    """The dates a ``file://`` archive whose file name holds ``{date}`` has files for (None for
    any other source: an archive over HTTP cannot be listed)."""
    if urlsplit(source.url).scheme not in ("", "file") or "{date}" not in Path(source.url).name:
        return None
    template = Path(unquote(urlsplit(source.url).path))
    before, _, after = template.name.partition("{date}")
    dated = []
    for other in template.parent.glob(f"{glob.escape(before)}*{glob.escape(after)}"):
        try:
            dated.append(date.fromisoformat(other.name[len(before) : len(other.name) - len(after)]))
        except ValueError:
            continue
    return sorted(dated)


def archive_holds(source: Source) -> str | None:
    """What a dated ``file://`` archive holds, said for a date it has no file of ("its archive
    holds 2025-08-06 only", "… 2025-07-01 .. 2025-07-31", "its archive folder has no dated
    file"); None for any other source."""
    dated = archive_dates(source)
    if dated is None:
        return None
    if not dated:
        return "its archive folder has no dated file"
    if len(dated) == 1:
        return f"its archive holds {dated[0].isoformat()} only"
    return f"its archive holds {dated[0].isoformat()} .. {dated[-1].isoformat()}"


def collect_lookback(ctx: RunContext, source: Source) -> int:
    """For a dated archive, also the days the lookback window reaches back into, when they
    exist, appended at once; returns the events written (see ``lookback_batches``)."""
    written = 0
    for events in lookback_batches(ctx, source):
        if not any(e.event_type == "feed.failed" for e in events):
            written += ctx.append(events)  # counted in the run, and nothing written in a dry run
    return written


def lookback_batches(ctx: RunContext, source: Source, **options: Any) -> list[tuple[Event, ...]]:
    """For a dated archive, what it says of the days the lookback window reaches back into.

    A brief then rests on the same facts whatever order dates are run in: an article of the
    day before is known as the day before's news even if that day was never run. Facts
    already in the log are not written again; a day without an archive file is skipped
    without a failure (it is not the day being briefed): its batch is a ``feed.failed`` that
    is not appended.
    """
    days_back = lookback_days(ctx.settings.policy.lookback_hours)
    batches = []
    for back in range(1, days_back + 1):
        day = ctx.day - timedelta(days=back)
        events = collect_kept(
            ctx.store, source, day, ctx.run_id, keep=ctx.recorder.keeps, retries=1, **options
        )
        batches.append(tuple(events))
    return batches


def last_validators(ctx: RunContext, url: str) -> Validators | None:
    """ETag / Last-Modified of the latest successful fetch of ``url`` in the days the run reads.

    A feed not fetched in that time is fetched whole: the same facts, one full download.
    """
    frame = ctx.store.query(
        lambda: ctx.store.scan(ctx.reach, event_types=["feed.fetched"]).filter(
            pl.col("payload").str.contains(url, literal=True)
        )
    )
    for row in reversed(frame.rows(named=True)):
        fetch = payload_of(row, FeedFetchedV2)
        if fetch.url == url and (fetch.etag or fetch.last_modified):
            return Validators(fetch.etag, fetch.last_modified, fetch.content_hash)
    return None


def collect_kept(
    store: ParquetEventStore, source: Source, day: date, run_id: str, *, keep: bool = True, **options: Any
) -> list[Event]:
    """``collect_source`` for a store: the fetched body kept under the root (``storage/raw.py``)
    before any event names it, and the articles a purge took out left out (``storage/tombstones.py``).
    ``keep=False`` (a dry run) writes nothing."""
    bodies: dict[str, bytes] = {}
    events = collect_source(source, day, run_id, bodies=bodies if keep else None, **options)
    for relative, data in bodies.items():
        store.tree.raw.write(relative, data)
    return tombstones.without_purged(events, store.tree.purged.tombstones())


def collect_source(
    source: Source,
    day: date,
    run_id: str,
    *,
    now: datetime | None = None,
    validators: Validators | None = None,
    retries: int = 3,
    backoff_s: float = 0.5,
    timeout_s: float = 20.0,
    bodies: dict[str, bytes] | None = None,
    slots: HostSlots | None = None,
) -> list[Event]:
    """Everything one source says for ``day``, as events (never raises for bad input).

    ``bodies``: given, ``feed.fetched`` names where its body is to be kept and the body is put
    there (path relative to the root -> bytes) for the caller to write."""
    url = source.url_for(day)
    started = time.perf_counter()
    at = now or utcnow()
    try:
        fetched = fetch(
            url, validators=validators, retries=retries, backoff_s=backoff_s, timeout_s=timeout_s, slots=slots
        )
    except FetchError as exc:
        return [failed_event(source, day, run_id, at, url, exc)]
    elapsed_ms = (time.perf_counter() - started) * 1000
    events = feed_events(
        source,
        day,
        run_id,
        at=at,
        url=url,
        fetched=fetched,
        validators=validators,
        elapsed_ms=elapsed_ms,
        keep_body=bodies is not None,
    )
    if bodies is not None:
        for event in events:
            body = payload_of(event, FeedFetchedV2).body if event.event_type == "feed.fetched" else None
            if body:
                bodies[body] = fetched.body
    return events


def fetch(
    url: str,
    *,
    timeout_s: float = 20.0,
    retries: int = 3,
    backoff_s: float = 0.5,
    validators: Validators | None = None,
    slots: HostSlots | None = None,
) -> Fetched:
    """Read a ``file://`` URL, or GET an http(s) URL with retries on retryable failures only.

    Each GET holds one of ``slots`` (default: the default ``[collect]`` limits) for its host
    while it runs, not while it waits to retry, and takes at most ``timeout_s`` in all."""
    scheme = urlsplit(url).scheme
    if scheme in ("", "file"):
        path = Path(unquote(urlsplit(url).path) if scheme else url)
        if not path.is_file():
            raise FetchError("NOT_FOUND", f"no file at {path}", retryable=False)
        if path.stat().st_size > MAX_BYTES:
            raise FetchError("TOO_LARGE", f"{path} is over {MAX_BYTES} bytes", retryable=False)
        return Fetched(path.read_bytes(), 200)
    if scheme not in ("http", "https"):
        raise FetchError("BAD_URL", f"unsupported URL scheme {scheme!r}", retryable=False)
    attempt = 0
    while True:
        attempt += 1
        try:
            with (slots or default_slots()).slot(url):
                return _get(url, timeout_s, attempt, validators or Validators())
        except FetchError as exc:
            exc.attempts = attempt
            if not exc.retryable or attempt > retries:
                raise
            delay = getattr(exc, "retry_after", None) or backoff_s * 2 ** (attempt - 1)
            time.sleep(delay + random.uniform(0, backoff_s / 2))


def default_slots() -> HostSlots:
    limits = CollectSettings()
    return host_slots(limits.per_host, limits.max_fetches)


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every fetch of the process (httpx's default: certifi, or SSL_CERT_FILE /
    SSL_CERT_DIR): loading the certificate store costs about 90 ms, more than a feed's fetch."""
    return httpx.create_ssl_context()


def _get(url: str, timeout_s: float, attempt: int, validators: Validators) -> Fetched:
    headers = {"User-Agent": "dailybrief/0.1"}
    if validators.etag:
        headers["If-None-Match"] = validators.etag
    if validators.last_modified:
        headers["If-Modified-Since"] = validators.last_modified
    deadline = time.monotonic() + timeout_s
    try:
        with (
            httpx.Client(timeout=timeout_s, follow_redirects=True, max_redirects=5, verify=_tls()) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            if response.status_code >= 400:
                error = FetchError(
                    f"HTTP_{response.status_code}",
                    f"HTTP {response.status_code} from {url}",
                    retryable=response.status_code in RETRYABLE_STATUS,
                )
                retry_after = response.headers.get("Retry-After", "")
                if retry_after.isdigit():
                    error.retry_after = min(float(retry_after), 60.0)  # type: ignore[attr-defined]
                raise error
            if response.status_code == 304:
                return Fetched(b"", 304, None, attempt, validators.etag, validators.last_modified)
            chunks, size = [], 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if time.monotonic() > deadline:  # a body that trickles in is as slow as no answer
                    raise httpx.ReadTimeout(f"the body took over {timeout_s}s")
                if size > MAX_BYTES:
                    raise FetchError("TOO_LARGE", f"{url} is over {MAX_BYTES} bytes", retryable=False)
                chunks.append(chunk)
            return Fetched(
                b"".join(chunks),
                response.status_code,
                response.headers.get("content-type"),
                attempt,
                response.headers.get("ETag"),
                response.headers.get("Last-Modified"),
            )
    except httpx.TimeoutException:
        raise FetchError(
            "NETWORK_TIMEOUT", f"timed out after {timeout_s}s fetching {url}", retryable=True
        ) from None
    except httpx.TooManyRedirects:
        raise FetchError("TOO_MANY_REDIRECTS", f"more than 5 redirects from {url}", retryable=False) from None
    except httpx.TransportError as exc:
        raise FetchError("NETWORK_ERROR", f"{type(exc).__name__} fetching {url}", retryable=True) from None
    except httpx.DecodingError:
        reason = "does not decode (a broken gzip or deflate stream)"
        raise FetchError("BAD_ENCODING", f"the body from {url} {reason}", retryable=False) from None
    except httpx.InvalidURL as exc:
        raise FetchError("BAD_URL", f"invalid URL {url!r}: {exc}", retryable=False) from None
