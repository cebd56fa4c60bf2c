"""A lock on S3: a lease object made with a conditional write, renewed while held, taken over once stale.

Acquiring is one ``PUT`` with ``If-None-Match: *``: the store creates the object only if no
object has that name, so of two writers racing for one name exactly one gets it; the other
gets ``412 Precondition Failed`` and waits. The object says who holds it (host, process,
thread) and for how long (``ttl_s``). While the block runs, a thread renews the lease
(``PUT`` with ``If-Match`` on the ETag it holds) every third of the ``ttl_s``; a lease not
renewed for ``ttl_s`` belongs to a holder that crashed or lost the store, and a waiter takes
it over with ``If-Match`` on the stale ETag (two waiters of one stale lease: one wins). Ages are
measured on the store's clock (the ``Date`` of the answer minus the lease's ``Last-Modified``),
so the hosts' clocks need not agree. Releasing deletes the object with ``If-Match`` on the ETag
held: a holder whose lease was taken over never removes its successor's.

A holder whose lease was taken over (its renewals failed for ``ttl_s``: a long pause, the store
out of reach) learns it from ``check()``, which it calls before each step that must happen once.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import pyarrow.fs as pafs

from storage.errors import StoreError

TTL_S = 60.0  # a lease not renewed for this long is stale (its holder renews it every ttl_s / 3)
POLL_S = 0.25  # how often a waiter looks again at a lease another holder has

log = logging.getLogger("dailybrief.lock")


class Held:
    """A lock held (``storage.atomic.exclusive`` yields one): ``check()`` raises once it is no
    longer this holder's. A lock on a local disk stays its holder's until released."""

    def check(self) -> None:
        return None


class LeaseLost(StoreError):
    """The lease was taken over by another holder (this one had not renewed it for ``ttl_s``)."""


@dataclass(frozen=True)
class _Seen:
    etag: str
    holder: str
    token: str
    ttl_s: float
    age_s: float


@functools.lru_cache(maxsize=16)
def _client(options: tuple[tuple[str, Any], ...]) -> Any:
    import boto3
    from botocore.config import Config

    given = dict(options)
    endpoint = given.get("endpoint_override") or None
    if endpoint and "://" not in endpoint:
        endpoint = f"{given.get('scheme') or 'https'}://{endpoint}"
    keys = {}
    if given.get("access_key"):
        keys = {
            "aws_access_key_id": given["access_key"],
            "aws_secret_access_key": given.get("secret_key"),
            "aws_session_token": given.get("session_token") or None,
        }
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=given.get("region") or None,
        config=Config(retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=10, read_timeout=30),
        **keys,
    )


def s3_client(fs: pafs.S3FileSystem) -> Any:
    """A boto3 S3 client for the endpoint, region and credentials of ``fs`` (one per process)."""
    options = fs.__reduce__()[1][0]  # the arguments ``fs`` was made with
    wanted = ("endpoint_override", "scheme", "region", "access_key", "secret_key", "session_token")
    return _client(tuple((k, options.get(k)) for k in wanted))


def holder_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{threading.get_ident()}"


class Lease(Held):
    """One holder's lease on ``s3://bucket/key``; ``acquire`` waits while another holds it."""

    def __init__(
        self,
        client: Any,
        bucket: str,
        key: str,
        *,
        ttl_s: float = TTL_S,
        poll_s: float = POLL_S,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client, self.bucket, self.key = client, bucket, key
        self.ttl_s, self.poll_s, self.sleep = ttl_s, poll_s, sleep
        self.holder = holder_name()
        self.token = uuid.uuid4().hex
        self.etag: str | None = None
        self.renewals = 0
        self.lost = False
        self.waiting_for = ""  # the holder this one last found in its way
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    @property
    def where(self) -> str:
        return f"s3://{self.bucket}/{self.key}"

    def _body(self) -> bytes:
        record = {
            "holder": self.holder,
            "token": self.token,
            "ttl_s": self.ttl_s,
            "renewals": self.renewals,
            "written_at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        return json.dumps(record).encode()

    def _put(self, **condition: str) -> bool:
        """Write the lease under ``condition``; False when the store refuses it (412, or 409 for
        a conditional write racing another); any other refusal is one clear StoreError."""
        from botocore.exceptions import ClientError

        try:
            answer = self.client.put_object(
                Bucket=self.bucket,
                Key=self.key,
                Body=self._body(),
                ContentType="application/json",
                **condition,
            )
        except ClientError as exc:
            if _status(exc) in (409, 412):
                return False
            raise _refused(self.where, "write", exc) from None
        self.etag = answer["ETag"]
        return True

    def _seen(self) -> _Seen | None:
        """The lease as the store has it now, or None when there is none."""
        from botocore.exceptions import ClientError

        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self.key)
        except ClientError as exc:
            if _status(exc) == 404:
                return None
            raise _refused(self.where, "read", exc) from None
        raw = answer["Body"].read()
        try:
            record = json.loads(raw)
            holder, token, ttl_s = str(record["holder"]), str(record["token"]), float(record["ttl_s"])
        except (ValueError, KeyError, TypeError):  # not a lease we wrote: stale once our ttl passes
            holder, token, ttl_s = "unknown", "", self.ttl_s
        header = answer.get("ResponseMetadata", {}).get("HTTPHeaders", {}).get("date")
        now = parsedate_to_datetime(header) if header else datetime.now(UTC)
        age = (now - answer["LastModified"]).total_seconds()
        return _Seen(answer["ETag"], holder, token, ttl_s, age)

    def try_acquire(self) -> bool:
        """Take the lease if it is free or stale; False while another live holder has it."""
        if self._put(IfNoneMatch="*"):
            return True
        seen = self._seen()
        if seen is None:  # released between the two requests
            return self._put(IfNoneMatch="*")
        if seen.token == self.token:  # our own write, whose answer was lost and the write retried
            self.etag = seen.etag
            return True
        if seen.age_s > seen.ttl_s:
            log.warning(
                "lock %s: taking over the lease of %s, not renewed for %.0f s (ttl %.0f s)",
                self.where,
                seen.holder,
                seen.age_s,
                seen.ttl_s,
            )
            return self._put(IfMatch=seen.etag)
        self.waiting_for = seen.holder
        return False

    def acquire(self) -> Lease:
        """Wait until the lease is this holder's, then keep renewing it until ``release``."""
        waited = False
        while not self.try_acquire():
            if not waited:
                log.warning("lock %s is held by %s; waiting", self.where, self.waiting_for)
                waited = True
            self.sleep(self.poll_s)
        self._renewer = threading.Thread(target=self._renewing, name=f"lease {self.key}", daemon=True)
        self._renewer.start()
        return self

    def _renewing(self) -> None:
        while not self._stop.wait(self.ttl_s / 3) and self.renew():
            pass

    def renew(self) -> bool:
        """Write the lease again if it is still this holder's; False once another took it over.

        A store out of reach is not a loss: the next renewal tries again (until ``ttl_s`` has
        passed, when a waiter may take the lease over, which this one then learns here).
        """
        self.renewals += 1
        try:
            if self.etag is not None and self._put(IfMatch=self.etag):
                return True
        except (StoreError, OSError) as exc:
            log.warning("lock %s: renewing the lease failed (%s); trying again", self.where, exc)
            return True
        self.lost = True
        log.error("lock %s: the lease was taken over by another holder", self.where)
        return False

    def check(self) -> None:
        """Raise LeaseLost when another holder took the lease over."""
        if self.lost:
            raise LeaseLost(
                f"the lock {self.where} was taken over by another holder (this one could not renew "
                f"it for {self.ttl_s:.0f} s); stopped before doing anything more"
            )

    def release(self) -> None:
        from botocore.exceptions import ClientError

        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
        if self.lost or self.etag is None:
            return
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self.key, IfMatch=self.etag)
        except ClientError as exc:
            if _status(exc) in (404, 412):  # gone, or another holder's now
                return
            if _status(exc) != 501:
                raise _refused(self.where, "delete", exc) from None
            seen = self._seen()  # a store without conditional deletes: delete only our own lease
            if seen is not None and seen.token == self.token:
                self.client.delete_object(Bucket=self.bucket, Key=self.key)


def _status(exc: Any) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)


def _refused(where: str, what: str, exc: Any) -> StoreError:
    error = exc.response.get("Error", {})
    hint = ""
    if _status(exc) == 501 or error.get("Code") == "NotImplemented":
        hint = "; the store does not support conditional writes (If-None-Match), which the lock needs"
    return StoreError(
        f"lock {where}: the store refused to {what} it ({error.get('Code', _status(exc))}: "
        f"{str(error.get('Message', ''))[:200]}){hint}"
    )


def s3_lease(fs: pafs.S3FileSystem, path: str, **options: Any) -> Lease:
    """A lease on ``path`` (``bucket/key``, as pyarrow names S3 objects) of the store ``fs`` is on."""
    bucket, _, key = path.lstrip("/").partition("/")
    if not bucket or not key:
        raise StoreError(f"lock {path!r} names no object; expected bucket/key")
    return Lease(s3_client(fs), bucket, key, **options)
