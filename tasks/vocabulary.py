"""The topic vocabulary that ships with the editorial model: categories and topic evidence.

``tasks/models/ai.vocabulary.json`` sits beside the fitted model ``ai.json``: the categories
(names, labels, keywords, weights, quotas) and the topic's keywords, entities, leading
organisations, section paths and "not news" patterns that the model's features count. The
settings take their defaults from it, and its digest is part of the policy version, so the
fitted weights and the words they were fitted on change the version together.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

VOCABULARY_FILE = Path(__file__).resolve().parent / "models" / "ai.vocabulary.json"


@functools.cache
def vocabulary() -> dict[str, Any]:
    """The shipped vocabulary (read once)."""
    return json.loads(VOCABULARY_FILE.read_bytes())  # type: ignore[no-any-return]


@functools.cache
def vocabulary_digest() -> str:
    """What the policy version hashes for the vocabulary: the file's content."""
    return hashlib.blake2b(VOCABULARY_FILE.read_bytes(), digest_size=8).hexdigest()
