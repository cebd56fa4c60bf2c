"""Data you can take back: ``brief purge``, ``[retention]`` on ``brief compact``, ``brief reparse``.

The purge tests run on a copy of the real published days: a briefed article is purged, and then
every file under the root is read (Parquet tables, zstd segments and bodies, gzip, text) and
searched for its title and its link; the export and the brief versions are searched too.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storage.events import new_event
from storage.store import ParquetEventStore
from tests.cli import brief
from tests.real_days import copy_real_days

DAY = "2025-08-06"


def readable(path: Path) -> list[bytes]:
    """A file's bytes and, for Parquet, zstd and gzip, what they hold decompressed."""
    data = path.read_bytes()
    out = [data]
    if path.name.endswith(".parquet"):
        table = pq.read_table(path)
        out.append(json.dumps(table.to_pylist(), ensure_ascii=False, default=str).encode())
    elif path.name.endswith((".zst", ".events")):  # raw bodies; a regression case's frozen facts
        with pa.CompressedInputStream(pa.BufferReader(data), "zstd") as stream:
            out.append(stream.read())
    elif path.name.endswith(".gz"):
        out.append(gzip.decompress(data))
    return out


def holding(root: Path, needles: list[str]) -> list[str]:
    """The files under ``root`` whose bytes (decompressed) hold any of ``needles``."""
    wanted = [n.encode() for n in needles]
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and any(w in blob for blob in readable(p) for w in wanted)
    )


def briefed_article(root: Path) -> tuple[dict, dict]:
    """The day's lead item and the article its first citation names (as collected)."""
    document = json.loads((root / "briefs" / f"{DAY}.json").read_text())
    item = document["items"][0]
    article_id = item["citations"][0]["article_id"]
    store = ParquetEventStore(str(root))
    rows = store.query(
        lambda: store.scan(event_types=["article.collected"]).filter(pl.col("subject_id") == article_id)
    )
    return item, json.loads(rows["payload"][-1])


