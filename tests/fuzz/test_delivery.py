"""A channel's errors, whatever the service answers: recorded ``delivery.failed`` events and one-line
reasons that never hold a secret the URL took from the environment, in any spelling of it."""

from __future__ import annotations

import base64
import os
from datetime import date
from urllib.parse import quote, quote_plus

from hypothesis import event, example, given
from hypothesis import strategies as st

from storage.store.memory import InMemoryEventStore
from tasks import deliver
from tasks.channels import Channel
from tasks.settings import parse_settings
from tasks.steps.deliver import _send
from tests.fuzz import FUZZ, one_line
from tests.fuzz.server import ECHO, Reply, scripted
from tests.runs import hashing_run

DAY = date(2025, 8, 6)
SERVER = scripted()
HOST = SERVER.base.removeprefix("http://")
SETTINGS = parse_settings({"storage": {"root": "unused"}})
MESSAGE = deliver.Message("Daily brief: OpenAI launches a model", "1. OpenAI launches a model.", "markdown")
VARIABLES = ("FUZZ_HOOK_TOKEN", "FUZZ_HOOK_USER", "FUZZ_HOOK_PASSWORD", "FUZZ_HOOK_URL")

# where the secrets sit in the channel's URL
URLS = [
    "json://{host}/hooks/${{FUZZ_HOOK_TOKEN}}",
    "json://{host}/hooks/x?token=${{FUZZ_HOOK_TOKEN}}",
    "json://${{FUZZ_HOOK_USER}}:${{FUZZ_HOOK_PASSWORD}}@{host}/hooks",
    "form://${{FUZZ_HOOK_USER}}:${{FUZZ_HOOK_PASSWORD}}@{host}/hooks/${{FUZZ_HOOK_TOKEN}}",
    "xml://{host}/${{FUZZ_HOOK_TOKEN}}/in",
    "jsons://{host}/hooks/${{FUZZ_HOOK_TOKEN}}",  # TLS to a plain server: an SSL error
    "json://127.0.0.1:9/hooks/${{FUZZ_HOOK_TOKEN}}",  # nobody listens
    "${{FUZZ_HOOK_URL}}",
]
secrets_ = st.text(alphabet=st.sampled_from("abcXYZ0189-_.~ /+%@:?&=#é秘"), min_size=4, max_size=20).map(
    lambda s: f"Tk{s}9z"
)


@st.composite
def replies(draw: st.DrawFn) -> Reply:
    status = draw(st.sampled_from([200, 204, 400, 401, 403, 404, 413, 429, 500, 502, 503]))
    body = draw(
        st.sampled_from(
            [
                b"",
                b"ok",
                b'{"error": "invalid token: ' + ECHO + b'"}',
                b"<html><body><h1>Forbidden</h1><p>" + ECHO + b"</p></body></html>",
                b"line one\r\nline two: " + ECHO + b"\nline three",
                b"x" * 2000 + ECHO,
                b"\xff\xfe\x00 not text " + ECHO,
            ]
        )
    )
    return Reply(
        status, body, {"Content-Type": draw(st.sampled_from(["text/plain", "application/json", "text/html"]))}
    )


def spellings(secret: str) -> set[str]:
    """A secret as an error could show it: as it is, percent-quoted (either way) or plus-quoted."""
    return {secret, quote(secret, safe=""), quote(secret), quote_plus(secret), quote(secret, safe="").lower()}


@FUZZ
@example(  # a "#" in a token: Apprise quotes the path keeping its "/", as "000001/%23"
    shape="jsons://{host}/hooks/${{FUZZ_HOOK_TOKEN}}",
    token="000001/#",
    user="brief",
    password="00000189",
    reply=Reply(200, b"", {}),
    retries=0,
)
@given(
    shape=st.one_of(
        st.sampled_from(URLS[:5] + URLS[6:]), st.sampled_from(URLS)
    ),  # TLS (its set-up costs) less often
    token=secrets_,
    user=st.sampled_from(["brief", "ops@example.com", "us er"]),
    password=secrets_,
    reply=replies(),
    retries=st.sampled_from([0, 0, 1]),
)
def test_a_channel_that_fails_is_recorded_without_its_secrets(
    shape: str, token: str, user: str, password: str, reply: Reply, retries: int
) -> None:
    url = shape.format(host=HOST)
    whole = f"json://{quote(user, safe='')}:{quote(password, safe='')}@{HOST}/hooks/{quote(token, safe='')}"
    env = {
        "FUZZ_HOOK_TOKEN": token,
        "FUZZ_HOOK_USER": user,
        "FUZZ_HOOK_PASSWORD": password,
        "FUZZ_HOOK_URL": whole,
    }
    channel = Channel(name="team", url=url, retries=retries, backoff_s=0)
    SERVER.answer(reply)
    ctx = hashing_run(InMemoryEventStore(), SETTINGS, DAY, "run-fuzz")  # type: ignore[arg-type]
    saved = {k: os.environ.get(k) for k in VARIABLES}
    os.environ.update(env)
    try:
        sent = _send(
            ctx, deliver.Send(channel, "brief", "direct"), MESSAGE, 1, lambda _: None, ["published-v1"]
        )
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    event("delivered" if sent.ok else f"failed: {sent.reason[:30]}")
    stored = ctx.store.read([DAY])
    assert [e.event_type for e in stored] == (
        ["brief.delivered"] if sent.ok else ["delivery.failed"] * sent.attempts
    )
    hidden = (
        spellings(token) | spellings(password) | {base64.b64encode(f"{user}:{password}".encode()).decode()}
    )
    said = [sent.reason, *(e.stored_line.decode() for e in stored), channel.target]
    for text in said:
        leaked = [s for s in hidden if s in text]
        assert not leaked, f"{leaked} in {text!r}"
    assert sent.ok or one_line(sent.reason), sent.reason
