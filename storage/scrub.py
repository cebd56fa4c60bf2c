"""Taking an article's words out of stored data: its events, derived text, raw bodies and files.

``Needles`` are what must not remain: the purged articles' ids, and their titles, links and
summaries in every form the store writes them in (as given, JSON-escaped once and twice, HTML-
and Markdown-escaped). Functions here are pure over bytes and frames; ``ops/purge.py`` decides
what to rewrite and does the I/O.

Text shorter than ``MIN_TEXT`` characters is not looked for in other events' text (a title such
as "GPT-5" is a name other stories use too); the article's own events go whole whatever their
length.
"""

from __future__ import annotations

import gzip
import html
import io
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from storage.events import canonical_json
from storage.raw import compress, decompress

MARK = "[purged]"
MIN_TEXT = 12
SUMMARY_PREFIX = 120  # a summary's start is looked for too: briefs and prompts quote it cut short
# an article's own events: dropped whole
OWN_EVENTS = ("article.collected", "article.corrected")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|<>~])")


def _json_inner(text: str, ascii_only: bool) -> str:
    return json.dumps(text, ensure_ascii=ascii_only)[1:-1]


@dataclass(frozen=True)
class Needles:
    ids: frozenset[str]
    texts: tuple[str, ...]  # as the articles gave them: titles, links, summaries
    links: frozenset[str]

    @classmethod
    def of(cls, ids: Iterable[str], texts: Iterable[str], links: Iterable[str]) -> Needles:
        kept = {t.strip() for t in texts if t and len(t.strip()) >= MIN_TEXT}
        for text in list(kept):
            if len(text) > SUMMARY_PREFIX:
                kept.add(text[:SUMMARY_PREFIX])
        return cls(frozenset(ids), tuple(sorted(kept, key=len, reverse=True)), frozenset(links))

    def __bool__(self) -> bool:
        return bool(self.ids or self.texts)

    @property
    def in_values(self) -> tuple[str, ...]:
        """The forms a decoded string may hold: as given, JSON-escaped once (JSON inside a prompt),
        HTML- and Markdown-escaped; longest first."""
        forms = set()
        for text in self.texts:
            for escaped in (
                text,
                html.escape(text, quote=False),
                html.escape(text),
                _MD_SPECIAL.sub(r"\\\1", text),
            ):
                forms |= {escaped, _json_inner(escaped, False), _json_inner(escaped, True)}
        return tuple(sorted((f for f in forms if len(f) >= MIN_TEXT), key=len, reverse=True))

    @property
    def in_files(self) -> tuple[str, ...]:
        """The forms stored text may hold: those of ``in_values``, JSON-escaped once more."""
        forms = set(self.in_values)
        for form in self.in_values:
            forms |= {_json_inner(form, False), _json_inner(form, True)}
        return tuple(sorted(forms, key=len, reverse=True))

    def found_in(self, text: str) -> bool:
        return any(form in text for form in self.in_files)


def scrub_text(text: str, needles: Needles) -> str:
    if not any(form in text for form in needles.in_values):
        return text
    for form in needles.in_values:
        text = text.replace(form, MARK)
    return text


def scrub_value(value: Any, needles: Needles) -> Any:
    """``value`` (decoded JSON) with every needle in its strings replaced by ``[purged]``."""
    if isinstance(value, str):
        return scrub_text(value, needles)
    if isinstance(value, list):
        return [scrub_value(v, needles) for v in value]
    if isinstance(value, dict):
        return {k: scrub_value(v, needles) for k, v in value.items()}
    return value


def _without_anchored_facts(payload: dict[str, Any], ids: frozenset[str]) -> dict[str, Any]:
    facts = payload.get("facts")
    if not isinstance(facts, list):
        return payload
    kept = [f for f in facts if (f.get("anchor") or {}).get("article_id") not in ids]
    return {**payload, "facts": kept} if len(kept) != len(facts) else payload


def scrub_payload(
    event_type: str, payload: dict[str, Any], needles: Needles, bodies: Mapping[str, str | None]
) -> dict[str, Any]:
    """One event's payload without the needles: facts anchored to a purged article go, a raw body
    rewritten without it is named by its new path (``bodies``: old -> new, None when dropped)."""
    if event_type == "story.analyzed":
        payload = _without_anchored_facts(payload, needles.ids)
    if event_type == "feed.fetched" and payload.get("body") in bodies:
        new = bodies[payload["body"]]
        payload = {k: v for k, v in payload.items() if k != "body"} | ({"body": new} if new else {})
    if event_type == "regression.case_added":  # its frozen facts, frozen again without them
        from storage.frozen import renamed

        payload = renamed(payload, bodies)
    return scrub_value(payload, needles)  # type: ignore[no-any-return]


