"""``news``: an outlet's own articles, each entry one article as written (the default kind)."""

from __future__ import annotations

from tasks.kinds.base import as_written

parse = as_written
