"""A candidate policy file as ``brief learn`` writes it: the policy in force, whole, with a new model.

The file is TOML that ``brief policy adopt`` and ``brief evaluate --policy`` read back to the same
settings (``tasks.settings.read_candidate``): every ``[policy]`` setting, the topic as
``[policy.topic]``, the categories as ``[[policy.categories]]``, and the ``[llm]`` table when the
policy in force has one of its own (an adopted or pinned one that differs from the config's).
"""

from __future__ import annotations

import math
from typing import Any

from tasks.settings import LLMSettings, PolicySettings

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _string(text: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped, the rest as is."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} has no place in a policy")
        return repr(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list) and all(not isinstance(v, dict) for v in value):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as a TOML value")


def _key(name: str) -> str:
    return name if name.replace("_", "").replace("-", "").isalnum() and name.isascii() else _string(name)


def _table(name: str, table: dict[str, Any], *, array: bool = False) -> list[str]:
    """``[name]`` (or ``[[name]]``) with its plain keys first, then its nested tables."""
    lines = [f"[[{name}]]" if array else f"[{name}]"]
    nested: list[str] = []
    for key, value in table.items():
        if value is None:  # unset: the file leaves it out and the default holds
            continue
        where = f"{name}.{_key(key)}"
        if isinstance(value, dict):
            nested += ["", *_table(where, value)]
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:
                nested += ["", *_table(where, item, array=True)]
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    return lines + nested


def candidate_toml(
    policy: PolicySettings, model_ref: str, file_name: str, llm: LLMSettings | None = None
) -> str:
    """The candidate file ``file_name``: ``policy`` whole with ``editorial_model = model_ref``, and
    ``llm`` as its ``[llm]`` when given."""
    table = policy.model_dump(mode="json")  # the shadow is not part of a policy: left out
    table["editorial_model"] = model_ref
    ordered = {"editorial_model": table.pop("editorial_model"), **table}
    lines = [
        "# A candidate policy written by 'brief learn': the policy in force with the new model.",
        f"# Compare it: brief evaluate --policy {file_name} --start … --end …",
        f'# Adopt it: brief policy adopt {file_name} --by NAME --reason "…"',
        "",
        *_table("policy", ordered),
    ]
    if llm is not None:
        lines += ["", *_table("llm", llm.model_dump(mode="json"))]
    return "\n".join(lines) + "\n"
