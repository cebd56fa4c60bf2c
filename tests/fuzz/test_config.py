"""Config files: a ``Settings``, or one ``ConfigError`` line that shows no secret; nothing written."""

from __future__ import annotations

import json
import math
import tempfile
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from hypothesis import event, example, given
from hypothesis import strategies as st

from storage.errors import ConfigError
from tasks.alerts import AlertChannel, AlertingSettings
from tasks.channels import Channel, DeliverySettings, OutputSettings
from tasks.settings import (
    CategorySettings,
    CollectSettings,
    EmbeddingSettings,
    GateSettings,
    LLMSettings,
    PolicySettings,
    Settings,
    SourceSettings,
    StorageSettings,
    TopicSettings,
    load_settings,
    parse_settings,
)
from tests.fuzz import FUZZ, one_line

# secret-looking tokens as people paste them: a Telegram bot token, a Slack token, a hex key, an API key
TOKENS = [
    "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
    "xoxb-2544325623-9af8de74e1c2b3a4d5e6f7a8",
    "9f86d081884c7d659a2feaa0c55ad015",
    "sk-live-4eC39HqLyjWDarjtT1zdp7dc",
]
TABLES: dict[str, Any] = {
    "storage": StorageSettings,
    "policy": PolicySettings,
    "policy.topic": TopicSettings,
    "embedding": EmbeddingSettings,
    "collect": CollectSettings,
    "gates": GateSettings,
    "llm": LLMSettings,
    "output": OutputSettings,
    "delivery": DeliverySettings,
    "alerting": AlertingSettings,
}
ARRAYS: dict[str, Any] = {
    "sources": SourceSettings,
    "delivery.channels": Channel,
    "alerts": AlertChannel,
    "policy.categories": CategorySettings,
}
KEYS = sorted(
    {k for m in [*TABLES.values(), *ARRAYS.values(), Settings] for k in m.model_fields}
    | {"url", "name", "bogus", "a\nb", 'q"uote', "", "秘密"}
)


def secret_urls() -> st.SearchStrategy[str]:
    token = st.sampled_from(TOKENS)
    shapes = st.sampled_from(
        [
            "tgram://{t}/12345",
            "tgram:/{t}/12345",
            "json://hooks.example.com/{t}",
            "jsons://hooks.example.com/path?token={t}",
            "slack://{t}/#general",
            "mailtos://user:{t}@smtp.example.com",
            "https://user:{t}@api.example.com/v1",
            "{t}",
            "${{HOOK}}/{t}",
            "discord://{t}",
            "ntfy://{t}",
            "json://{t}@hooks.example.com/x",
        ]
    )
    return st.builds(lambda shape, t: shape.format(t=t), shapes, token)


scalars = st.one_of(
    st.text(max_size=20),
    st.sampled_from(
        ["file://feeds/{date}.xml", "https://x.example/feed", "news", "lab", "09:00", "25:99", "UTC"]
    ),
    st.sampled_from(["Mars/Olympus", "0 7 * * *", "* *", "builtin:ai", "builtin:nope", "rules", "[", "(?<"]),
    secret_urls(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.dates(),
    st.times(),
    st.datetimes(),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=6,
)


def toml_key(key: str) -> str:
    return (
        key if key and key.replace("_", "").replace("-", "").isalnum() and key.isascii() else toml_value(key)
    )


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    if isinstance(value, list):
        return "[" + ", ".join(map(toml_value, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value, ensure_ascii=False)


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    """A config as tables: the smallest that works, then keys of every section set to odd values."""
    doc: dict[str, Any] = {"storage": {"root": "root"}}
    if draw(st.booleans()):
        doc["sources"] = [{"name": "wire", "url": "file://feeds/{date}.xml"}]
    if draw(st.booleans()):
        doc["delivery"] = {"channels": [{"name": "team", "url": draw(secret_urls())}]}
    if draw(st.booleans()):
        doc["alerts"] = [{"name": "ops", "url": draw(secret_urls())}]
    for _ in range(draw(st.integers(0, 4))):
        where = draw(st.sampled_from(["", *TABLES, *ARRAYS]))
        own = sorted({**TABLES, **ARRAYS, "": Settings}[where].model_fields)
        key = draw(st.one_of(st.sampled_from(own), st.sampled_from(own), st.sampled_from(KEYS)))
        value = draw(values)
        if where in ARRAYS:
            doc.setdefault(where, [{}])
            doc[where] = doc[where] if isinstance(doc[where], list) and doc[where] else [{}]
            item = doc[where][0] if isinstance(doc[where][0], dict) else {}
            doc[where][0] = {**item, key: value}
        elif where:
            table = doc.setdefault(where, {})
            doc[where] = {**table, key: value} if isinstance(table, dict) else {key: value}
        else:
            doc[key] = value
    return doc


def render(doc: dict[str, Any]) -> str:
    """TOML text: top-level keys, then a [table] or [[array]] per entry (dotted names as written)."""
    lines = [
        f"{toml_key(k)} = {toml_value(v)}" for k, v in doc.items() if k not in TABLES and k not in ARRAYS
    ]
    for name, value in doc.items():
        if name in TABLES and isinstance(value, dict):
            lines.append(f"[{name}]")
            lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()]
        elif name in ARRAYS and isinstance(value, list) and all(isinstance(i, dict | None) for i in value):
            for item in value:
                lines.append(f"[[{name}]]")
                lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in (item or {}).items()]
        elif name in TABLES or name in ARRAYS:
            lines.insert(0, f"{toml_key(name)} = {toml_value(value)}")
    return "\n".join(lines) + "\n"


