"""A config file's mistakes, every one of them at once, in the file's own terms.

Pydantic names a mistake by its location in the validated data (``sources.0.ur``,
``delivery.channels.0.url``); a person wrote ``[[sources]]`` tables and keys. Each error becomes
one line that names the table as it is written (``[storage]``, ``[[sources]] 'labnotes'``,
``[[delivery]] 'email'``), the key, and what to do; a key that is not known gets the nearest known
one as a suggestion, and a required key it most likely misspells is then not reported missing.
"""

from __future__ import annotations

import difflib
import re
import types
import typing
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

# tables written as lists of tables, and where their entries sit in the validated data
ARRAYS = {("sources",): "[[sources]]", ("alerts",): "[[alerts]]", ("delivery", "channels"): "[[delivery]]"}


def _key(part: object) -> str:
    """A key as a message shows it: one that is not a plain word (a line break, quotes, spaces) in
    quotes, with its escapes, so that the message stays one line."""
    text = str(part)
    return text if text.replace("_", "").replace("-", "").isalnum() else repr(text)


def _inner_model(annotation: Any) -> type[BaseModel] | None:
    """The model a field holds, through ``X | None``, ``list[X]`` and ``dict[str, X]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, dict, typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found = _inner_model(arg)
            if found is not None:
                return found
    return None


def known_keys(model: type[BaseModel], path: Sequence[object]) -> list[str]:
    """The keys the table at ``path`` (a location without its last part) may hold."""
    current: type[BaseModel] | None = model
    for part in path:
        if current is None:
            return []
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part))
        current = _inner_model(field.annotation) if field is not None else None
    return sorted(current.model_fields) if current is not None else []


def tables(model: type[BaseModel]) -> set[str]:
    """The keys of ``model`` that hold a table of their own."""
    return {name for name, f in model.model_fields.items() if _inner_model(f.annotation) is not None}


def _table_data(data: dict, path: Sequence[object]) -> dict:
    """The table of ``data`` at ``path`` as written (``{}`` when it cannot be found)."""
    value: Any = data
    for part in path:
        indexable = isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value)
        if indexable or (isinstance(value, dict) and part in value):
            value = value[part]
        elif part == "channels" and isinstance(value, list):
            continue  # [[delivery]] is written as a list; the model holds it as its channels
        else:
            return {}
    return value if isinstance(value, dict) else {}


def _entry_name(data: dict, array: tuple[str, ...], index: int) -> str | None:
    value: Any = data
    for part in array:
        if isinstance(value, dict):
            value = value.get(part)
        if part == "delivery" and isinstance(value, list):
            break  # [[delivery]] is written as a list; the model holds it as its channels
    if isinstance(value, list) and 0 <= index < len(value) and isinstance(value[index], dict):
        name = value[index].get("name")
        return name if isinstance(name, str) and name else None
    return None


def table_of(data: dict, loc: tuple[object, ...]) -> tuple[str, tuple[object, ...]]:
    """How the file names the table of ``loc``, and the rest of ``loc`` inside it."""
    for array, written in ARRAYS.items():
        n = len(array)
        if tuple(loc[:n]) == array and len(loc) > n and isinstance(loc[n], int):
            index = loc[n]
            assert isinstance(index, int)
            name = _entry_name(data, array, index)
            return (f"{written} {name!r}" if name else f"{written} #{index + 1}"), loc[n + 1 :]
    if len(loc) > 1:
        return f"[{'.'.join(map(_key, loc[:-1]))}]", loc[-1:]
    return "", loc


def _written(value: object) -> str:
    """A value as the TOML file has it (numbers and booleans bare, a short word in quotes), or what
    kind of value it is: a value that could be a secret (a token in a URL) is never repeated."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        # a short number is said as written; a long one could be a token or a chat id: its kind
        return str(value) if len(str(value)) <= 6 else "a number"
    if isinstance(value, str):
        word = len(value) <= 12 and all(c.isalpha() or c in " -" for c in value) and value[:1].isalpha()
        return repr(value) if word else "text"
    if isinstance(value, list):
        return "a list"
    return "a table" if isinstance(value, dict) else "that value"


NUMBER = ("float_parsing", "float_type", "int_parsing", "int_type", "int_from_float")
BOUNDS = {
    "greater_than_equal": ("at least", "ge"),
    "greater_than": ("more than", "gt"),
    "less_than_equal": ("at most", "le"),
    "less_than": ("less than", "lt"),
}


