"""The rooms of the code stay small, and the store's layout and the events' payloads are read in one
place each: the rules of ``docs/design.md`` that no import contract can state, checked.

- no entrypoint module (``flows/``: the command line, the desk, the Prefect flows) over 400 lines;
- no function over 80 lines outside tests and benches, but those named in ``LONG`` with a reason;
- no ``store.fs`` / ``store.base`` outside ``storage/``: paths under the root are the root's;
- no payload read by key outside ``storage/`` but in the modules of ``PAYLOAD_READERS`` (each one a
  debt, listed so that it can only shrink): not ``e.payload["…"]`` nor ``.get(…)``, nor through a name
  that holds a payload (``p = e.payload``, a parameter named ``payload``), nor a payload handed as a
  dict to a helper, nor a scanned frame's payload decoded as JSON past the upcasters
  (``payload_reads``);
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
LONG: dict[str, str] = {}

# modules that still read payloads by key (to be moved onto the payload models), with why: it only shrinks
PAYLOAD_READERS: dict[str, str] = {}


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


def _read_by_key(node: ast.AST) -> ast.expr | None:
    """What ``node`` reads by key: ``X`` of ``X["k"]`` (read, not written) or of ``X.get(…)``."""
    if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return node.func.value
    return None


def _a_payload(node: ast.expr | None) -> bool:
    """``X.payload`` or ``dict(X.payload)``: an event's payload as a dict."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "dict"
        and node.args
    ):
        node = node.args[0]
    return isinstance(node, ast.Attribute) and node.attr == "payload"


def _payloads(node: ast.expr | None) -> bool:
    """``[e.payload for e in …]`` (or a set or generator of them): payloads as dicts, to iterate."""
    return isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp) and _a_payload(node.elt)


Scope = ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _scopes(tree: ast.Module) -> list[Scope]:
    inner = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)]
    return [tree, *inner]


def _own_nodes(scope: Scope) -> list[ast.AST]:
    """The nodes of ``scope`` outside the functions it defines (each is a scope of its own)."""
    out: list[ast.AST] = []
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return out


def _payload_names(scope: Scope, nodes: list[ast.AST]) -> set[str]:
    """The names of ``scope`` that hold a payload as a dict: bound from ``X.payload`` (``p = e.payload``,
    ``p = dict(e.payload)``, ``(p := e.payload)``), a loop's name over payloads, and a parameter named
    ``payload``."""
    names: set[str] = set()
    if not isinstance(scope, ast.Module):
        every = [*scope.args.posonlyargs, *scope.args.args, *scope.args.kwonlyargs]
        names |= {a.arg for a in every if a.arg == "payload"}
    lists: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bound = {t.id for t in targets if isinstance(t, ast.Name)}
            if _a_payload(node.value):
                names |= bound
            elif _payloads(node.value):
                lists |= bound
    for node in nodes:
        if isinstance(node, ast.For | ast.comprehension) and isinstance(node.target, ast.Name):
            over = node.iter
            if _payloads(over) or (isinstance(over, ast.Name) and over.id in lists):
                names.add(node.target.id)
    return names


def _decodes_payloads(node: ast.AST) -> bool:
    """``pl.col("payload").str.json_decode(…)`` / ``.json_path_match(…)``, or ``json.loads`` /
    ``orjson.loads`` of a row's ``payload``: a scanned frame's payload read past its upcasters."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    if node.func.attr in ("json_decode", "json_path_match", "json_extract"):
        return "payload" in ast.unparse(node.func.value)
    return node.func.attr == "loads" and bool(node.args) and "payload" in ast.unparse(node.args[0])


def payload_reads(source: str) -> list[str]:
    """Where ``source`` reads an event's payload by key rather than through its model (``payload_of``,
    ``payload_field``): ``e.payload["k"]`` or ``.get("k")``; the same through a name that holds it
    (``p = e.payload``, a loop over ``[e.payload for e in …]``, a parameter named ``payload``); a
    payload handed as a dict to another function (``f(e.payload)``, ``f(dict(e.payload))``) or copied
    into one (``{**e.payload, …}``); and a
    scanned frame's payload decoded as JSON (``json_decode``, ``json_path_match``, ``json.loads``)."""
    found = set()
    for scope in _scopes(ast.parse(source)):
        nodes = _own_nodes(scope)
        names = _payload_names(scope, nodes)
        for node in nodes:
            target = _read_by_key(node)
            by_key = _a_payload(target) or (isinstance(target, ast.Name) and target.id in names)
            handed = (
                isinstance(node, ast.Call)
                and not _a_payload(node)
                and any(_a_payload(a) for a in [*node.args, *(k.value for k in node.keywords)])
            )
            copied = isinstance(node, ast.Dict) and any(
                k is None and _a_payload(v) for k, v in zip(node.keys, node.values, strict=True)
            )
            if by_key or handed or copied or _decodes_payloads(node):
                found.add((getattr(node, "lineno", 0), ast.unparse(node)))
    return [f"{line} {code}" for line, code in sorted(found)]


