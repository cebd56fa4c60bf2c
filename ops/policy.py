"""The adopted policy and its history (``brief policy …``), and the policy a run runs under.

Adopting a policy appends one ``policy.adopted`` fact that holds it whole: the ``[policy]`` table,
the ``[llm]`` table when there is one, and the digests of its files (the editorial model, the story
pair model, the vocabulary, the prompt templates), which are stored under the root by digest
(``storage/blobs.py``). A run under the adoption reads its models from those copies whenever the
file it names has changed since (a new release of a shipped model): its stories and scores stay
the adopted ones. With them, the change from the policy before it, who adopted it and why,
and the ``policy.evaluated`` event of that candidate when there is one. A rollback is one more
adoption, of the policy before the current one.

An adoption lands in the stream of the day it was made (in the configured timezone). So that a run
finds the policy in force without reading every day of the log, each adoption is also copied, once
it is in the log, to ``policies/adopted/<time>-<event id>.json`` (its stored line); ``brief policy
history`` reads the log itself and puts back any copy that is missing.

Which policy a run uses: a file the config pins (``policy_file``), else the latest adoption, else
the config's own ``[policy]``. The run records which (``run.started``'s ``policy``) and says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow.fs as pafs

from storage import blobs
from storage.atomic import write_bytes
from storage.errors import InputError
from storage.events import Event, event_from_row, new_event, utcnow
from storage.payloads import PolicyAdoptedV2, PolicyArtefact, PolicyEvaluated, PolicyTables
from storage.root.policies import Blobs
from storage.store import ParquetEventStore
from storage.typed import payload_of
from tasks.editorial import model_file
from tasks.settings import LLMSettings, PolicySettings, Settings

if TYPE_CHECKING:
    from tasks.steps.context import Resources

PRODUCER = "policy@1"


# --- what a policy is made of ---------------------------------------------------------------


# the [policy] keys that name a model file, and the kind of artefact each is kept as
MODEL_FILES = (("editorial_model", "model"), ("story_model", "story_model"))


def _model_bytes(key: str, ref: str) -> bytes | None:
    """The bytes of the model file ``ref`` names as the policy's ``key``; None for ``rules``."""
    from tasks.pairs import pair_model_file

    path = pair_model_file(ref) if key == "story_model" else model_file(ref)
    return None if path is None else path.read_bytes()


def store_policy(settings: Settings, store: ParquetEventStore) -> dict[str, Any]:
    """Store the files of ``settings``' policy by digest; the payload fields that hold it whole."""
    from tasks.llm import PROMPTS_DIR, TASKS
    from tasks.vocabulary import VOCABULARY_FILE

    kept = store.tree.blobs
    artefacts = []
    policy = settings.policy.model_dump(mode="json")
    for key, kind in MODEL_FILES:
        ref = policy[key]
        data = _model_bytes(key, ref)
        if data is None:
            continue
        digest, path = kept.put(data, ".json")
        if ref.startswith("builtin:"):  # the shipped model by its name, whichever copy it was read from
            ref = policy[key] = ref.partition("@")[0]
        else:
            policy[key] = f"stored:{path}"
        artefacts.append({"kind": kind, "name": ref, "digest": digest, "path": path})
    digest, path = kept.put(VOCABULARY_FILE.read_bytes(), ".json")
    artefacts.append({"kind": "vocabulary", "name": VOCABULARY_FILE.name, "digest": digest, "path": path})
    llm = None
    if settings.llm is not None:
        llm = settings.llm.model_dump(mode="json")
        folder = Path(settings.llm.prompts).expanduser() if settings.llm.prompts else None
        for task in TASKS:
            source = folder / f"{task}.toml" if folder and (folder / f"{task}.toml").is_file() else None
            digest, path = kept.put((source or PROMPTS_DIR / f"{task}.toml").read_bytes(), ".toml")
            artefacts.append({"kind": "prompt", "name": task, "digest": digest, "path": path})
        if folder is not None:
            llm["prompts"] = "stored"
    return {"policy": policy, "llm": llm, "artefacts": artefacts}


def restore(settings: Settings, adopted: Event, store: ParquetEventStore) -> Settings:
    """``settings`` with the adopted policy (and its ``[llm]``), read back from the stored files."""
    adoption = payload_of(adopted, PolicyAdoptedV2)
    kept = store.tree.blobs
    policy = dict(adoption.policy)
    by_kind: dict[str, list[PolicyArtefact]] = {}
    for artefact in adoption.artefacts:
        by_kind.setdefault(artefact.kind, []).append(artefact)
    for key, kind in MODEL_FILES:
        pinned = _pinned(key, policy[key], by_kind.get(kind, []), kept)
        if pinned is not None:
            policy[key] = pinned
    llm = None
    if adoption.llm is not None:
        table = dict(adoption.llm)
        if table.get("prompts") == "stored":
            table["prompts"] = str(_prompt_folder(kept, by_kind.get("prompt", [])))
        llm = LLMSettings.model_validate(table)
    return settings.model_copy(update={"policy": PolicySettings.model_validate(policy), "llm": llm})


