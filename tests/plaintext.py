"""Every file under a folder as the text a person could read out of it: Parquet as its values,
zstd and gzip files decompressed, JSON (a JSON-lines record, an event's payload) also as its
values, anything else as its bytes. Searching a file's raw bytes for a secret proves nothing
when the file is compressed, and searching an encoding of it (JSON escapes ``"`` and ``\\``,
and pandas ``/``) misses a secret that holds such a character."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def file_text(path: Path) -> str:
    """The file's text, then each value it holds on a line of its own, as it was stored."""
    if path.suffix == ".parquet":
        return "\n".join(_values(pq.read_table(path).to_pylist()))
    if path.suffix == ".zst":
        with pa.input_stream(str(path), compression="zstd") as stream:
            text = stream.read().decode("utf-8", "replace")
    elif path.suffix == ".gz":
        text = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
    else:
        text = path.read_bytes().decode("utf-8", "replace")
    return "\n".join([text, *(v for line in text.splitlines() for v in _values(line))])


def _values(value: object) -> list[str]:
    """Every text value (numbers, times and flags hold no secret); a text that is a JSON object
    or list also as its values."""
    if isinstance(value, dict):
        return [text for v in value.values() for text in _values(v)]
    if isinstance(value, list | tuple):
        return [text for v in value for text in _values(v)]
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        return []
    if value.lstrip()[:1] in ("{", "["):
        try:
            return [value, *_values(json.loads(value))]
        except ValueError:
            pass
    return [value]


def every_file_text(folder: Path) -> dict[Path, str]:
    """``{path: text}`` for every file under ``folder``; a folder with no file is a test mistake."""
    texts = {path: file_text(path) for path in sorted(folder.rglob("*")) if path.is_file()}
    assert texts, f"nothing under {folder}"
    return texts
