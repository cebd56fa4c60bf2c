"""``StoreRoot``: the owners of every place under a root, and what none of them owns."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow.fs as pafs

from storage.root.bodies import RawBodies
from storage.root.briefs import BriefFiles
from storage.root.caches import Caches
from storage.root.files import Files
from storage.root.logs import RunLogs
from storage.root.policies import AdoptedCopies, Blobs
from storage.root.purged import Purged

# top folders whose files an owner handles itself (a purge rewrites them through it)
OWNED = ("events", "raw", "cache", "policies", "purged")


class StoreRoot:
    """Every place under a store's root, each by its owner."""

    def __init__(self, fs: pafs.FileSystem, base: str) -> None:
        self.name = base  # the root as its filesystem names it (the briefs' feed id is made of it)
        self.files = Files(fs, base)
        self.briefs = BriefFiles(self.files)
        self.raw = RawBodies(self.files)
        self.caches = Caches(self.files)
        self.blobs = Blobs(self.files)
        self.adopted = AdoptedCopies(self.files)
        self.purged = Purged(self.files)
        self.logs = RunLogs(self.files)

    @property
    def base(self) -> str:
        return self.files.base

    @property
    def is_local(self) -> bool:
        return self.files.is_local

    def exists(self) -> bool:
        """Whether the root itself is there (a local folder; a bucket's prefix may be empty)."""
        return self.files.exists(self.files.base)

    def remove(self) -> None:
        """The root and everything under it deleted (a throwaway store's, a replay's frozen events)."""
        self.files.fs.delete_dir(self.files.base)

    def unowned_files(self) -> Iterator[pafs.FileInfo]:
        """Every file under the root that no owner rewrites (run logs, the briefs' files, anything a
        later feature keeps there), locks and temporaries left out: what a purge sweeps."""
        for info in self.files.files_in(self.files.base, recursive=True):
            relative = self.files.relative(info.path)
            if relative.split("/", 1)[0] in OWNED or info.base_name.endswith((".lock", ".tmp")):
                continue
            yield info