def scrub_events(
    frame: pl.DataFrame, needles: Needles, bodies: Mapping[str, str | None] | None = None
) -> pl.DataFrame | None:
    """A day's events (a rewrite's transform) without the purged articles: their own events
    dropped, every other event's text scrubbed; None when the day holds none of it.

    Tombstones (``article.purged``) are left as they are: they hold ids and digests only.
    """
    bodies = bodies or {}
    ids = list(needles.ids)
    own = pl.col("event_type").is_in(OWN_EVENTS) & pl.col("subject_id").is_in(ids)
    warned = pl.col("event_type") == "feed.warned"
    touched = pl.lit(False)
    if needles.in_files:
        touched = pl.col("payload").str.contains_any(list(needles.in_files))
    if ids:
        touched = touched | pl.col("payload").str.contains_any(ids)
    if bodies:
        touched = touched | pl.col("payload").str.contains_any(list(bodies))
    touched = touched & (pl.col("event_type") != "article.purged")
    flagged = frame.with_columns(own.alias("_own"), touched.alias("_touched"), warned.alias("_warned"))
    if not flagged.select(pl.col("_own").any() | pl.col("_touched").any()).item():
        return None
    keep, payloads = [], []
    for row in flagged.select("event_type", "payload", "_own", "_touched", "_warned").iter_rows():
        event_type, text, is_own, is_touched, is_warned = row
        if is_own:
            keep.append(False)
            payloads.append(text)
            continue
        if not is_touched:
            keep.append(True)
            payloads.append(text)
            continue
        data = orjson.loads(text)
        if is_warned and data.get("entry_url", "").split("#")[0] in needles.links:
            keep.append(False)
            payloads.append(text)
            continue
        keep.append(True)
        payloads.append(canonical_json(scrub_payload(event_type, data, needles, bodies)))
    out = frame.with_columns(pl.Series("payload", payloads, dtype=pl.String)).filter(pl.Series(keep))
    return out


# -- raw bodies and other files ------------------------------------------------------------

_ENTRY = re.compile(rb"<(item|entry)\b[^>]*>.*?</\1\s*>", re.DOTALL | re.IGNORECASE)


def _byte_forms(needles: Needles) -> list[bytes]:
    forms = {f.encode() for f in needles.in_files}
    for text in needles.texts:  # XML escapes as feeds write them
        forms |= {
            html.escape(text, quote=False).encode(),
            html.escape(text).encode(),
            text.replace("&", "&#38;").encode(),
        }
    return sorted((f for f in forms if len(f) >= MIN_TEXT), key=len, reverse=True)


def scrub_bytes(data: bytes, needles: Needles) -> bytes | None:
    """Text bytes without the needles (None when there are none): a feed's ``<item>`` or
    ``<entry>`` that holds one is taken out whole, any other occurrence replaced by ``[purged]``."""
    forms = _byte_forms(needles)
    if not any(f in data for f in forms):
        return None
    data = _ENTRY.sub(lambda m: b"" if any(f in m.group(0) for f in forms) else m.group(0), data)
    for form in forms:
        data = data.replace(form, MARK.encode())
    return data


def scrub_parquet(data: bytes, needles: Needles) -> bytes | None:
    """A Parquet file's string columns without the needles (None when it holds none)."""
    table = pq.read_table(io.BytesIO(data))
    columns, changed = [], False
    for name in table.column_names:
        column = table.column(name)
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            values = column.to_pylist()
            scrubbed = [v if v is None else scrub_text(v, needles) for v in values]
            if scrubbed != values:
                changed = True
                column = pa.chunked_array([pa.array(scrubbed, type=column.type)])
        columns.append(column)
    if not changed:
        return None
    sink = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_arrays(columns, schema=table.schema), sink, compression="zstd")
    return sink.getvalue().to_pybytes()  # type: ignore[no-any-return]


def scrub_file(name: str, data: bytes, needles: Needles) -> bytes | None:
    """Any file's bytes without the needles, in the file's own format (zstd, gzip, Parquet or
    text); None when it holds none."""
    if name.endswith(".parquet"):
        return scrub_parquet(data, needles)
    if name.endswith(".zst"):
        inner = scrub_bytes(decompress(data), needles)
        return None if inner is None else compress(inner)
    if name.endswith(".gz"):
        inner = scrub_bytes(gzip.decompress(data), needles)
        return None if inner is None else gzip.compress(inner)
    return scrub_bytes(data, needles)
