"""Two deliverers, or two publishers, of one date on one S3 root (moto's server): each message is
sent once, each version taken once, and a deliverer that waited sends the brief current then."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from pathlib import Path

import pytest

from storage.brief import Brief
from storage.store import ParquetEventStore
from tasks import steps
from tasks.settings import parse_settings
from tests.delivery_servers import Webhook
from tests.factories import brief, brief_item
from tests.runs import hashing_run

FIRST = date(2025, 8, 4)


@pytest.fixture
def hook() -> Iterator[Webhook]:
    server = Webhook().start()
    yield server
    server.stop()


def context(root: str, endpoint: str | None, hook: Webhook, day: date, name: str) -> steps.RunContext:
    """A run's context with a store of its own, as a process on another host would have."""
    settings = parse_settings(
        {
            "storage": {"root": root, "endpoint_url": endpoint},
            "delivery": [{"name": "hook", "url": hook.url(), "retries": 0}],
        }
    )
    store = ParquetEventStore(root, endpoint_url=endpoint)
    return hashing_run(store, settings, day, name)


def dated(story: str, day: date) -> Brief:
    return brief(brief_item(story, f"Story {story}", section="top"), day=day)


def at_once(work: Callable[[str], None], names: tuple[str, ...] = ("a", "b")) -> None:
    """Run ``work(name)`` in a thread per name, all released together; re-raise what failed."""
    start = threading.Barrier(len(names))
    errors: list[BaseException] = []

    def run(name: str) -> None:
        start.wait(timeout=60)
        try:
            work(name)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors


def test_two_deliverers_of_one_date_on_s3_send_each_brief_once(
    s3_root: str, s3_server: str, hook: Webhook
) -> None:
    days = [FIRST + timedelta(days=k) for k in range(3)]
    for day in days:
        steps.publish(context(s3_root, s3_server, hook, day, "run"), dated(f"st-{day}", day))
    outcomes: dict[tuple[str, date], steps.DeliveryOutcome] = {}
    for day in days:

        def deliver(name: str, day: date = day) -> None:
            outcomes[(name, day)] = steps.deliver_day(context(s3_root, s3_server, hook, day, name))

        at_once(deliver)
    assert len(hook.posts) == len(days), [body.get("title") for _, body in hook.posts]  # one per day
    for day in days:
        sent = [s for name in ("a", "b") for s in outcomes[(name, day)].sent]
        assert [(s.channel, s.ok) for s in sent] == [("hook", True)]  # one of the two sent it
    store = ParquetEventStore(s3_root, endpoint_url=s3_server)
    delivered = [e.payload for e in store.read(event_types=["brief.delivered"])]
    assert sorted(p["brief_date"] for p in delivered) == [d.isoformat() for d in days]


def test_two_publishers_of_one_date_on_s3_take_distinct_versions(
    s3_root: str, s3_server: str, hook: Webhook
) -> None:
    day, rounds = FIRST, 3

    def publish(name: str) -> None:
        ctx = context(s3_root, s3_server, hook, day, f"publisher-{name}")
        for n in range(rounds):
            steps.publish(ctx, dated(f"st-{name}-{n}", day))

    at_once(publish)
    store = ParquetEventStore(s3_root, endpoint_url=s3_server)
    published = [e.payload for e in store.read(event_types=["brief.published"])]
    assert sorted(p["version"] for p in published) == list(range(1, 2 * rounds + 1))  # each taken once


def blocked_in_lock(thread: threading.Thread, timeout_s: float = 30.0) -> bool:
    """Whether ``thread`` reached ``storage.atomic.exclusive`` and stays there (waits for the lock)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and thread.is_alive():
        if "exclusive" in _stack(thread):
            time.sleep(0.2)
            if "exclusive" in _stack(thread):  # still there a moment later: it waits
                return True
        time.sleep(0.005)
    return False


def _stack(thread: threading.Thread) -> list[str]:
    frame, names = sys._current_frames().get(thread.ident or 0), []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return names


@pytest.mark.parametrize("where", ["local", "s3"])
def test_a_deliverer_that_waited_for_the_lock_sends_the_brief_current_when_it_got_it(
    where: str, tmp_path: Path, request: pytest.FixtureRequest, hook: Webhook
) -> None:
    if where == "s3":
        root, endpoint = request.getfixturevalue("s3_root"), request.getfixturevalue("s3_server")
    else:
        root, endpoint = str(tmp_path / "store"), None
    ctx = context(root, endpoint, hook, FIRST, "run")
    steps.publish(ctx, dated("st-first", FIRST))
    outcome: list[steps.DeliveryOutcome] = []
    # a publisher of the day is at work: it holds the day's lock, which a deliverer takes first
    with steps.day_lock(ctx.store, FIRST):
        deliverer = threading.Thread(
            target=lambda: outcome.append(steps.deliver_day(context(root, endpoint, hook, FIRST, "late")))
        )
        deliverer.start()
        assert blocked_in_lock(deliverer), "the second deliverer did not wait for the lock"
        assert steps.publish(ctx, dated("st-second", FIRST)).version == 2  # published meanwhile
    deliverer.join(timeout=60)
    assert [(s.version, s.ok) for s in outcome[0].sent] == [(2, True)]
    [(_, body)] = hook.posts
    assert "Story st-second" in str(body) and "Story st-first" not in str(body)
