"""A secret written into a channel's URL is refused, whichever part of the URL holds it, and
what the log records of a channel (``target``) never holds one."""

from __future__ import annotations

import pytest

from storage.errors import ConfigError
from tasks.channels import Channel
from tasks.settings import parse_settings

TG_TOKEN = "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
DISCORD = ("4174216298", "JHMHI8qBe7bk2ZwO5U711o3dV_js")
SLACK = ("T1JJ3T3L2", "A1BRTD4JD", "TIiajkdnlazkcOXrIdevi7FQ")
POVER = ("uQiRzpo4DXghDmr9QzzfQu27cmVRsG", "azGDORePK8gMaC0QOYAMyEEuzJnyUi")

# (URL with a secret written out, the secrets in it, the URL the refusal suggests)
WRITTEN_OUT = [
    (f"tgram://123456789:{TG_TOKEN}/12345", [TG_TOKEN], "tgram://${TGRAM_BOT_TOKEN}/12345"),
    (
        f"discord://{DISCORD[0]}/{DISCORD[1]}",
        list(DISCORD),
        "discord://${DISCORD_WEBHOOK_ID}/${DISCORD_WEBHOOK_TOKEN}",
    ),
    (
        f"slack://{'/'.join(SLACK)}/#ai-news",
        list(SLACK),
        "slack://${SLACK_TOKEN_A}/${SLACK_TOKEN_B}/${SLACK_TOKEN_C}/#ai-news",
    ),
    (f"pover://{POVER[0]}@{POVER[1]}", list(POVER), "pover://${POVER_USER_KEY}@${POVER_TOKEN}"),
    (
        "gotify://gotify.example.com/AbCdEfGhIjKlMnO",
        ["AbCdEfGhIjKlMnO"],
        "gotify://gotify.example.com/${GOTIFY_TOKEN}",
    ),
    (
        "ntfy://ntfy.sh/ai-news?token=tk_s3cr3tvalue",
        ["tk_s3cr3tvalue"],
        "ntfy://ntfy.sh/ai-news?token=${NTFY_TOKEN}",
    ),
    (
        "json://hooks.example.com/in/3ccdd113474722377935511fc85d3dd4",
        ["3ccdd113474722377935511fc85d3dd4"],
        "json://hooks.example.com/in/${JSON_TOKEN}",
    ),
    (
        "jsons://hooks.example.com/in?+Authorization=Bearer%20abc123",
        ["abc123"],
        "jsons://hooks.example.com/in?+Authorization=${JSONS_AUTHORIZATION}",
    ),
]

# URLs that name their secrets as variables, or carry none
ACCEPTED = [
    "tgram://${TG_BOT_TOKEN}/12345",
    "tgram://123456789:${TG_BOT_SECRET}/12345",
    "discord://${DISCORD_ID}/${DISCORD_TOKEN}",
    "slack://${SLACK_A}/${SLACK_B}/${SLACK_C}/#ai-news",
    "pover://${PUSHOVER_USER}@${PUSHOVER_TOKEN}",
    "ntfy://ntfy.sh/ai-news",
    "ntfy://ntfy.sh/ai-news?token=${NTFY_TOKEN}",
    "mailtos://me:${SMTP_PASSWORD}@smtp.example.com?to=me@example.com",
    "mailto://127.0.0.1:2525?smtp=127.0.0.1&mode=insecure&from=brief@example.com&to=reader@example.com",
    "json://127.0.0.1:8080/hook",
    "json://hooks.example.com/in/${HOOK_KEY}",
    "${SLACK_WEBHOOK}",
]


def settings_with(url: str):
    return parse_settings({"storage": {"root": "/tmp/x"}, "delivery": [{"name": "chat", "url": url}]})


@pytest.mark.parametrize(("url", "secrets", "instead"), WRITTEN_OUT)
def test_a_secret_written_into_a_channel_url_is_refused_without_repeating_it(
    url: str, secrets: list[str], instead: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        settings_with(url)
    message = str(refused.value)
    assert "[[delivery]] 'chat': url" in message and "carries a secret written out" in message
    assert f'url = "{instead}"' in message  # the URL to write, its secrets named as variables
    assert "export the variable where the brief runs" in message
    assert not [s for s in secrets if s in message]


@pytest.mark.parametrize("url", ACCEPTED)
def test_a_url_that_names_its_secrets_as_variables_is_accepted(url: str) -> None:
    [channel] = settings_with(url).delivery.channels
    assert channel.url == url


@pytest.mark.parametrize("url", [u for u, _, _ in WRITTEN_OUT] + ACCEPTED)
def test_what_the_log_records_of_a_channel_never_holds_a_secret(url: str) -> None:
    """``target`` goes into every delivery event: a URL is refused, or its target holds no secret."""
    secrets = next((s for u, s, _ in WRITTEN_OUT if u == url), [])
    try:
        [channel] = settings_with(url).delivery.channels
    except ConfigError:
        return
    assert not [s for s in secrets if s in channel.target], channel.target


def test_the_target_names_a_server_and_hides_any_other_host() -> None:
    def target(url: str) -> str:
        return Channel(name="c", url=url).target

    assert (
        target("mailtos://me:${SMTP_PASSWORD}@smtp.example.com?to=me@example.com")
        == "mailtos://smtp.example.com"
    )
    assert target("json://127.0.0.1:8080/hook") == "json://127.0.0.1:8080"
    assert target("tgram://${TG_BOT_TOKEN}/12345") == "tgram://${TG_BOT_TOKEN}"  # a variable's name
    assert target("tgram://123456789:${TG_BOT_SECRET}/12345") == "tgram://…"  # a bot's id and a key
    assert target("ntfy://ai-news") == "ntfy://…"  # a topic on the public server