def in_file_terms(error: Any) -> str | None:
    """What a value's mistake (a key's type or range) is, said of the value as it is written in the
    file ("must be a number, not 'heavy'"); None for the mistakes said as pydantic says them."""
    kind, given, ctx = error["type"], error.get("input"), error.get("ctx") or {}
    if kind in NUMBER:
        number = "a whole number (e.g. 3)" if kind.startswith("int") else "a number (e.g. 1.5)"
        return f"must be {number}, not {_written(given)}"
    if kind in BOUNDS:
        said, bound = BOUNDS[kind]
        limit = ctx.get(bound)
        shown = int(limit) if isinstance(limit, float) and limit.is_integer() else limit
        return f"must be {said} {shown}, not {_written(given)}"
    if kind in ("bool_parsing", "bool_type"):
        return f"must be true or false, not {_written(given)}"
    if kind == "string_type":
        return f"must be text in quotes, not {_written(given)}"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected')}, not {_written(given)}"
    return None


def explain(exc: ValidationError, data: dict, model: type[BaseModel]) -> list[str]:
    """One line per mistake of ``exc`` (for ``data`` validated as ``model``): unknown keys first."""
    errors = exc.errors()
    suggested: set[tuple[object, ...]] = set()
    lines: list[tuple[tuple[object, ...], str]] = []
    for error in errors:
        loc = tuple(error["loc"])
        if error["type"] != "extra_forbidden" or not loc:
            continue
        present = _table_data(data, loc[:-1])
        choices = [k for k in known_keys(model, loc[:-1]) if k not in present]  # not one set already
        near = difflib.get_close_matches(str(loc[-1]), choices, n=1, cutoff=0.6)
        table, _ = table_of(data, loc)
        where = f" in {table}" if table else " at the top level"
        hint = f"; did you mean {near[0]!r}?" if near else f"; known keys: {', '.join(choices)}"
        lines.append((loc, f"unknown key {_key(loc[-1])!r}{where}{hint}"))
        if near:
            suggested.add((*loc[:-1], near[0]))
    for error in errors:
        loc = tuple(error["loc"])
        if error["type"] == "extra_forbidden" and loc:
            continue
        if error["type"] == "missing" and loc in suggested:
            continue  # the misspelt key above is what is missing
        table, rest = table_of(data, loc)
        field = ".".join(map(_key, rest))
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "missing":
            message = "is required"
            if not table and len(rest) == 1 and str(rest[0]) in tables(model):
                field = f"the [{rest[0]}] table"
        elif error["type"] == "value_error":
            message = f"is wrong: {message}"
        else:
            message = in_file_terms(error) or message
        subject = " ".join(filter(None, (table, field))) or "(top level)"
        if table.startswith("[[") and field:
            subject = f"{table}: {field}"
        lines.append((loc, f"{subject} {message}"))
    return [line for _, line in lines]


def toml_said(text: str, error: str) -> str:
    """A TOML error of a config file, in its own terms: a table written both as ``[x]`` and as
    ``[[x]]`` (TOML allows one of the two) says so and, for ``delivery``, how to write both the
    settings and the channels; any other error as the parser says it."""
    both = [
        name
        for name in dict.fromkeys(re.findall(r"^\s*\[\[\s*([\w.-]+)\s*\]\]", text, re.M))
        if re.search(rf"^\s*\[\s*{re.escape(name)}\s*\]", text, re.M)
    ]
    if not both or not error.startswith(("Cannot declare", "Cannot overwrite")):
        return f"not valid TOML ({error})"
    name = both[0]
    said = f"[{name}] and [[{name}]] both appear ({error.rpartition('(')[2].rstrip(')')}); TOML allows one"
    if name == "delivery":
        said += ": with [delivery] settings, write each channel as [[delivery.channels]] under it"
    return said


def scheme_of(value: str) -> str:
    """How a URL that is refused starts, said without repeating it (it may carry a password or a
    token): "it starts with 'ftp://'", or "it has no scheme"."""
    scheme, sep, _ = value.partition("://")
    if sep and scheme.isascii() and scheme.replace("+", "").replace("-", "").isalnum() and len(scheme) <= 12:
        return f"it starts with {scheme + '://'!r}"
    return "it has no scheme such as https://"