@pytest.mark.slow
def test_a_purged_article_is_in_no_file_no_export_and_no_brief(real_days: Path, tmp_path: Path) -> None:
    config, _ = copy_real_days(real_days, tmp_path / "days")
    root = config.parent / "store"
    item, article = briefed_article(root)
    needles = [article["title"], article["url"]]
    other = json.loads((root / "briefs" / f"{DAY}.json").read_text())["items"][-1]["story_id"]
    assert other != item["story_id"]
    retracted = brief(
        "retract", other, "--note", "wrong day", "--date", DAY, "--by", "ed", "--config", str(config)
    )
    assert retracted.returncode == 0, retracted.stderr
    versions_before = sorted((root / "briefs" / DAY).glob("v*.json"))
    assert len(versions_before) >= 2
    kept = brief(
        "regress", "add", "--date", DAY, "--story", item["story_id"], "--expect", "core", "--note", "a launch",
        "--by", "ed", "--config", str(config),
    )  # fmt: skip
    assert kept.returncode == 0, kept.stderr
    before = holding(root, needles)
    assert any(p.startswith("events/") for p in before) and any(p.startswith("raw/") for p in before)
    assert any(p.startswith("policies/blobs/") and p.endswith(".events") for p in before)
    assert any(p.startswith(f"briefs/{DAY}/v1.") for p in before)

    done = brief(
        "purge", "--article", article["article_id"], "--reason", "publisher takedown", "--by", "legal",
        "--config", str(config),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"brief {DAY}" in done.stdout

    assert holding(root, needles) == []
    versions = sorted((root / "briefs" / DAY).glob("v*.json"))
    assert len(versions) == len(versions_before) + 1  # the current brief is a new version
    current = json.loads((root / "briefs" / f"{DAY}.json").read_text())
    assert current["version"] == len(versions)
    cited = {c["article_id"] for i in current["items"] for c in i["citations"]}
    assert article["article_id"] not in cited and current["items"]
    store = ParquetEventStore(str(root))
    tombstones = store.read(event_types=["article.purged"])
    assert tombstones and all(t.payload["reason"] == "publisher takedown" for t in tombstones)
    assert article["article_id"] in tombstones[0].payload["article_ids"]
    assert store.query(lambda: store.scan(event_types=["article.collected"]).filter(
        pl.col("subject_id") == article["article_id"])).is_empty()  # fmt: skip
    # the new version names what it was made from: the kept items' chains and the tombstone
    newest = max(store.read(event_types=["brief.published"]), key=lambda e: int(e.payload["version"]))
    assert newest.payload["version"] == current["version"]
    assert {t.event_id for t in tombstones if str(t.brief_date) == DAY} <= set(newest.source_event_ids)
    kept_item = current["items"][0]["story_id"]
    traced = brief("trace", "--date", DAY, "--story", kept_item, "--config", str(config))
    assert traced.returncode == 0 and "feed.fetched" in traced.stdout, traced.stdout + traced.stderr
    # and a case can still be frozen on the day (its stories are the last clustering's)
    another = brief(
        "regress", "add", "--date", DAY, "--story", kept_item, "--expect", "core", "--by", "ed",
        "--config", str(config),
    )  # fmt: skip
    assert another.returncode == 0, another.stdout + another.stderr
    # the regression case now names its facts frozen again without the article, and replays
    from ops.regress import thaw

    case = store.read(event_types=["regression.case_added"])[0]  # frozen before the purge
    frozen = thaw(store, case.payload["facts"])
    assert frozen and article["article_id"] not in {e.subject_id for e in frozen}
    replayed = brief("evaluate", "--regression", "--config", str(config))
    assert re.search(r"\d+ cases?, \d+ pass", replayed.stdout), replayed.stdout + replayed.stderr

    exported = brief(
        "export", "events", "--start", "2025-08-01", "--end", "2025-08-31", "--format", "jsonl",
        "--out", str(tmp_path / "export"), "--config", str(config),
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    text = (tmp_path / "export" / "events.jsonl").read_text()
    assert "article.purged" in text and not any(n in text for n in needles)

    # the day collected again from its archive: the article stays out
    again = brief("collect", "--date", DAY, "--config", str(config))
    assert again.returncode == 0, again.stderr
    assert holding(root / "events", needles) == []


@pytest.mark.slow
def test_a_purged_source_leaves_none_of_its_articles_behind(real_days: Path, tmp_path: Path) -> None:
    """``--source``: every article the source gave, on every day, goes as one article does."""
    config, _ = copy_real_days(real_days, tmp_path / "days")
    root = config.parent / "store"
    store = ParquetEventStore(str(root))
    collected = [
        json.loads(p)
        for p in store.query(lambda: store.scan(event_types=["article.collected"]))["payload"]
        if json.loads(p)["source"] == "anthropic_news"
    ]
    links = sorted({a["url"] for a in collected})
    assert len(links) >= 3 and holding(root, links)
    done = brief(
        "purge", "--source", "anthropic_news", "--reason", "publisher asked", "--by", "legal",
        "--config", str(config),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "still in [[sources]]" in done.stdout + done.stderr  # it would be collected again
    assert holding(root, links + [a["title"] for a in collected if len(a["title"]) >= 12]) == []
    for path in (root / "briefs").glob("*.json"):
        if path.name != "feed.json":
            sources = {
                c["source"] for i in json.loads(path.read_text()).get("items", []) for c in i["citations"]
            }
            assert "anthropic_news" not in sources, path


@pytest.mark.slow
def test_purge_refuses_bad_input_and_writes_nothing(real_days: Path, tmp_path: Path) -> None:
    config, _ = copy_real_days(real_days, tmp_path / "days")
    root = config.parent / "store"
    files = {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}
    cases = [
        (["--article", "art-0000", "--reason", "x", "--by", "y"], "is not an article in the store"),
        (["--source", "nowhere", "--reason", "x", "--by", "y"], "has no article in the store"),
        (["--reason", "x", "--by", "y"], "give --article ID or --source NAME"),
        (["--article", "art-0000", "--source", "wired", "--reason", "x", "--by", "y"], "one of them"),
        (["--source", "wired", "--reason", " ", "--by", "y"], "--reason is empty"),
    ]
    for args, said in cases:
        done = brief("purge", *args, "--config", str(config))
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert said in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()} == files


@pytest.mark.slow
def test_reparse_reads_the_kept_bodies_and_adds_nothing_when_parsers_agree(
    real_days: Path, tmp_path: Path
) -> None:
    config, _ = copy_real_days(real_days, tmp_path / "days")
    root = config.parent / "store"
    store = ParquetEventStore(str(root))
    fetches = [e for e in store.read([date.fromisoformat(DAY)], event_types=["feed.fetched"])]
    assert fetches and all(e.payload.get("body") for e in fetches)
    for fetch in fetches:  # each body is kept under its content hash
        path = root / fetch.payload["body"]
        with pa.CompressedInputStream(pa.BufferReader(path.read_bytes()), "zstd") as stream:
            body = stream.read()
        assert hashlib.blake2b(body, digest_size=16).hexdigest() == fetch.payload["content_hash"]
    done = brief("reparse", "--date", DAY, "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert " 0 new events" in done.stdout and "parsed again" in done.stdout
    assert brief("reparse", "--date", "2024-01-01", "--config", str(config)).returncode == 2


# -- retention ---------------------------------------------------------------------------


def llm_call(day: date, n: int) -> object:
    return new_event(
        "llm.called",
        {
            "task": "summary",
            "subject": f"st-{n}",
            "articles": [f"art-{n}"],
            "model": "m",
            "server": "127.0.0.1:1",
            "template": "summary@1:abc",
            "messages": [
                {"role": "system", "content": "Summarise."},
                {"role": "user", "content": f"Story {n} text"},
            ],
            "response": '{"summary": "s"}',
            "output": {"summary": "s"},
            "request_key": f"k{n}",
        },
        brief_date=day,
        run_id="r",
        subject_id=f"st-{n}",
        produced_by="llm@1",
        occurred_at=datetime(2025, 1, 1, tzinfo=UTC),
    )


def test_retention_leaves_digests_where_the_messages_were(tmp_path: Path) -> None:

    today = datetime.now(UTC).date()
    old, recent = today - timedelta(days=100), today - timedelta(days=10)
    store = ParquetEventStore(str(tmp_path / "store"))
    body = store.tree.raw.put(old, b"<rss>old feed</rss>")
    fetched = new_event(
        "feed.fetched",
        {"source": "s", "url": "file:///f.xml", "status": 200, "content_hash": "h", "items": 0, "body": body},
        brief_date=old, run_id="r", subject_id="s", produced_by="collect@1", occurred_at=datetime(2025, 1, 1, tzinfo=UTC),
    )  # fmt: skip
    calls = [llm_call(old, 1), llm_call(old, 2), llm_call(recent, 3)]
    store.append([*calls, fetched])
    # a regression case whose frozen facts copy the old day's model answers
    from ops.regress import thaw
    from storage.store.base import events_to_segment

    digest, path = store.tree.blobs.put(events_to_segment(calls[:2]).to_pybytes(), ".events")
    facts = {"digest": digest, "path": path, "events": 2, "first_day": str(old), "last_day": str(old)}
    case = new_event(
        "regression.case_added",
        {"case_id": "c1", "expect": "core", "key": "st-1", "story_id": "st-1", "anchor": "art-1",
         "members": ["art-1"], "facts": facts, "by": "ed"},
        brief_date=old, run_id="r", subject_id="c1", produced_by="regress@1", occurred_at=datetime(2025, 1, 1, tzinfo=UTC),
    )  # fmt: skip
    store.append([case])
    config = tmp_path / "brief.toml"
    config.write_text(
        '[storage]\nroot = "store"\n[retention]\n"llm.called" = "90d"\n"feed.fetched" = "30d"\n'
    )

    done = brief("compact", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert "thinned 1 feed.fetched, 2 llm.called; 1 raw body dropped" in done.stdout

    thinned = {e.event_id: e for e in store.read(event_types=["llm.called", "feed.fetched"])}
    assert set(thinned) == {e.event_id for e in [*calls, fetched]}  # same events, same ids
    for call in calls[:2]:
        messages = thinned[call.event_id].payload["messages"]
        for was, now in zip(call.payload["messages"], messages, strict=True):
            digest = "blake2b:" + hashlib.blake2b(was["content"].encode(), digest_size=16).hexdigest()
            assert now == {"role": was["role"], "digest": digest, "chars": str(len(was["content"]))}
        assert thinned[call.event_id].payload["output"] == {"summary": "s"}
        assert thinned[call.event_id].payload["response"].startswith("blake2b:")
    assert thinned[calls[2].event_id].payload == calls[2].payload  # younger than 90 days: as it was
    assert "body" not in thinned[fetched.event_id].payload
    # the case's copies are thinned too: frozen again under a new digest, which the case now names
    assert "regression set: 2 frozen events thinned" in done.stdout
    [kept] = store.read(event_types=["regression.case_added"])
    assert kept.payload["facts"]["path"] != path and not (tmp_path / "store" / path).exists()
    frozen = {e.event_id: e for e in thaw(store, kept.payload["facts"])}
    assert {e: f.payload for e, f in frozen.items()} == {
        c.event_id: thinned[c.event_id].payload for c in calls[:2]
    }
    assert not (tmp_path / "store" / body).exists()
    again = brief("compact", "--config", str(config))  # thinning twice changes nothing
    assert again.returncode == 0 and "thinned" not in again.stdout

    config.write_text('[storage]\nroot = "store"\n[retention]\n"article.collected" = "30d"\n')
    refused = brief("compact", "--config", str(config))
    assert refused.returncode == 2 and "cannot be thinned" in refused.stderr