def _pinned(key: str, ref: str, stored: Sequence[PolicyArtefact], kept: Blobs) -> str | None:
    """Where a run reads the adopted model ``ref`` from, when not from ``ref`` itself: the store's
    copy of a file, or of a shipped model that changed since (a new release: the adopted weights
    are the stored ones, ``builtin:<name>@<copy>``, the same policy version). An adoption made
    before its pair model was kept names the file alone."""
    if ref.startswith("stored:"):
        return str(kept.local_copy(ref.removeprefix("stored:")))
    if not ref.startswith("builtin:") or not stored:
        return None
    [model] = stored
    try:
        shipped = _model_bytes(key, ref)
    except OSError:  # no longer shipped
        shipped = None
    if shipped is None or blobs.digest_of(shipped) != model.digest:
        return f"{ref}@{kept.local_copy(model.path)}"
    return None


def _prompt_folder(kept: Blobs, prompts: Sequence[PolicyArtefact]) -> Path:
    """A local folder with the stored prompt templates under their task names."""
    files = {p.name: kept.local_copy(p.path) for p in prompts}
    key = blobs.digest_of("|".join(f"{k}={v.name}" for k, v in sorted(files.items())).encode())
    folder = files[next(iter(files))].parent.parent / "prompts" / key
    for task, path in files.items():
        target = folder / f"{task}.toml"
        if not target.is_file():
            write_bytes(pafs.LocalFileSystem(), str(target.resolve()), path.read_bytes())
    return folder


# --- the history of adoptions ----------------------------------------------------------------


def _index(store: ParquetEventStore, event: Event) -> None:
    copies = store.tree.adopted
    copies.keep(
        copies.name(int(event.occurred_at.timestamp() * 1_000_000), event.event_id), event.stored_line
    )


def adoptions(store: ParquetEventStore, as_of: datetime | None = None) -> list[Event]:
    """Every adoption up to ``as_of``, oldest first, from the copies (no walk through the log)."""
    from storage.events import EPOCH, MICROSECOND

    copies = store.tree.adopted
    names = copies.listed()
    if as_of is not None:
        limit = (as_of - EPOCH) // MICROSECOND
        names = [n for n in names if copies.micros(n) <= limit]
    out = []
    for name in names:
        row = orjson.loads(copies.read(name))
        row["occurred_at"] = EPOCH + row["occurred_at"] * MICROSECOND
        row["brief_date"] = date.fromordinal(date(1970, 1, 1).toordinal() + row["brief_date"])
        out.append(event_from_row(row))
    return out


def history(store: ParquetEventStore) -> list[Event]:
    """Every adoption in the log, oldest first; a copy missing from ``policies/adopted`` is put back."""
    events = store.read(event_types=["policy.adopted"])
    for event in events:
        _index(store, event)
    return events


def current(store: ParquetEventStore, as_of: datetime | None = None) -> Event | None:
    found = adoptions(store, as_of)
    return found[-1] if found else None


BASELINE = "baseline"


@dataclass(frozen=True)
class Held:
    """A policy as ``brief policy diff`` compares it: an adoption's, or the baseline's."""

    version: str
    tables: PolicyTables


def find(store: ParquetEventStore, ref: str) -> Event:
    """An adoption by its number in ``brief policy history`` (1 = the first), its policy version or
    the start of its event id."""
    events = history(store)
    if not events:
        raise InputError("no policy has been adopted yet; adopt one with 'brief policy adopt FILE'")
    if ref.isdigit() and 1 <= int(ref) <= len(events):
        return events[int(ref) - 1]
    matches = [e for e in events if payload_of(e, PolicyAdoptedV2).version == ref] or [
        e for e in events if len(ref) >= 6 and e.event_id.startswith(ref)
    ]
    if not matches:
        raise InputError(
            f"no adoption {ref!r}; give its number, policy version or event id from 'brief policy history', "
            f"or {BASELINE!r} for the config's policy of before the first adoption"
        )
    return matches[-1]


def held(store: ParquetEventStore, ref: str) -> Held:
    """The policy ``ref`` names: an adoption (``find``), or ``baseline``, the config's policy of
    before the first adoption, which that adoption keeps whole."""
    if ref == BASELINE:
        events = history(store)
        if not events:
            raise InputError(
                "no policy has been adopted yet: the baseline is the config's [policy], still in force"
            )
        first = payload_of(events[0], PolicyAdoptedV2)
        if not first.baseline:
            raise InputError("the first adoption keeps no baseline policy; compare two adoptions instead")
        return Held(first.previous_version, PolicyTables.model_validate(first.baseline))  # type: ignore[arg-type]
    event = find(store, ref)
    return Held(payload_of(event, PolicyAdoptedV2).version, tables_of(event))


