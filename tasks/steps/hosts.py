"""How many fetches run at once: at most ``per_host`` of one host, ``total`` in all.

The sources of a run are fetched all at once; a site that serves several of them
(one outlet's feeds, an archive's dated files) gets only ``per_host`` requests at a time,
and the process only ``total``. A fetch waits for its host's slot before it takes one of
the process's, so a busy host does not hold slots another host could use.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit


class HostSlots:
    """At most ``per_host`` fetches of one host (host:port) and ``total`` fetches at once."""

    def __init__(self, per_host: int, total: int) -> None:
        self.per_host, self.total = per_host, total
        self._all = threading.BoundedSemaphore(total)
        self._hosts: dict[str, threading.BoundedSemaphore] = {}
        self._lock = threading.Lock()

    def _of(self, host: str) -> threading.BoundedSemaphore:
        with self._lock:
            gate = self._hosts.get(host)
            if gate is None:
                gate = self._hosts[host] = threading.BoundedSemaphore(self.per_host)
            return gate

    @contextmanager
    def slot(self, url: str) -> Iterator[None]:
        """Held while ``url`` is fetched."""
        with self._of(urlsplit(url).netloc.lower()), self._all:
            yield


@functools.cache
def host_slots(per_host: int, total: int) -> HostSlots:
    """The process's slots for these limits: every run of the process with the same
    ``[collect]`` shares them, so two runs at once stay within them too."""
    return HostSlots(per_host, total)
