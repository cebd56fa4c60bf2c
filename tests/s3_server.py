"""moto's S3 server for the test session: ``python -m tests.s3_server -H HOST -p PORT``.

The same server as moto's ``moto_server`` command, with two costs of every request taken out:
moto lists its package folder to route each request (about 200 directory checks), so the
list is read once here; and the request log line per call is not written.

One thing made as S3 has it: a conditional write (``If-None-Match: *``, ``If-Match``) is atomic.
moto checks the condition and then writes, on a server that answers requests in threads, so two
racing ``PUT``s with ``If-None-Match: *`` could both pass the check; here writes and deletes of
objects take one lock, as S3 decides each conditional write against the one current object.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

from moto import backends
from moto.server import main

MODULES = tuple(backends.list_of_moto_modules())


def listed_once() -> tuple[str, ...]:
    return MODULES


_WRITES = threading.Lock()


def one_at_a_time(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def locked(*args: Any, **kwargs: Any) -> Any:
        with _WRITES:
            return method(*args, **kwargs)

    return locked


if __name__ == "__main__":
    from moto.s3.responses import S3Response

    backends.list_of_moto_modules = listed_once  # type: ignore[assignment]
    S3Response.put_object = one_at_a_time(S3Response.put_object)  # type: ignore[method-assign]
    S3Response.delete_object = one_at_a_time(S3Response.delete_object)  # type: ignore[method-assign]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    main(sys.argv[1:])
