"""Events read through their payload models: the one way code outside ``storage/`` reads a payload.

``payload_of(event, Model)`` returns the payload of an event, or of a stored row (a scanned frame's
row: ``event_type``, ``schema_version`` and ``payload`` as JSON text), as the model the registry
holds for its type's latest version, the upcasters applied first. ``Model`` names what the caller
expects: the registered model or a class it extends (``StoryScored`` reads a ``shadow.scored``); any
other type is refused, so a reader cannot read one event as another.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import orjson
from pydantic import BaseModel

import storage.payloads  # noqa: F401  (fills the registry)
from storage.events import Event
from storage.registry import REGISTRY, EventRegistry

if TYPE_CHECKING:  # loaded by the frames that use ``payload_field``: a view that reads events does not
    import polars as pl

P = TypeVar("P", bound=BaseModel)


def payload_of(source: Event | Mapping[str, Any], model: type[P], registry: EventRegistry = REGISTRY) -> P:
    """The payload of ``source`` (an event or a stored row) as ``model``, upcast to the latest version."""
    if isinstance(source, Event):
        event_type, version, raw = source.event_type, source.schema_version, source.payload
    else:
        event_type, version, raw = source["event_type"], int(source["schema_version"]), source["payload"]
    data = orjson.loads(raw) if isinstance(raw, str | bytes) else dict(raw)
    spec = registry.spec(event_type)
    version, data = registry.upcast(event_type, version, data)
    registered = spec.models[version]
    if not issubclass(registered, model):
        raise TypeError(f"{event_type} v{version} is a {registered.__name__}, not a {model.__name__}")
    return registered.model_validate(data)  # type: ignore[return-value]


def payload_field(event_type: str, name: str, *keys: str, registry: EventRegistry = REGISTRY) -> pl.Expr:
    """A scanned frame's payload field (``name``, then ``keys`` into its mapping) as a string column,
    for the rows of ``event_type``: only a field every registered version of the type declares, so a
    frame read this way sees what the upcasters give (an upcaster adds or renames fields; one kept by
    every version is read as it was written). Any other field is read through ``payload_of``."""
    spec = registry.spec(event_type)
    missing = [v for v, model in spec.models.items() if name not in model.model_fields]
    if missing:
        raise KeyError(f"{event_type}: field {name!r} is not in version(s) {missing}; read it by payload_of")
    import polars as pl

    path = "$." + name + "".join(f"['{key}']" for key in keys)
    return pl.col("payload").str.json_path_match(path)


WHY_KEYS = ("reason", "error", "message")  # what a failure says comes first in its cut-short payload


def why_first(payload: str) -> str:
    """A payload's JSON with the keys that say why (``WHY_KEYS``) first, so that a line cut short
    still shows why a delivery, a feed or a run failed (``brief events``); any other text as it is."""
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return payload
    if not isinstance(data, dict) or not any(k in data for k in WHY_KEYS):
        return payload
    ordered = {k: data[k] for k in WHY_KEYS if k in data} | data
    return orjson.dumps(ordered).decode()
