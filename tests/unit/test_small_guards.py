"""Small guards: how the store recognises a vanished file, the timezone of a typed publish date,
a dry run that writes nothing, counts kept by concurrent collectors, a model path that is no
folder, a file archive collected without a search for validators."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from storage.events import new_event, utcnow
from storage.store import ParquetEventStore
from storage.store.vanished import vanished as _vanished
from tasks import steps
from tasks.settings import parse_settings
from tests.conftest import REPO
from tests.runs import hashing_run


def context(tmp_path: Path, recorder: steps.Recorder = steps.LIVE, **settings: object) -> steps.RunContext:
    parsed = parse_settings({"storage": {"root": str(tmp_path / "store")}, **settings})
    store = ParquetEventStore(str(tmp_path / "store"))
    return hashing_run(store, parsed, date(2025, 8, 6), "r", recorder=recorder)


def test_a_vanished_file_is_recognised_in_the_words_object_stores_use() -> None:
    assert _vanished(FileNotFoundError("x"))
    assert _vanished(OSError("When reading information for key 'events/part-1': AWS Error NoSuchKey"))
    assert _vanished(OSError("GCS: 404 Not Found"))
    assert _vanished(OSError("AWS Error RESOURCE_NOT_FOUND during GetObject operation: "))  # seen on moto
    assert _vanished(OSError("AWS Error NO_SUCH_KEY during GetObject operation"))
    assert not _vanished(OSError("Permission denied"))
    assert not _vanished(OSError("Connection reset by peer"))


def test_a_transient_object_store_error_is_read_again_and_any_other_is_raised() -> None:
    from storage.store.vanished import rereading

    cut = OSError(
        "AWS Error INTERNAL_FAILURE during GetObject operation: Failed to flush response stream (eof: 0, bad: 1)"
    )
    tries: list[int] = []

    def flaky() -> str:
        tries.append(1)
        if len(tries) < 3:
            raise cut
        return "read"

    assert rereading(flaky) == "read" and len(tries) == 3
    with pytest.raises(PermissionError):
        rereading(lambda: (_ for _ in ()).throw(PermissionError("Permission denied")))


def test_a_publish_date_typed_in_review_is_the_start_of_that_day_in_the_configured_timezone(
    tmp_path: Path,
) -> None:
    ctx = context(tmp_path, timezone="Europe/Amsterdam")
    question = {
        "question_id": "q-1",
        "type": "completion",
        "subject": "art-1",
        "field": "published_at",
        "value": "",
    }
    events = steps.resolve(ctx, question, "2025-08-06", "human")
    [correction] = [e for e in events if e.event_type == "article.corrected"]
    assert correction.payload["value"] == "2025-08-05T22:00:00+00:00"  # midnight in Amsterdam (CEST)


def test_a_dry_run_collects_nothing_into_the_log_and_counts_what_it_would_have(tmp_path: Path) -> None:
    feeds = (REPO / "samples" / "feeds").as_uri()
    sources = [{"name": "labnotes", "url": f"{feeds}/labnotes/{{date}}.xml"}]
    ctx = context(tmp_path, steps.Dry(), sources=sources)
    outcome = steps.collect_one(ctx, "labnotes")
    assert ctx.store.days() == []
    assert outcome.counts["article.collected"] >= 4 and outcome.new_events == 0
    assert ctx.counts == {}  # the shared context is left alone until the run absorbs the outcome
    steps.absorb(ctx, [outcome])
    assert ctx.counts == outcome.counts


def test_counts_are_exact_when_collectors_append_at_once(tmp_path: Path) -> None:
    ctx = context(tmp_path, steps.Dry())
    event = new_event(
        "run.started",
        {"flow": "daily-brief", "parameters": {}},
        brief_date=ctx.day,
        run_id="r",
        subject_id="r",
        produced_by="t",
        occurred_at=utcnow(),
    )

    def work() -> None:
        for _ in range(2000):
            ctx.append([event])

    import sys

    threads = [threading.Thread(target=work) for _ in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, so an unlocked update loses counts
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert ctx.counts["run.started"] == 16000


def test_shared_vectors_round_trip_and_a_broken_file_is_only_a_miss(tmp_path: Path) -> None:
    import numpy as np

    from tasks.embed import SharedVectors

    shared = SharedVectors(str(tmp_path / "vectors.sqlite"))
    vector = np.linspace(-1, 1, 384, dtype=np.float32)
    shared.put("m", {"k1": vector})
    found = SharedVectors(str(tmp_path / "vectors.sqlite")).get("m", ["k1", "k2"])  # another process's view
    assert list(found) == ["k1"] and found["k1"].tobytes() == vector.tobytes()  # bit for bit
    assert shared.get("other-model", ["k1"]) == {}
    (tmp_path / "not-a-db.sqlite").write_bytes(b"this is not SQLite" * 100)
    broken = SharedVectors(str(tmp_path / "not-a-db.sqlite"))
    assert broken.get("m", ["k1"]) == {}
    broken.put("m", {"k1": vector})  # no error: the caller computes the vectors instead


def test_a_feed_body_is_parsed_once_and_a_changed_body_again() -> None:
    from tasks.collect import parse_feed

    body = (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
        b"<item><title>One</title><link>https://example.org/1</link></item></channel></rss>"
    )
    assert parse_feed(body) is parse_feed(body)
    changed = parse_feed(body.replace(b"One", b"Two"))
    assert changed.entries[0].title == "Two" and parse_feed(body).entries[0].title == "One"


def test_a_feeds_entries_are_read_once_per_kind_and_every_read_says_the_same() -> None:
    from storage.payloads import ArticleCollectedV4
    from storage.typed import payload_of
    from tasks.collect import Fetched, Source, feed_events, listed

    body = (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title><item><title>One &amp; <b>two</b>'
        b"</title><link>https://www.example.org/1?utm_source=x</link><description>&lt;p&gt;Said"
        b"&lt;/p&gt;</description><category>A&amp;I</category></item></channel></rss>"
    )
    _, news = listed(body, "news")
    assert listed(body, "news")[1] is news and listed(body, "community")[1] is not news
    source = Source("wire", "https://example.org/feed")
    first, again = (
        feed_events(source, date(2025, 8, 6), "r", at=at, url="u", fetched=Fetched(body=body, status=200))
        for at in (datetime(2025, 8, 6, tzinfo=UTC), datetime(2025, 8, 7, tzinfo=UTC))
    )
    assert [e.payload for e in first[1:]] == [e.payload for e in again[1:]]
    said = payload_of(first[1], ArticleCollectedV4)
    assert said.title == "One & two" and said.tags == ["A&I"] and said.summary == "Said"


def test_a_backfill_keeps_as_many_parsed_feeds_as_its_files_and_no_more_after() -> None:
    from tasks.collect import keeping_parsed, parse_feed

    def body(n: int) -> bytes:
        return (
            b'<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>'
            b"<item><title>Kept %d</title><link>https://example.org/%d</link></item></channel></rss>" % (n, n)
        )

    with keeping_parsed(100):
        first = parse_feed(body(0))
        for n in range(1, 100):
            parse_feed(body(n))
        assert parse_feed(body(0)) is first  # 100 files kept: the first is still there
    for n in range(1, 100):  # after the backfill, the usual few
        parse_feed(body(n))
    assert parse_feed(body(0)) is not first


def test_a_model_path_that_is_no_folder_fails_before_torch_is_imported(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from storage.errors import ConfigError\n"
        "from tasks.embed import SentenceTransformerEmbedder\n"
        "try:\n"
        "    SentenceTransformerEmbedder(sys.argv[1]).encode(['a sentence'])\n"
        "except ConfigError as exc:\n"
        "    print(exc)\n"
        "print('torch' in sys.modules)\n"
    )
    missing = str(tmp_path / "no-such-model")
    done = subprocess.run(
        [sys.executable, "-c", script, missing], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.stdout.splitlines() == [
        f"embedding.model {missing!r} cannot be loaded offline (no such folder); "
        "give a local model folder, 'use-multilingual-v3' or keep the default 'all-MiniLM-L6-v2'",
        "False",
    ], done.stdout + done.stderr


def test_a_file_archive_is_collected_without_searching_the_log_for_validators(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tasks.collect import Source
    from tasks.steps import collect as collect_step

    assert not Source("a", "file:///feeds/a/{date}.xml").over_http
    assert not Source("a", "/feeds/a/{date}.xml").over_http
    assert Source("a", "https://example.org/{date}.xml").over_http and Source("a", "http://x/feed").over_http
    searched: list[str] = []
    monkeypatch.setattr(collect_step, "last_validators", lambda ctx, url: searched.append(url))
    feeds = (REPO / "samples" / "feeds").as_uri()
    ctx = context(tmp_path, sources=[{"name": "labnotes", "url": f"{feeds}/labnotes/{{date}}.xml"}])
    assert steps.collect_one(ctx, "labnotes").items >= 4
    assert searched == []  # a file sends no ETag and gets no 304: the events are those it gave before


def test_a_remembered_embedder_computes_a_text_once_per_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from tasks.embed import SHARED_ENV, HashingEmbedder, Remembered, SharedVectors, text_key

    class Counting(HashingEmbedder):
        def __init__(self) -> None:
            self.name, self.texts = f"counting-{tmp_path.name}", []

        def encode(self, texts):
            self.texts.extend(texts)
            return super().encode(texts)

    monkeypatch.setenv(SHARED_ENV, str(tmp_path / "vectors.sqlite"))
    first, second = Counting(), Counting()
    vectors = Remembered(first).encode(["one", "two", "one"])
    assert first.texts == ["one", "two"]
    assert np.array_equal(vectors, HashingEmbedder().encode(["one", "two", "one"]))
    assert Remembered(second).encode(["two"]).tobytes() == vectors[1].tobytes() and second.texts == []
    # another process of the machine finds them in the shared file, under the inner model's name
    found = SharedVectors(str(tmp_path / "vectors.sqlite")).get(
        first.name, [text_key("one"), text_key("two")]
    )
    assert np.array_equal(np.stack([found[text_key("one")], found[text_key("two")]]), vectors[:2])