# --- changes --------------------------------------------------------------------------------


def tables_of(adoption: Event) -> PolicyTables:
    """The policy a ``policy.adopted`` event holds whole, read through its payload model."""
    adopted = payload_of(adoption, PolicyAdoptedV2)
    return PolicyTables(policy=adopted.policy, llm=adopted.llm, artefacts=adopted.artefacts)


def flatten(held: PolicyTables) -> dict[str, Any]:
    """A policy as dotted keys: its settings (categories by name) and its files by digest."""
    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(f"{prefix}.{k}", v)
        elif isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
            for v in value:
                walk(f"{prefix}.{v['name']}", {k: x for k, x in v.items() if k != "name"})
        else:
            out[prefix] = value

    walk("policy", {k: v for k, v in held.policy.items() if k not in ("editorial_model", "story_model")})
    if held.llm is not None:
        walk("llm", {k: v for k, v in held.llm.items() if k != "prompts"})
    # a model file is its content (its artefact's digest, below); the pair model of ``rules``, or of
    # an adoption made before its pair model was kept, is its name
    if "story_model" in held.policy:
        out["story_model"] = held.policy["story_model"]
    for artefact in held.artefacts:
        key = f"{artefact.kind}.{artefact.name}" if artefact.kind == "prompt" else artefact.kind
        out[key] = artefact.digest[:12]
    return out


def changes(before: PolicyTables | None, after: PolicyTables) -> list[dict[str, Any]]:
    """What differs between two policies, key by key."""
    old = flatten(before) if before is not None else {}
    new = flatten(after)
    return [
        {"key": k, "before": old.get(k), "after": new.get(k)}
        for k in sorted(old.keys() | new.keys())
        if old.get(k) != new.get(k)
    ]


# --- adopting -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Adoption:
    event: Event
    written: bool  # False: the same adoption was already in the log


def _evaluation(store: ParquetEventStore, version: str) -> Event | None:
    found = [
        e
        for e in store.read(event_types=["policy.evaluated"])
        if payload_of(e, PolicyEvaluated).candidate_policy == version
    ]
    return found[-1] if found else None


def _adopt(
    settings: Settings,
    store: ParquetEventStore,
    held: dict[str, Any],
    version: str,
    *,
    by: str,
    reason: str,
    source: str,
    day: date,
    rollback_of: str | None = None,
    regression: dict[str, Any] | None = None,
) -> Adoption:
    if not reason.strip():
        raise InputError("--reason is empty; say in a few words why this policy is adopted")
    before = current(store)
    before_version = payload_of(before, PolicyAdoptedV2).version if before is not None else None
    if before is not None and before_version == version and rollback_of is None:
        raise InputError(
            f"policy {version} is already the adopted one (since {before.occurred_at:%Y-%m-%d %H:%M} UTC); "
            "nothing to adopt"
        )
    baseline = store_policy(settings, store) if before is None else None
    previous = tables_of(before) if before is not None else PolicyTables.model_validate(baseline)
    evaluation = _evaluation(store, version)
    judged = payload_of(evaluation, PolicyEvaluated).verdict if evaluation else None
    verdict = judged.decision if judged else None
    event = new_event(
        "policy.adopted",
        {
            "version": version,
            **held,
            "previous": before.event_id if before else None,
            "previous_version": before_version if before else settings.policy_version(),
            "baseline": baseline,
            "changes": changes(previous, PolicyTables.model_validate(held)),
            "by": by,
            "reason": reason.strip(),
            "source": source,
            "evaluation": evaluation.event_id if evaluation else None,
            "verdict": verdict,
            "rollback_of": rollback_of,
            "regression": regression,
        },
        brief_date=day,
        run_id=f"policy-{utcnow():%Y%m%dT%H%M%S%f}",
        subject_id=f"policy-{version}",
        produced_by=PRODUCER,
        occurred_at=utcnow(),
        source_event_ids=[e.event_id for e in (before, evaluation) if e is not None],
        policy_version=version,
    )
    written = store.append([event]).written
    _index(store, event)
    return Adoption(event, bool(written))


def argument(file: str) -> str:
    """How an error names the candidate of ``brief policy adopt FILE``."""
    return f"FILE {file!r}"