def test_the_payload_read_check_finds_a_read_by_key_and_its_aliases() -> None:
    assert payload_reads('n = e.payload["version"]') == ["1 e.payload['version']"]
    assert payload_reads("p = event.payload\nv = p['version']") == ["2 p['version']"]
    assert payload_reads("def f(e):\n    p = dict(e.payload)\n    return p.get('by')") == ["3 p.get('by')"]
    assert payload_reads("def f(payload: dict):\n    return payload['story_id']") == ["2 payload['story_id']"]
    assert payload_reads("ps = [e.payload for e in es]\nts = [p['title'] for p in ps]") == ["2 p['title']"]
    assert payload_reads("for p in (e.payload for e in es):\n    print(p['url'])") == ["2 p['url']"]
    assert payload_reads("show(dict(e.payload), e)") == ["1 show(dict(e.payload), e)"]
    assert payload_reads("d = {**e.payload, 'raw': raw}") == ["1 {**e.payload, 'raw': raw}"]
    assert payload_reads('x = pl.col("payload").str.json_path_match("$.id")') == [
        "1 pl.col('payload').str.json_path_match('$.id')"
    ]
    assert payload_reads('d = json.loads(row["payload"])') == ["1 json.loads(row['payload'])"]
    # read through the models, written, or another function's name: not a read by key
    assert payload_reads("p = payload_of(e, StoryScored)\nt = p.title") == []
    assert (
        payload_reads("def f(payload: dict):\n    payload['x'] = 1\n    return new_event('a.b', payload)")
        == []
    )
    assert payload_reads("p = e.payload\ndef g(p):\n    return p['k']") == []


def test_payloads_are_read_through_their_models_outside_storage() -> None:
    readers = {
        name_of(p): found
        for p in modules("flows", "ops", "tasks", "validations")
        if (found := payload_reads(p.read_text()))
    }
    unread = {name: found for name, found in readers.items() if name not in PAYLOAD_READERS}
    assert unread == {}, f"read these payloads through their models (storage/typed.py): {unread}"
    stale = set(PAYLOAD_READERS) - set(readers)
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


def test_a_delivery_outcome_has_one_name() -> None:
    """What a delivery did is ``DeliveryOutcome`` of ``tasks/steps/deliver.py`` (``steps.DeliveryOutcome``):
    no module binds it again under its name (``DeliveryOutcome = steps.DeliveryOutcome``), and none
    imports it from a module that only passes it on."""
    home = "tasks/steps/deliver.py"
    found = []
    for path in modules(*PACKAGES):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign) and name_of(path) != home:
                named = [t.id for t in node.targets if isinstance(t, ast.Name)]
                found += [f"{name_of(path)}:{node.lineno} binds it" for n in named if n == "DeliveryOutcome"]
            elif isinstance(node, ast.ImportFrom) and node.module not in (
                "tasks.steps.deliver",
                "tasks.steps",
            ):
                imported = [a.name for a in node.names]
                found += [
                    f"{name_of(path)}:{node.lineno} imports it from {node.module}"
                    for n in imported
                    if n == "DeliveryOutcome"
                ]
    assert found == [], found


def test_services_are_handed_their_settings() -> None:
    """Only an entrypoint (``flows/``) loads a config; a service of ``ops/`` takes the settings, or
    the resources the composition root built from them, as arguments."""
    loading = {
        f"{name_of(path)}:{node.lineno}"
        for path in modules("ops")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == "load_settings"
    }
    assert loading == set(), f"services that load a config themselves: {sorted(loading)}"


def test_only_the_composition_root_builds_resources_in_the_services() -> None:
    """No service wires resources by hand: ``ops/workspace.py:resources_of`` calls ``bootstrap``; a
    service configured otherwise derives its resources from its caller's (``Resources.for_settings``,
    ``with_store``)."""
    building = {
        f"{name_of(path)}:{node.lineno}"
        for path in modules("ops")
        if name_of(path) != "ops/workspace.py"
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Call)
        and (getattr(node.func, "id", None) or getattr(node.func, "attr", None)) == "bootstrap"
    }
    assert building == set(), f"services that build their own resources: {sorted(building)}"
