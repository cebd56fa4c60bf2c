"""Delivery settings, the plan of who gets what, and sending without a secret in any reason."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from storage.errors import ConfigError
from storage.payloads import BriefApprovedV2, BriefDelivered, BriefHeld
from tasks import deliver
from tasks.channels import Channel, DeliverySettings, redact
from tasks.settings import parse_settings
from tasks.steps.send import send
from tests.delivery_servers import free_port
from tests.factories import hostile_brief

ZONE = ZoneInfo("Europe/Amsterdam")
NOW = datetime(2025, 8, 6, 6, 0, tzinfo=UTC)  # 08:00 in Amsterdam


def settings_of(toml_delivery: dict | list) -> DeliverySettings:
    return parse_settings({"storage": {"root": "/tmp/x"}, "delivery": toml_delivery}).delivery


def test_three_lines_of_config_make_a_channel() -> None:
    [email] = settings_of(
        [{"name": "email", "url": "mailtos://me:${SMTP_PASSWORD}@smtp.example.com"}]
    ).channels
    assert email.body_format == "html" and email.scheme == "mailtos" and email.updates and email.min_core == 0
    assert email.target == "mailtos://smtp.example.com" and email.variables == ["SMTP_PASSWORD"]
    [slack] = settings_of([{"name": "slack", "url": "${SLACK_URL}"}]).channels
    assert slack.body_format == "text" and slack.target == "(URL from $SLACK_URL)"  # SLACK_URL unset here
    [hook] = settings_of([{"name": "hook", "url": "json://example.com/in"}]).channels
    assert hook.body_format == "markdown"


@pytest.mark.parametrize(
    ("delivery", "message"),
    [
        ([{"name": "e", "url": "mailto://me:hunter22@smtp.example.com"}], "must not carry a password"),
        ([{"name": "e", "url": "not a url"}], "is not an Apprise URL"),
        ([{"name": "E mail", "url": "json://x"}], r"\[\[delivery\]\] 'E mail': name"),
        ([{"name": "a", "url": "json://x"}, {"name": "a", "url": "json://y"}], "repeated: a"),
        ({"hold": True, "channels": [{"name": "a", "url": "json://x"}]}, "hold = true needs review_channel"),
        ({"review_channel": "eds", "channels": [{"name": "a", "url": "json://x"}]}, "'eds' is not a channel"),
        ({"hold_until": "8.30", "channels": []}, "is not a time of day"),
        ([{"name": "a", "url": "json://x", "colour": "red"}], "unknown key 'colour' in"),
    ],
)
def test_bad_delivery_config_is_one_line(delivery: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_settings({"storage": {"root": "/tmp/x"}, "delivery": delivery})


def test_a_secret_comes_from_the_environment_and_is_redacted_everywhere() -> None:
    channel = Channel(name="a", url="json://host/in/${TOKEN}?k=${KEY}")
    env = {"TOKEN": "tok en/1234", "KEY": "key-5678"}
    assert channel.resolve(env) == "json://host/in/tok%20en%2F1234?k=key-5678"
    reason = "failed posting to json://host/in/tok%20en%2F1234?k=key-5678 (tok en/1234)"
    assert "1234" not in redact(reason, channel.secrets(env))
    with pytest.raises(ConfigError, match="environment variable KEY is not set"):
        channel.resolve({"TOKEN": "x"})
    whole = Channel(name="s", url="${SLACK_URL}")
    secrets = whole.secrets({"SLACK_URL": "slack://T000AAAA/B000BBBB/XXXXYYYYZZZZ/#news"})
    assert {"T000AAAA", "B000BBBB", "XXXXYYYYZZZZ"} <= set(secrets)


def test_the_deadline_is_the_next_hold_until_after_the_hold() -> None:
    settings = DeliverySettings(hold_until="08:30")
    assert settings.deadline(NOW, ZONE) == datetime(2025, 8, 6, 6, 30, tzinfo=UTC)
    late = NOW + timedelta(hours=1)  # 09:00 there: tomorrow's 08:30
    assert settings.deadline(late, ZONE) == datetime(2025, 8, 7, 6, 30, tzinfo=UTC)
    assert DeliverySettings().deadline(NOW, ZONE) is None


def channels(**hold: object) -> DeliverySettings:
    """Four channels; every version at once unless ``update_after`` is given."""
    hold = {"update_after": 0, **hold}
    return DeliverySettings(
        channels=[
            Channel(name="email", url="mailto://x"),
            Channel(name="hook", url="json://x", updates=False),
            Channel(name="big", url="json://y", min_core=3),
            Channel(name="eds", url="json://z"),
        ],
        review_channel="eds" if hold.get("hold") else None,
        **hold,  # type: ignore[arg-type]
    )


def delivery(channel: str, version: int, kind: deliver.Kind) -> deliver.Sent:
    said = BriefDelivered(
        brief_date="2025-08-06",
        channel=channel,
        version=version,
        kind=kind,
        target="json://z",
        format="text",
        subject=f"v{version}",
        attempts=1,
    )
    return deliver.Sent(said, NOW)


def sent(version: int, *pairs: tuple[str, deliver.Kind]) -> deliver.DayState:
    return deliver.DayState(delivered={(c, version, k): delivery(c, version, k) for c, k in pairs})


def kinds(plan: deliver.Plan) -> list[tuple[str, str]]:
    return [(s.channel.name, s.kind) for s in plan.sends]


def test_plan_without_a_hold_sends_each_reader_once_and_updates_where_configured() -> None:
    settings = channels()
    first = deliver.plan(settings, deliver.DayState(), version=1, core=2, now=NOW, zone=ZONE)
    assert kinds(first) == [("email", "brief"), ("hook", "brief"), ("eds", "brief")]
    assert first.skipped == [("big", "2 core stories, fewer than min_core = 3")]
    done = sent(1, ("email", "brief"), ("hook", "brief"), ("eds", "brief"))
    assert kinds(deliver.plan(settings, done, version=1, core=2, now=NOW, zone=ZONE)) == []
    v2 = deliver.plan(settings, done, version=2, core=2, now=NOW, zone=ZONE)
    assert kinds(v2) == [("email", "update"), ("eds", "update")] and v2.sends[0].previous == 1
    assert ("hook", "v1 was sent and updates = false") in v2.skipped
    only = deliver.plan(settings, deliver.DayState(), version=1, core=5, now=NOW, zone=ZONE, only="big")
    assert kinds(only) == [("big", "brief")]


def test_plan_with_a_hold_shows_the_review_channel_until_approval_or_deadline() -> None:
    settings = channels(hold=True, hold_until="08:30")
    first = deliver.plan(settings, deliver.DayState(), version=1, core=3, now=NOW, zone=ZONE)
    assert first.hold_now and kinds(first) == [("eds", "review")] and first.waiting
    assert first.until == datetime(2025, 8, 6, 6, 30, tzinfo=UTC)
    held = BriefHeld(brief_date="2025-08-06", version=1, review_channel="eds", until=first.until)
    state = deliver.DayState(delivered=sent(1, ("eds", "review")).delivered, held=held)
    again = deliver.plan(settings, state, version=1, core=3, now=NOW, zone=ZONE)
    assert not again.hold_now and kinds(again) == []  # asked once per version
    v2 = deliver.plan(settings, state, version=2, core=3, now=NOW, zone=ZONE)
    assert kinds(v2) == [("eds", "review")]
    approval = BriefApprovedV2(brief_date="2025-08-06", version=1, by="ann", via="approve")
    approved = deliver.DayState(
        delivered=state.delivered, held=held, approved=deliver.Approval(approval, NOW)
    )
    released = deliver.plan(settings, approved, version=1, core=3, now=NOW, zone=ZONE)
    assert kinds(released) == [("email", "brief"), ("hook", "brief"), ("big", "brief")]
    assert {s.released for s in released.sends} == {"approved"} and released.sends[0].by == "ann"
    late = deliver.plan(settings, state, version=1, core=3, now=NOW + timedelta(minutes=31), zone=ZONE)
    assert {s.released for s in late.sends} == {"deadline"} and len(late.sends) == 3


def test_messages_say_what_they_are() -> None:
    doc = hostile_brief(version=2)
    email = Channel(name="email", url="mailto://x")
    update = deliver.compose_message(deliver.Send(email, "update", "direct", previous=1), doc, {}, zone=ZONE)
    assert (
        update.subject == "Updated: AI brief — 2025-08-06"
        and "replaces the version sent earlier" in update.body
    )
    assert update.format == "html" and update.body.startswith("<!doctype html>")
    late = deliver.compose_message(deliver.Send(email, "brief", "deadline"), doc, {}, zone=ZONE, until=NOW)
    assert late.subject.endswith("(not reviewed)") and "review deadline (2025-08-06 08:00 CEST)" in late.body
    review = deliver.compose_message(
        deliver.Send(Channel(name="eds", url="json://x"), "review", "direct"),
        doc,
        {},
        zone=ZONE,
        until=NOW,
        questions=[{"id": "q-1", "prompt": "Same story?", "default": "yes"}],
    )
    assert review.subject == "For review: AI brief — 2025-08-06 (1 open question)"
    assert (
        review.format == "markdown" and "Same story?" in review.body and "brief approve --date" in review.body
    )
    assert "· v2" in review.body and "· v2" not in update.body  # the editors' copy keeps the number
    assert "q-1" not in review.body and "brief review" not in review.body  # no ids; the desk, named
    assert (
        "the desk's Hold page (https://desk.example/hold?date=2025-08-06)"
        in deliver.compose_message(
            deliver.Send(Channel(name="eds", url="json://x"), "review", "direct"),
            doc,
            {},
            zone=ZONE,
            questions=[{"id": "q-1", "prompt": "Same story?", "default": "yes"}],
            desk="https://desk.example/hold?date=2025-08-06",
        ).body
    )
    assert (
        "\n"
        not in deliver.compose_message(
            deliver.Send(email, "brief", "direct"), doc.with_items([]), {}, zone=ZONE
        ).subject
    )


def test_a_refused_connection_is_retried_with_backoff_and_its_reason_has_no_secret() -> None:
    port = free_port()  # nothing listens
    channel = Channel(name="hook", url=f"json://127.0.0.1:{port}/in/${{TOKEN}}", retries=2, backoff_s=1.0)
    waits: list[float] = []
    calls: list[bool] = []
    message = deliver.Message("subject", "body", "markdown")
    attempts = send(
        channel,
        message,
        environ={"TOKEN": "super-secret-token"},
        sleep=waits.append,
        on_failure=lambda a, retry: calls.append(retry),
    )
    assert [a.ok for a in attempts] == [False, False, False] and calls == [True, True, False]
    assert 0.9 <= waits[0] <= 1.1 and 1.8 <= waits[1] <= 2.2  # doubling
    assert all("super-secret-token" not in a.reason and "onnect" in a.reason for a in attempts)
    missing = send(channel, message, environ={}, sleep=waits.append)
    assert len(missing) == 1 and "TOKEN is not set" in missing[0].reason  # no point waiting for it


def test_a_url_wholly_from_a_variable_takes_that_urls_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SLACK_URL", "slack://T000AAAA/B000BBBB/XXXXYYYYZZZZ/#news")
    assert Channel(name="s", url="${SLACK_URL}").body_format == "markdown"
    assert Channel(name="s", url="${SLACK_URL}", format="text").body_format == "text"


def test_the_guides_delivery_configs_are_valid() -> None:
    """Each TOML block of the guide's delivery page parses, each in three lines or so."""
    import re
    import tomllib

    from tests.conftest import REPO

    section = (REPO / "docs" / "delivery.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 7
    for block in blocks:
        settings = parse_settings({"storage": {"root": "/tmp/x"}, **tomllib.loads(block)})
        assert settings.delivery.channels or settings.output.base_url
    email, slack = (tomllib.loads(b)["delivery"] for b in blocks[:2])
    assert len(blocks[0].strip().splitlines()) == 3 and len(blocks[1].strip().splitlines()) == 3
    assert email[0]["url"].startswith("mailtos://") and slack[0]["url"] == "${SLACK_WEBHOOK}"
    [telegram] = tomllib.loads(blocks[2])["delivery"]
    assert telegram["url"].startswith("tgram://${TG_BOT_TOKEN}/")  # the token from the environment
    coalesced = parse_settings({"storage": {"root": "/tmp/x"}, **tomllib.loads(blocks[4])}).delivery
    assert coalesced.update_after == 10 and [c.name for c in coalesced.readers] == ["email"]
    sends_all = parse_settings({"storage": {"root": "/tmp/x"}, **tomllib.loads(blocks[5])}).delivery
    assert sends_all.min_core == 0 and not sends_all.hold
    held = parse_settings({"storage": {"root": "/tmp/x"}, **tomllib.loads(blocks[6])}).delivery
    assert held.hold and held.min_core == 1 and [c.name for c in held.readers] == ["email"]


def test_apprise_accepts_the_guides_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    import re
    import tomllib

    import apprise

    from tests.conftest import REPO

    monkeypatch.setenv("SMTP_PASSWORD", "pw-1234")
    monkeypatch.setenv("SLACK_WEBHOOK", "slack://TokenA/TokenB/TokenC/#ai-news")
    monkeypatch.setenv("TG_BOT_TOKEN", "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw")
    section = (REPO / "docs" / "delivery.md").read_text()
    for block in re.findall(r"```toml\n(.*?)```", section, re.DOTALL):
        settings = parse_settings({"storage": {"root": "/tmp/x"}, **tomllib.loads(block)})
        for channel in settings.delivery.channels:
            assert apprise.Apprise().add(channel.resolve()), channel.name


def test_a_reason_is_redacted_before_it_is_cut_so_no_part_of_a_secret_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A service's warning that quotes the token across the 500th character keeps none of it."""
    import logging

    import apprise

    secret = "tok-" + "s3cr3t" * 6

    def refuse(self: object, **kwargs: object) -> bool:
        logging.getLogger("apprise").warning("x" * 480 + " token=" + secret + " rejected")
        return False

    monkeypatch.setattr(apprise.Apprise, "notify", refuse)
    channel = Channel(name="hook", url=f"json://127.0.0.1:{free_port()}/in/${{TOKEN}}", retries=0)
    [attempt] = send(channel, deliver.Message("s", "b", "markdown"), environ={"TOKEN": secret})
    assert not attempt.ok and len(attempt.reason) <= 500
    assert "***" in attempt.reason and secret[:8] not in attempt.reason


def test_updates_within_the_window_wait_for_it_and_go_out_as_one_with_the_version_current_then() -> None:
    settings = channels(update_after=10)
    assert DeliverySettings().update_after == 10  # the default: ten minutes
    done = sent(1, ("email", "brief"), ("hook", "brief"), ("eds", "brief"))
    first_act = NOW  # v2, the first version after the one sent, opens the window
    published = {1: NOW - timedelta(hours=2), 2: first_act, 3: NOW + timedelta(minutes=4)}
    published[4] = NOW + timedelta(minutes=9)

    def at(minutes: float, version: int = 4, **kw: object) -> deliver.Plan:
        moment = NOW + timedelta(minutes=minutes)
        return deliver.plan(
            settings, done, version=version, core=2, now=moment, zone=ZONE, published=published, **kw
        )

    for minutes, version in ((0, 2), (4, 3), (9.9, 4)):  # each act within the window: nothing sent
        waiting = at(minutes, version)
        assert kinds(waiting) == [] and waiting.pending == first_act + timedelta(minutes=10)
        assert ("email", "update pending: the version current at 08:10 CEST goes out then") in waiting.skipped
    closed = at(10)  # the window closed: one update, the current version, replacing the one sent
    assert kinds(closed) == [("email", "update"), ("eds", "update")] and closed.pending is None
    assert {s.previous for s in closed.sends} == {1}
    urgent = at(1, 2, urgent=True)  # a retraction, or "send now": at once
    assert kinds(urgent) == [("email", "update"), ("eds", "update")]
    # the first version a channel gets is never held back; a channel without updates stays as it was
    assert kinds(
        deliver.plan(settings, deliver.DayState(), version=3, core=2, now=NOW, zone=ZONE, published=published)
    ) == [
        ("email", "brief"),
        ("hook", "brief"),
        ("eds", "brief"),
    ]
    assert ("hook", "v1 was sent and updates = false") in at(10).skipped
    # the next window opens with the first version after the one the update sent
    later = sent(4, ("email", "update"), ("eds", "update"))
    later = deliver.DayState(delivered={**done.delivered, **later.delivered})
    published[5] = NOW + timedelta(minutes=30)
    again = deliver.plan(
        settings, later, version=5, core=2, now=NOW + timedelta(minutes=35), zone=ZONE, published=published
    )
    assert kinds(again) == [] and again.pending == NOW + timedelta(minutes=40)


def test_while_held_the_review_channel_gets_one_copy_per_update_window_not_one_per_act() -> None:
    settings = channels(hold=True, hold_until="23:00", update_after=10)
    until = datetime(2025, 8, 6, 21, 0, tzinfo=UTC)
    held = BriefHeld(brief_date="2025-08-06", version=1, review_channel="eds", until=until)
    first = deliver.plan(settings, deliver.DayState(), version=1, core=3, now=NOW, zone=ZONE)
    assert kinds(first) == [("eds", "review")]  # the first held version: at once
    asked = deliver.DayState(delivered=sent(1, ("eds", "review")).delivered, held=held)
    published = {1: NOW - timedelta(minutes=30), 2: NOW, 3: NOW + timedelta(minutes=3)}

    def at(minutes: float, version: int = 3, **kw: object) -> deliver.Plan:
        moment = NOW + timedelta(minutes=minutes)
        return deliver.plan(
            settings, asked, version=version, core=3, now=moment, zone=ZONE, published=published, **kw
        )

    for minutes, version in ((0, 2), (3, 3), (9.9, 3)):  # acts within the window: no copy yet
        waiting = at(minutes, version)
        assert kinds(waiting) == [] and waiting.pending == NOW + timedelta(minutes=10) and waiting.waiting
        assert (
            "eds",
            "review copy pending: the version current at 08:10 CEST goes out then",
        ) in waiting.skipped
    closed = at(10)  # the window closed: one review copy of the version current then
    assert kinds(closed) == [("eds", "review")] and closed.pending is None
    assert kinds(at(1, 2, urgent=True)) == [("eds", "review")]  # a retraction, "send now": at once
    # approved meanwhile: the readers get the brief, and no review copy is owed any more
    approval = BriefApprovedV2(brief_date="2025-08-06", version=3, by="ann", via="approve")
    approved = deliver.DayState(
        delivered=asked.delivered, held=held, approved=deliver.Approval(approval, NOW)
    )
    released = deliver.plan(
        settings, approved, version=3, core=3, now=NOW + timedelta(minutes=1), zone=ZONE, published=published
    )
    assert (
        kinds(released) == [("email", "brief"), ("hook", "brief"), ("big", "brief")] and not released.pending
    )


def test_a_brief_released_at_its_deadline_is_released_not_held_and_its_updates_go_to_readers() -> None:
    settings = channels(hold=True, hold_until="08:30")
    held = BriefHeld(
        brief_date="2025-08-06", version=1, review_channel="eds", until=NOW + timedelta(minutes=30)
    )
    waiting = deliver.DayState(delivered=sent(1, ("eds", "review")).delivered, held=held)
    assert waiting.holding and not waiting.released and waiting.deadline_release is None
    at_deadline = delivery("email", 1, "brief")
    at_deadline = deliver.Sent(at_deadline.delivery.model_copy(update={"released": "deadline"}), held.until)
    out = deliver.DayState(delivered={**waiting.delivered, ("email", 1, "brief"): at_deadline}, held=held)
    assert out.released and not out.holding and out.deadline_release == at_deadline
    # v2, made after the release: an update to the readers who had v1, no review copy, no waiting
    v2 = deliver.plan(settings, out, version=2, core=3, now=NOW + timedelta(minutes=40), zone=ZONE)
    assert v2.waiting is None and ("email", "update") in kinds(v2) and ("eds", "review") not in kinds(v2)
    assert {s.released for s in v2.sends} == {"deadline"}


def test_an_update_says_what_changed_since_the_version_the_channel_got() -> None:
    """Not "this is version 3; it replaces version 2": the retraction and the correction, by headline;
    the retraction at the top of the brief; no version number in what readers get."""
    from storage.payloads import BriefCorrected, StoryRetracted
    from tasks.write import apply_editor_acts
    from tests.factories import brief, brief_item

    earlier = brief(
        brief_item("st-1", "Orchard raises $12M", summary="s", section="top"),
        brief_item("st-2", "TinyEval ships", summary="s", section="top"),
        brief_item("st-3", "Brightwater opens", summary="s", section="quick_link"),
        version=2,
    )
    fix = BriefCorrected(
        story_id="st-1", field="title", value="Orchard raises $21M", previous="Orchard raises $12M", by="ann"
    )
    gone = StoryRetracted(story_id="st-2", title="TinyEval ships", note="not news", by="ann")
    now = apply_editor_acts(earlier, {"st-1": {"title": fix}}, {"st-2": gone}).model_copy(
        update={"version": 3}
    )
    send = deliver.Send(
        Channel(name="hook", url="json://x", format="markdown"), "update", "direct", previous=2
    )
    message = deliver.compose_message(send, now, {}, zone=ZONE, earlier=earlier)
    line = (
        "Updated since the version sent earlier: retracted “TinyEval ships”; "
        "corrected the headline of “Orchard raises $21M”."
    )
    assert line in message.body.replace("\\", ""), message.body
    assert "version 3" not in message.body and "v3" not in message.body and "(v3)" not in message.subject
    body = message.body
    assert body.index("## Retracted") < body.index("## Top stories")  # the retraction at the top
    # the same line in the readers' other formats
    for fmt in ("html", "text"):
        other = deliver.compose_message(
            replace(send, channel=Channel(name="c", url="json://x", format=fmt)),
            now,
            {},
            zone=ZONE,
            earlier=earlier,
        )
        assert "retracted “TinyEval ships”; corrected the headline of" in other.body, fmt
    # the store's own files keep the number (the desk and auditors compare versions)
    from tasks.render import render, view

    assert "· v3" in render("markdown", view(now, {}))
    nothing = deliver.compose_message(
        send, earlier.model_copy(update={"version": 3}), {}, zone=ZONE, earlier=earlier
    )
    assert "Updated: this replaces the version sent earlier." in nothing.body


def test_a_review_copy_names_the_desks_hold_page_under_its_public_name() -> None:
    from datetime import date

    from tasks.steps.deliver import desk_page

    day = date(2025, 8, 6)
    assert desk_page(["desk.example.com"], True, day) == "https://desk.example.com/hold?date=2025-08-06"
    assert desk_page(["desk.lan"], False, day) == "http://desk.lan/hold?date=2025-08-06"
    assert desk_page([], False, day) == ""  # a loopback desk: the message names the page, no address
