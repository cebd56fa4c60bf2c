"""``lab``: a lab's own posts. First-party and on the topic (``SourceSettings.first_party``);
each entry is one article as written, like news."""

from __future__ import annotations

from tasks.kinds.base import as_written

parse = as_written