@st.composite
def files(draw: st.DrawFn) -> bytes:
    body = render(draw(configs())).encode()
    damage = draw(st.sampled_from(["none", "none", "none", "cut", "bytes", "latin-1", "bom"]))
    if damage == "cut":
        body = body[: draw(st.integers(0, len(body)))]
    elif damage == "bytes":
        at = draw(st.integers(0, len(body)))
        body = body[:at] + draw(st.binary(min_size=1, max_size=8)) + body[at:]
    elif damage == "latin-1":
        body = body.decode().encode("latin-1", errors="replace") + "\n# café\n".encode("latin-1")
    elif damage == "bom":
        body = b"\xef\xbb\xbf" + body
    return body


FOLDER = Path(tempfile.mkdtemp(prefix="fuzz-config-"))


@FUZZ
@given(body=files())
@example(body=b'[storage]\nroot = "root"\n"a\\nb" = 1\n')  # a key with a line break
@example(  # a channel URL that is no URL: the message shows it without the token
    body=b'[storage]\nroot = "root"\n[[alerts]]\nname = "ops"\n'
    b'url = "tgram:/123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/12345"\n'
)
def test_a_config_file_loads_or_says_each_thing_wrong_in_one_line(body: bytes) -> None:
    path = FOLDER / "brief.toml"
    path.write_bytes(body)
    try:
        settings = load_settings(path)
    except ConfigError as exc:
        message = str(exc)
        event(" ".join(message.removeprefix(f"{path}: ").split()[:2])[:30])
        lines = message.split("\n")  # one line per mistake, each naming the file
        assert all(one_line(line) and line.startswith(f"{path}: ") for line in lines), message
        assert len(set(lines)) == len(lines), message
        assert not any(token in message for token in TOKENS), message
    else:
        event("loaded")
        assert isinstance(settings, Settings)
        for endpoint in [*settings.delivery.channels, *settings.alerts]:
            assert not any(token in endpoint.target for token in TOKENS), endpoint.target
    assert sorted(p.name for p in FOLDER.iterdir()) == ["brief.toml"], "loading a config writes nothing"


url_pieces = st.sampled_from(
    [
        "json://",
        "tgram://",
        "slack://",
        "discord://",
        "mailtos://",
        "ntfy://",
        "pover://",
        "hooks.example.com",
        "127.0.0.1:8080",
        "/",
        "?",
        "&",
        "=",
        ":",
        "@",
        "#",
        "token",
        "apikey",
        "+Authorization",
        "${HOOK}",
        "user",
        "-",
        "_",
        ".",
    ]
)


@FUZZ
@example(pieces=["123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "json://"])  # a token as the scheme
@example(pieces=["xoxb-2544325623-9af8de74e1c2b3a4d5e6f7a8", "json://x"])
@example(pieces=["json://", "${HOOK}", "9f86d081884c7d659a2feaa0c55ad015"])  # a key right beside a variable
@given(
    pieces=st.tuples(
        st.sampled_from(["json://", "tgram://", "slack://", "ntfy://", ""]),
        st.lists(
            st.one_of(url_pieces, url_pieces, url_pieces, st.sampled_from(TOKENS)), min_size=1, max_size=8
        ),
    ).map(lambda t: [t[0], *t[1]])
)
def test_a_channel_url_holding_a_token_is_refused_or_recorded_without_it(pieces: list[str]) -> None:
    """Whatever a URL is made of, a token written into it is refused, or kept out of ``target``
    (which every delivery event records), and a refusal never repeats it."""
    url = "".join(pieces)
    try:
        settings = parse_settings(
            {"storage": {"root": "r"}, "delivery": {"channels": [{"name": "team", "url": url}]}}
        )
    except ConfigError as exc:
        event("refused")
        assert one_line(str(exc)) and not any(token in str(exc) for token in TOKENS), str(exc)
    else:
        event("accepted")
        target = settings.delivery.channels[0].target
        assert not any(token in target for token in TOKENS), target
