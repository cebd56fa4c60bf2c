"""Whole-or-nothing writes of local files: a unique temporary name beside the target, then a rename."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_text(path: Path, text: str) -> None:
    """``path`` holds ``text`` entirely or keeps what it held; concurrent writers never share a temporary."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
