"""The event envelope: one immutable fact or derivation, one Parquet row.

``new_event`` is the only way the pipeline makes events: it validates the payload against
the registry and derives a deterministic ``event_id`` from the event's stream, type,
natural key and content (plus the run, for derivations), so a retry, a rerun or a replay
never stores the same fact twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from functools import cached_property
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, field_validator

from storage.registry import REGISTRY, EventRegistry

ENVELOPE_COLUMNS = (
    "event_id",
    "event_type",
    "schema_version",
    "occurred_at",
    "seq",
    "brief_date",
    "run_id",
    "subject_id",
    "source_event_ids",
    "produced_by",
    "policy_version",
    "payload",
)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
EPOCH_DAY = date(1970, 1, 1)
MICROSECOND = timedelta(microseconds=1)


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: equal data gives equal text, hence equal hashes."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=_plain).decode()


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"{type(value).__name__} is not JSON data")


def short_hash(*parts: str, size: int = 32) -> str:
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=size // 2)
    return digest.hexdigest()


class Event(BaseModel):
    """One event. Frozen: nothing mutates an event after it is made."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    event_id: str
    event_type: str
    schema_version: int
    occurred_at: datetime
    seq: int = 0
    brief_date: date
    run_id: str
    subject_id: str
    source_event_ids: tuple[str, ...] = ()
    produced_by: str
    policy_version: str = ""
    payload: Mapping[str, Any]

    @field_validator("event_id")
    @classmethod
    def _hex_id(cls, value: str) -> str:
        if len(value) != 32 or value.strip("0123456789abcdef"):
            raise ValueError("event_id must be 32 lowercase hex digits, as new_event makes it")
        return value

    @field_validator("occurred_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        if value.tzinfo is None:
            raise ValueError("occurred_at must carry a timezone (UTC)")
        return value.astimezone(UTC)

    @cached_property
    def stored_line(self) -> bytes:
        """The event as one line of a log segment (JSON, newline-ended; times as integers, payload as text).

        Computed once: ``new_event`` fills it from the payload text it already hashed, so
        appending costs no second serialisation. Not a field: equality and dumps ignore it.
        """
        return _stored_line(self, canonical_json(dict(self.payload)))


def new_event(
    event_type: str,
    payload: Mapping[str, Any] | BaseModel,
    *,
    brief_date: date,
    run_id: str,
    subject_id: str,
    produced_by: str,
    occurred_at: datetime,
    seq: int = 0,
    source_event_ids: Sequence[str] = (),
    policy_version: str = "",
    registry: EventRegistry = REGISTRY,
) -> Event:
    """Validate ``payload`` for ``event_type`` (latest schema version) and build the event.

    The id hashes the day, the type, the natural key and the payload; derivations (events
    that a run decided under a policy) also hash the run id and the policy version, so each
    run's decisions stand beside the others while facts are shared by every run.
    """
    spec = registry.spec(event_type)
    version = spec.latest_version
    raw = payload.model_dump(mode="json") if isinstance(payload, BaseModel) else payload
    data = registry.validate(event_type, version, raw)
    body = canonical_json(data)
    parts = [brief_date.isoformat(), event_type, spec.natural_key(data)]
    if spec.hash_payload:
        parts.append(body)
    if not spec.is_fact_payload(data):
        parts += [run_id, policy_version]
    event = Event(
        event_id=short_hash(*parts),
        event_type=event_type,
        schema_version=version,
        occurred_at=occurred_at,
        seq=seq,
        brief_date=brief_date,
        run_id=run_id,
        subject_id=subject_id,
        source_event_ids=tuple(source_event_ids),
        produced_by=produced_by,
        policy_version=policy_version,
        payload=data,
    )
    event.__dict__["stored_line"] = _stored_line(event, body)
    return event


def _stored_line(event: Event, payload_text: str) -> bytes:
    row = {name: getattr(event, name) for name in ENVELOPE_COLUMNS}
    row["occurred_at"] = (event.occurred_at - EPOCH) // MICROSECOND
    row["brief_date"] = (event.brief_date - EPOCH_DAY).days
    row["payload"] = payload_text
    return orjson.dumps(row, option=orjson.OPT_APPEND_NEWLINE)


def event_from_row(row: Mapping[str, Any], registry: EventRegistry = REGISTRY) -> Event:
    """Rebuild an event from a stored row, upcasting its payload to the latest version."""
    payload = row["payload"]
    data = orjson.loads(payload) if isinstance(payload, str | bytes) else dict(payload)
    version, data = registry.upcast(row["event_type"], int(row["schema_version"]), data)
    occurred = row["occurred_at"]
    if isinstance(occurred, datetime) and occurred.tzinfo is None:
        occurred = occurred.replace(tzinfo=UTC)
    return Event(
        event_id=row["event_id"],
        event_type=row["event_type"],
        schema_version=version,
        occurred_at=occurred,
        seq=int(row["seq"]),
        brief_date=row["brief_date"],
        run_id=row["run_id"],
        subject_id=row["subject_id"],
        source_event_ids=tuple(row["source_event_ids"] or ()),
        produced_by=row["produced_by"],
        policy_version=row["policy_version"] or "",
        payload=data,
    )


def utcnow() -> datetime:
    return datetime.now(UTC)
