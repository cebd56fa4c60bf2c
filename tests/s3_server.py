"""moto's S3 server for the test session: ``python -m tests.s3_server -H HOST -p PORT``.

The same server as moto's ``moto_server`` command, with two costs of every request taken out:
moto lists its package folder to route each request (about 200 directory checks), so the
list is read once here; and the request log line per call is not written.
"""

from __future__ import annotations

import logging
import sys

from moto import backends
from moto.server import main

MODULES = tuple(backends.list_of_moto_modules())


def listed_once() -> tuple[str, ...]:
    return MODULES


if __name__ == "__main__":
    backends.list_of_moto_modules = listed_once  # type: ignore[assignment]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    main(sys.argv[1:])
