"""Every place under a store's root, named once: the event store's ``tree`` (a ``StoreRoot``).

In the spirit of Dagster's IO managers, each kind of file the project keeps beside the log has
one owner that knows where it lives, how it is read and written and which lock guards it; the
callers name what they want (a day's current brief, a model's embedding cache, a raw body) and
never build a path. Each owner also says what ``brief purge`` must look at (``ops/purge.py``).

    {root}/events/date=D/part-…            the log (``storage/store/parquet.py``)
    {root}/briefs/D.{md,html,json}         the current brief, per format   ``briefs.py``
    {root}/briefs/D/vN.{md,html,json}      a version's files
    {root}/briefs/.D.lock                  the day's lock, which every writer of its briefs takes
    {root}/briefs/feed.xml                 the briefs' Atom feed
    {root}/raw/date=D/<hash>.zst           raw feed bodies                  ``bodies.py``
    {root}/cache/embeddings/model=M/…      embedding cache, by model        ``caches.py``
    {root}/policies/blobs/<digest><ext>    content-addressed files (policies, regression facts)
    {root}/policies/adopted/<t>-<id>.json  copies of the adoptions          ``policies.py``
    {root}/purged/tombstones.json          what collection never takes in again  ``purged.py``
    {root}/logs/D/run-<time>.log           run logs                         ``logs.py``

``files.py`` holds what every owner shares: the filesystem, the base path, reads, writes (whole or
not at all) and locks (``storage/atomic.py:exclusive``, which refuses a backend that cannot lock);
``tree.py`` puts the owners together.
"""

from storage.root.files import Files
from storage.root.tree import StoreRoot

__all__ = ["Files", "StoreRoot"]
