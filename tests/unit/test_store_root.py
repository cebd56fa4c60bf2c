"""One contract for the root object (``storage/root``) over the file backends of the store contract
test: Parquet on a local disk, on fsspec memory and on a real S3-compatible server (moto's server
mode). The in-memory store has no root: it keeps no file."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs
import pytest

from storage import raw
from storage.brief import brief_json
from storage.errors import StoreError
from storage.root import StoreRoot
from storage.store import ParquetEventStore
from tests.factories import brief, brief_item

DAY = date(2025, 8, 6)


@pytest.fixture(params=["local", "fsspec-memory", "s3"])
def opener(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Opens the same root again, as another process or host would (a store of its own)."""
    if request.param == "s3":
        root, endpoint = request.getfixturevalue("s3_root"), request.getfixturevalue("s3_server")
        return lambda: ParquetEventStore(root, endpoint_url=endpoint)
    if request.param == "local":
        return lambda: ParquetEventStore(str(tmp_path / "root"))
    name = f"memory://root-{uuid.uuid4().hex}"
    return lambda: ParquetEventStore(name)


@pytest.fixture
def store(opener) -> ParquetEventStore:  # type: ignore[no-untyped-def]
    return opener()  # type: ignore[no-any-return]


class TestStoreRootContract:
    def test_briefs_live_where_readers_and_the_log_name_them(self, store: ParquetEventStore) -> None:
        briefs, base = store.tree.briefs, store.base.rstrip("/")
        assert briefs.current(DAY, "md") == f"{base}/briefs/2025-08-06.md"
        assert briefs.current("2025-08-06") == f"{base}/briefs/2025-08-06.json"
        assert briefs.version(DAY, 3, "html") == f"{base}/briefs/2025-08-06/v3.html"
        assert briefs.feed == f"{base}/briefs/feed.xml"
        assert briefs.rendered(briefs.version(DAY, 3), "md") == briefs.version(DAY, 3, "md")

    def test_a_brief_written_is_read_back_and_its_versions_listed_in_number_order(
        self, store: ParquetEventStore
    ) -> None:
        briefs = store.tree.briefs
        assert briefs.current_document(DAY) is None
        assert briefs.versions(DAY) == []
        for number in (2, 10, 1):
            briefs.write(briefs.version(DAY, number), brief_json(brief(day=DAY, version=number)))
            briefs.write(briefs.version(DAY, number, "md"), f"# v{number}")
        current = brief(brief_item("st-1", "One"), day=DAY, version=10)
        briefs.write(briefs.current(DAY), brief_json(current))
        assert briefs.current_document(DAY) == current
        assert [n for n, _ in briefs.versions(DAY)] == [1, 2, 10]
        assert [briefs.read(p).version for _, p in briefs.versions(DAY)] == [1, 2, 10]
        assert briefs.text(briefs.version(DAY, 2, "md")) == "# v2"

    def test_the_days_lock_admits_one_holder_at_a_time(self, opener) -> None:  # type: ignore[no-untyped-def]
        inside, most, errors = [0], [0], []
        guard = threading.Lock()

        def hold() -> None:
            try:
                with opener().tree.briefs.lock(DAY) as held:
                    held.check()
                    with guard:
                        inside[0] += 1
                        most[0] = max(most[0], inside[0])
                    time.sleep(0.05)
                    with guard:
                        inside[0] -= 1
            except Exception as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=hold) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert errors == []
        assert most[0] == 1

    def test_raw_bodies_are_kept_by_digest_replaced_and_dropped(self, store: ParquetEventStore) -> None:
        bodies = store.tree.raw
        first = bodies.put(DAY, b"<rss>one</rss>")
        assert first == f"raw/date=2025-08-06/{raw.digest(b'<rss>one</rss>')}.zst"
        assert bodies.put(DAY, b"<rss>one</rss>") == first  # same bytes, same name, once
        second = bodies.put(date(2025, 8, 7), b"<rss>two</rss>")
        assert bodies.get(first) == b"<rss>one</rss>"
        assert bodies.every() == [("2025-08-06", first), ("2025-08-07", second)]
        fresh = bodies.replace("2025-08-06", first, b"<rss></rss>")
        assert bodies.of_day(DAY) == [fresh]
        with pytest.raises(StoreError, match="no longer kept"):
            bodies.get(first)
        bodies.drop(date(2025, 8, 7), [second])
        assert bodies.days() == ["2025-08-06"]

    def test_the_embedding_cache_keeps_parts_per_model_and_day_and_drops_keys(
        self, store: ParquetEventStore
    ) -> None:
        caches = store.tree.caches
        one, other = caches.embeddings("some/model v2"), caches.embeddings("hashing-384")
        assert one.directory == f"{store.base.rstrip('/')}/cache/embeddings/model=some_model_v2"
        one.write(DAY, pa.table({"key": ["a", "b"], "vector": [[1.0], [2.0]]}))
        one.write(date(2025, 8, 1), pa.table({"key": ["c"], "vector": [[3.0]]}))
        other.write(None, pa.table({"key": ["a"], "vector": [[4.0]]}))  # before days were folders
        keys = lambda tables: sorted(k for t in tables for k in t.column("key").to_pylist())  # noqa: E731
        assert keys(one.parts([DAY])) == ["a", "b"]
        assert keys(one.parts()) == ["a", "b", "c"]
        assert keys(other.parts([DAY])) == ["a"]  # the model's own folder is always read
        assert caches.drop_embeddings({"a"}) == 2
        assert keys(one.parts()) == ["b", "c"]
        assert keys(other.parts()) == []

    def test_the_embedding_cache_reads_a_part_once_and_never_a_dropped_one(
        self, store: ParquetEventStore
    ) -> None:
        cache = store.tree.caches.embeddings("kept/model")
        cache.write(DAY, pa.table({"key": ["a", "b"], "vector": [[1.0, 0.5], [2.0, 0.25]]}))
        [(keys, vectors)] = list(cache.vectors([DAY]))
        assert keys == ["a", "b"]
        assert vectors.dtype == np.float32 and vectors.tolist() == [[1.0, 0.5], [2.0, 0.25]]
        [(_, again)] = list(cache.vectors([DAY]))
        assert again is vectors  # the part was kept, not read again
        assert store.tree.caches.drop_embeddings({"a"}) == 1  # a new part replaces it
        assert [(k, v.tolist()) for k, v in cache.vectors([DAY])] == [(["b"], [[2.0, 0.25]])]

    def test_blobs_and_adoption_copies(self, store: ParquetEventStore) -> None:
        tree = store.tree
        digest, relative = tree.blobs.put(b"weights", ".json")
        assert relative == f"policies/blobs/{digest}.json"
        assert tree.blobs.get(relative) == b"weights"
        later, earlier = tree.adopted.name(20, "e2"), tree.adopted.name(10, "e1")
        tree.adopted.keep(later, b"two")
        tree.adopted.keep(earlier, b"one")
        tree.adopted.keep(earlier, b"not written again")
        assert tree.adopted.listed() == [earlier, later]
        assert [tree.adopted.micros(p) for p in tree.adopted.listed()] == [10, 20]
        assert tree.adopted.read(earlier) == b"one"
        tree.blobs.delete(relative)
        with pytest.raises(StoreError, match="missing"):
            tree.blobs.get(relative)

    def test_tombstones_add_up_under_their_lock(self, store: ParquetEventStore) -> None:
        purged = store.tree.purged
        assert not purged.tombstones()
        with purged.lock():
            purged.add("article:a1", ["a1"], ["https://x.test/1"], ["h1"])
        purged.add("article:a2", ["a2"], [], [])
        now = purged.tombstones()
        assert now.article_ids == {"a1", "a2"} and now.content_hashes == {"h1"}
        assert now.targets == ("article:a1", "article:a2")

    def test_unowned_files_are_what_no_owner_rewrites(self, store: ParquetEventStore) -> None:
        tree = store.tree
        tree.briefs.write(tree.briefs.current(DAY, "md"), "# brief")
        tree.files.write(tree.files.path("logs", "2025-08-06", "run-1.log"), b"log")
        tree.raw.put(DAY, b"<rss/>")
        tree.blobs.put(b"x", ".json")
        tree.caches.embeddings("m").write(DAY, pa.table({"key": ["k"], "vector": [[0.0]]}))
        tree.purged.add("article:a", ["a"], [], [])
        with tree.briefs.lock(DAY):
            pass
        found = sorted(tree.files.relative(i.path) for i in tree.unowned_files())
        assert found == ["briefs/2025-08-06.md", "logs/2025-08-06/run-1.log"]


def test_a_root_whose_filesystem_cannot_lock_refuses_rather_than_run_unlocked(tmp_path: Path) -> None:
    import fsspec

    tree = StoreRoot(pafs.PyFileSystem(pafs.FSSpecHandler(fsspec.filesystem("file"))), str(tmp_path))
    ran = []
    with pytest.raises(StoreError, match=r"\(fsspec file\) cannot hold a lock.*s3://"), tree.briefs.lock(DAY):
        ran.append(True)
    assert ran == []
    written = brief(day=DAY)
    tree.briefs.write(tree.briefs.current(DAY), brief_json(written))  # what needs no lock still works
    assert tree.briefs.current_document(DAY) == written


def test_the_event_stores_root_is_the_configured_one(tmp_path: Path) -> None:
    store = ParquetEventStore(str(tmp_path / "root"))
    assert store.tree.base == str(tmp_path / "root")
    assert store.tree.is_local and not store.tree.exists()
    store.tree.briefs.write(store.tree.briefs.current(DAY), "{}")
    assert (tmp_path / "root" / "briefs" / "2025-08-06.json").read_text() == "{}"
    assert store.tree.exists()
