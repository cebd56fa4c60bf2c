"""Every file under a folder as the text a person could read out of it: Parquet as its rows,
zstd log segments decompressed, anything else as its bytes. Searching a file's raw bytes for a
secret proves nothing when the file is compressed."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq


def file_text(path: Path) -> str:
    if path.suffix == ".parquet":
        return pq.read_table(path).to_pandas().to_json(force_ascii=False, date_format="iso")
    if path.suffix == ".zst":
        with pa.input_stream(str(path), compression="zstd") as stream:
            return stream.read().decode("utf-8", "replace")
    return path.read_bytes().decode("utf-8", "replace")


def every_file_text(folder: Path) -> dict[Path, str]:
    """``{path: text}`` for every file under ``folder``; a folder with no file is a test mistake."""
    texts = {path: file_text(path) for path in sorted(folder.rglob("*")) if path.is_file()}
    assert texts, f"nothing under {folder}"
    return texts
