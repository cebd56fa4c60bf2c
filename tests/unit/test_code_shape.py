"""The rooms of the code stay small, and the store's layout and the events' payloads are read in one
place each: the rules of ``docs/design.md`` that no import contract can state, checked.

- no entrypoint module (``flows/``: the command line, the desk, the Prefect flows) over 400 lines;
- no function over 80 lines outside tests and benches, but those named in ``LONG`` with a reason;
- no ``store.fs`` / ``store.base`` outside ``storage/``: paths under the root are the root's;
- no payload read by key (``payload["…"]``, ``payload.get(…)``) outside ``storage/`` but in the
  modules of ``PAYLOAD_READERS`` (each one a debt, listed so that it can only shrink);
- no brief read by key outside ``storage/brief.py``: a brief crosses modules as ``Brief``, ``Item`` and
  ``Citation`` and is a dict only in its JSON file (``brief_reads``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from storage.brief import Brief, Citation, Item, Retracted

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("flows", "ops", "tasks", "storage", "validations")
ENTRYPOINT_LINES = 400
FUNCTION_LINES = 80

# function -> why it is long; "not split yet" is a debt this list keeps from growing
LONG: dict[str, str] = {
    "tasks/pairs.py:feature_rows": "not split yet: a day's pair features in one vectorised pass",
    "tasks/steps/dedup.py:dedup_day": "not split yet",
    "tasks/steps/score.py:score_stories": "not split yet",
}

# modules that still read payloads by key (to be moved onto the payload models): it only shrinks
PAYLOAD_READERS: frozenset[str] = frozenset()


def modules(*packages: str) -> list[Path]:
    return sorted(p for package in packages for p in (REPO / package).rglob("*.py"))


def name_of(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def test_no_entrypoint_module_is_over_400_lines() -> None:
    long = {
        name_of(p): n for p in modules("flows") if (n := len(p.read_text().splitlines())) > ENTRYPOINT_LINES
    }
    assert long == {}, f"split these entrypoint modules (lines): {long}"


def test_no_function_is_over_80_lines_but_the_named_ones() -> None:
    found = {}
    for path in modules(*PACKAGES):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES:
                    found[f"{name_of(path)}:{node.name}"] = length
    assert set(found) <= set(LONG), f"functions over {FUNCTION_LINES} lines: {found}"
    stale = set(LONG) - set(found)
    assert not stale, f"no longer long, take them out of LONG: {sorted(stale)}"


def test_nothing_outside_storage_builds_paths_under_the_root() -> None:
    used = []
    for path in modules("flows", "ops", "tasks", "validations"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("fs", "base"):
                owner = node.value
                named = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                if named == "store":
                    used.append(f"{name_of(path)}:{node.lineno} store.{node.attr}")
    assert used == [], used


def payload_reads(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text())):
        target = None
        if isinstance(node, ast.Subscript):
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            target = node.func.value
        if target is None:
            continue
        named = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if named == "payload":
            lines.append(node.lineno)
    return lines


def test_payloads_are_read_through_their_models_outside_storage() -> None:
    readers = {name_of(p) for p in modules("flows", "ops", "tasks", "validations") if payload_reads(p)}
    assert readers <= PAYLOAD_READERS, (
        f"read these payloads through their models: {sorted(readers - PAYLOAD_READERS)}"
    )
    stale = PAYLOAD_READERS - readers
    assert not stale, (
        f"these no longer read payloads by key, take them out of PAYLOAD_READERS: {sorted(stale)}"
    )


# a brief's keys; those of BRIEF_ONLY name a brief whatever holds them (no payload or table has them),
# the others only when read from a name that holds a brief
BRIEF_KEYS = frozenset(Brief.model_fields) | frozenset(Item.model_fields) | frozenset(Citation.model_fields)
BRIEF_KEYS |= frozenset(Retracted.model_fields)
BRIEF_ONLY = frozenset(
    {"citations", "retracted", "translated_title", "outlet_label", "category_confidence", "relevance_score"}
)
BRIEF_NAMES = frozenset(
    {"brief", "document", "doc", "item", "citation", "older", "newer", "fresh", "current"}
)
BRIEF_MODULE = "storage/brief.py"


def brief_reads(source: str) -> list[str]:
    """Where ``source`` reads a brief by key: ``X["k"]`` or ``X.get("k")`` (read, not written) of a key
    of the brief that only a brief has, or of any of its keys when ``X`` is named as a brief is."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            target, key = node.value, node.slice
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            target, key = node.func.value, node.args[0] if node.args else None
        else:
            continue
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value in BRIEF_KEYS):
            continue
        named = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if key.value in BRIEF_ONLY or named in BRIEF_NAMES:
            found.append(f"{node.lineno} {named}[{key.value!r}]")
    return found


def test_the_brief_read_check_finds_a_read_by_key() -> None:
    assert brief_reads('n = len(document["items"])') == ["1 document['items']"]
    assert brief_reads('urls = [c["url"] for c in i["citations"]]') == ["1 i['citations']"]
    assert brief_reads('gone = doc.get("retracted", [])') == ["1 doc['retracted']"]
    assert brief_reads("n = len(document.items)\nlabel = lab['title']") == []
    assert brief_reads('changed["translated_title"] = None') == []  # a write, as a model_copy's update


def test_no_module_outside_the_brief_model_reads_a_brief_by_key() -> None:
    reads = {
        name_of(p): found
        for p in modules("flows", "ops", "tasks", "validations", "storage")
        if name_of(p) != BRIEF_MODULE and (found := brief_reads(p.read_text()))
    }
    assert reads == {}, f"read these briefs through storage/brief.py's models: {reads}"
