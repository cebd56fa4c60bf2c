"""Which event types exist, what their payloads look like, and how old versions are upcast.

The registry maps ``(event_type, schema_version)`` to a frozen pydantic payload model. An
event of an unknown type, or with a payload its model refuses, is rejected before anything
is written. Old schema versions are never rewritten on disk: ``upcast`` chains one
``vN -> vN+1`` function after another when an event is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from storage.errors import InvalidPayload, UnknownEventType

EVENT_TYPE_PATTERN = re.compile(r"^[a-z][a-z_]*\.[a-z][a-z_]*$")

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
KeyFunction = Callable[[Mapping[str, Any]], str]
FactTest = Callable[[Mapping[str, Any]], bool]


@dataclass(frozen=True)
class EventSpec:
    """What the registry knows of one event type."""

    event_type: str
    models: Mapping[int, type[BaseModel]]
    upcasters: Mapping[int, Upcaster]
    is_fact: bool
    natural_key: KeyFunction
    hash_payload: bool = True
    fact_when: FactTest | None = None

    def is_fact_payload(self, payload: Mapping[str, Any]) -> bool:
        """Whether an event of this type with this payload is a fact (its id holds no run)."""
        return self.is_fact or (self.fact_when is not None and self.fact_when(payload))

    @property
    def latest_version(self) -> int:
        return max(self.models)


@dataclass
class EventRegistry:
    """A mutable catalogue of event types; the module-level ``REGISTRY`` is the project's."""

    _specs: dict[str, EventSpec] = field(default_factory=dict)
    catalog: str | None = None  # the module that registers this registry's types, imported when first needed

    def register(
        self,
        event_type: str,
        models: Mapping[int, type[BaseModel]],
        *,
        fact: bool,
        natural_key: KeyFunction,
        upcasters: Mapping[int, Upcaster] | None = None,
        hash_payload: bool = True,
        fact_when: FactTest | None = None,
    ) -> None:
        """Register ``event_type`` with one payload model per schema version.

        ``upcasters[n]`` turns a version-``n`` payload into a version ``n+1`` payload; one
        must exist for every version but the latest. ``hash_payload=False`` leaves the
        payload out of the event id, for facts whose payload carries volatile detail (a
        fetch's timing) beside an identity that the natural key already states.
        ``fact_when``: for a derivation type, the payloads that are facts all the same (an
        observation no policy decides), whose id then holds no run, so a rerun stores them once.
        """
        if not EVENT_TYPE_PATTERN.match(event_type):
            raise UnknownEventType(
                f"event type {event_type!r} is not of the form 'domain.action' (lower case)"
            )
        ups = dict(upcasters or {})
        missing = [v for v in models if v != max(models) and v not in ups]
        if missing:
            raise UnknownEventType(f"{event_type}: no upcaster from version(s) {missing}")
        self._specs[event_type] = EventSpec(
            event_type, dict(models), ups, fact, natural_key, hash_payload, fact_when
        )

    def _catalogued(self) -> None:
        if self.catalog is not None:
            import importlib

            importlib.import_module(self.catalog)  # registers its types the first time only

    def spec(self, event_type: str) -> EventSpec:
        self._catalogued()
        try:
            return self._specs[event_type]
        except KeyError:
            import difflib

            near = difflib.get_close_matches(event_type, list(self._specs), n=1, cutoff=0.7)
            hint = f"did you mean {near[0]!r}?" if near else f"known: {', '.join(sorted(self._specs))}"
            raise UnknownEventType(f"unknown event type {event_type!r}; {hint}") from None

    def types(self) -> list[str]:
        self._catalogued()
        return sorted(self._specs)

    def validate(self, event_type: str, version: int, payload: Mapping[str, Any]) -> dict[str, Any]:
        """Return the payload as the registered model dumps it, or raise ``InvalidPayload``."""
        spec = self.spec(event_type)
        model = spec.models.get(version)
        if model is None:
            raise UnknownEventType(
                f"{event_type} has no schema version {version} (known: {sorted(spec.models)})"
            )
        try:
            return model.model_validate(dict(payload)).model_dump(mode="json")
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "payload"
            raise InvalidPayload(
                f"{event_type} v{version}: field '{where}': {first['msg']} "
                f"({exc.error_count()} error{'' if exc.error_count() == 1 else 's'} in all)"
            ) from None

    def upcast(self, event_type: str, version: int, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """Bring a stored payload up to the latest version, one step at a time."""
        spec = self.spec(event_type)
        while version < spec.latest_version:
            payload = spec.upcasters[version](payload)
            version += 1
        return version, payload


# The project's event types are registered by ``storage/payloads.py`` as it is imported: by name,
# at the first look-up, and not when ``storage`` is imported (``brief --help`` and a mistake in
# the config need none of them, and its models take a second to build).
REGISTRY = EventRegistry(catalog="storage.payloads")