def adopt(
    settings: Settings,
    store: ParquetEventStore,
    file: str,
    by: str,
    reason: str,
    day: date,
    regression: dict[str, Any] | None = None,
) -> Adoption:
    """Adopt the policy of a candidate file (``[policy]``, and ``[llm]`` when it has one);
    ``regression``: the check of the regression set that preceded it (``ops.regress.gate``)."""
    from ops.evaluate import candidate_settings

    candidate = candidate_settings(file, settings, argument(file))
    held = store_policy(candidate, store)
    return _adopt(
        settings,
        store,
        held,
        candidate.policy_version(),
        by=by,
        reason=reason,
        source=str(Path(file).resolve()),
        day=day,
        regression=regression,
    )


def _position(event: Event, by_id: dict[str, Event]) -> Event | None:
    """The adoption whose policy is in force after ``event``: itself, or for a rollback the one it
    restored; None for the config's policy before the first adoption."""
    rollback_of = payload_of(event, PolicyAdoptedV2).rollback_of
    if rollback_of is None:
        return event
    undone = _position(by_id[rollback_of], by_id)
    return _before(undone, by_id) if undone is not None else None


def _before(adoption: Event, by_id: dict[str, Event]) -> Event | None:
    previous = payload_of(adoption, PolicyAdoptedV2).previous
    return _position(by_id[previous], by_id) if previous else None


def rollback(settings: Settings, store: ParquetEventStore, by: str, reason: str, day: date) -> Adoption:
    """Adopt again the policy in force before the current one; rolling back a rollback goes one
    further back, down to the config's policy of before the first adoption."""
    events = adoptions(store)
    if not events:
        raise InputError("no policy has been adopted yet: there is nothing to roll back")
    by_id = {e.event_id: e for e in events}
    now = _position(events[-1], by_id)
    if now is None:
        raise InputError(
            "the policy in force is the config's of before the first adoption: "
            "there is nothing older to roll back to"
        )
    earlier = _before(now, by_id)
    if earlier is None:  # back to the config's policy of before the first adoption
        first = payload_of(events[0], PolicyAdoptedV2)
        held = dict(first.baseline)  # type: ignore[arg-type]  # the first adoption keeps one
        version: str = first.previous_version  # type: ignore[assignment]
    else:
        restored = payload_of(earlier, PolicyAdoptedV2)
        held = {
            "policy": restored.policy,
            "llm": restored.llm,
            "artefacts": [a.model_dump(mode="json") for a in restored.artefacts],
        }
        version = restored.version
    return _adopt(
        settings,
        store,
        held,
        version,
        by=by,
        reason=reason,
        source="rollback",
        day=day,
        rollback_of=events[-1].event_id,
    )


# --- the policy a run uses ------------------------------------------------------------------


@dataclass(frozen=True)
class Governing:
    settings: Settings
    record: dict[str, Any]  # run.started's ``policy``
    line: str  # what the run says about it


def governing(settings: Settings, store: ParquetEventStore) -> Governing:
    """The settings a run uses: a pinned file's policy, else the adopted one, else the config's."""
    adopted = current(store)
    if settings.policy_file:
        from ops.evaluate import candidate_settings

        pinned = candidate_settings(settings.policy_file, settings, f"policy_file {settings.policy_file!r}")
        version = pinned.policy_version()
        over = (
            f"; the adopted policy {payload_of(adopted, PolicyAdoptedV2).version} is not used"
            if adopted
            else ""
        )
        return Governing(
            pinned,
            {
                "version": version,
                "origin": "pinned",
                "adoption": adopted.event_id if adopted else None,
                "file": settings.policy_file,
            },
            f"policy {version} pinned by the config (policy_file = {settings.policy_file}){over}",
        )
    if adopted is not None:
        chosen = restore(settings, adopted, store)
        version = chosen.policy_version()
        p = payload_of(adopted, PolicyAdoptedV2)
        line = f"policy {version} adopted {adopted.occurred_at:%Y-%m-%d %H:%M} UTC by {p.by}: {p.reason}"
        if settings.policy_version() != version:  # an edit of the config's [policy] changes nothing now
            line += f" (the config's own [policy], {settings.policy_version()}, is not used)"
        return Governing(
            chosen,
            {"version": version, "origin": "adopted", "adoption": adopted.event_id, "file": None},
            line,
        )
    version = settings.policy_version()
    return Governing(
        settings,
        {"version": version, "origin": "config", "adoption": None, "file": None},
        f"policy {version} from the config (none adopted)",
    )


def governed_context(settings: Settings, day: date, run_id: str, resources: Resources):
    """A context for ``day`` under the policy a run would use now (``governing``): the daily run,
    and every re-render after a person's act (review, correct, retract, approve, the desk), decide
    under the adopted policy, not the config's own ``[policy]``. ``resources``: the composition
    root's, built by the caller (one store for the adopted policy and the run)."""
    from tasks import steps

    policy = governing(settings, resources.store)
    ctx = steps.open_run(resources, policy.settings, day, run_id, origin=policy.record)
    return ctx, policy
