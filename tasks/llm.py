"""An optional language model, as the pipeline uses it: prompts, answers, and checks of what it says.

Pure functions and one thin client. The prompts are versioned templates shipped in
``tasks/prompts/`` (or a folder ``[llm] prompts`` names): their digest is part of the policy
version. Feed text enters a prompt only as JSON data between ``<data>`` markers, each item
saying whether its text tries to instruct an AI system. What the model answers is data too:
parsed into one pydantic model per task, and a summary is checked against its sources
(names, amounts, numbers, dates, links, instructions, markup) before the brief may use it; a
translated title is checked against its original (``tasks/translate.py``).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from storage.errors import ConfigError
from tasks import factcheck, injection
from tasks.dedup import Item

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
TASKS = ("relevance", "importance", "category", "summary", "translate")
PLACEHOLDERS = ("topic", "description", "categories", "stories", "language")


class Answer(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class RelevanceAnswer(Answer):
    outcome: Literal["core", "related", "off-topic"]
    confidence: float = Field(ge=0, le=1)
    reason: str = Field(default="", max_length=400)


class ImportanceAnswer(Answer):
    importance: float = Field(ge=0, le=1)
    reason: str = Field(default="", max_length=400)


class CategoryAnswer(Answer):
    category: str = Field(min_length=1, max_length=64)
    confidence: float = Field(default=0.5, ge=0, le=1)


class SummaryAnswer(Answer):
    summary: str = Field(min_length=1, max_length=700)


class TranslationAnswer(Answer):
    title: str = Field(min_length=1, max_length=400)


ANSWERS: dict[str, type[Answer]] = {
    "relevance": RelevanceAnswer,
    "importance": ImportanceAnswer,
    "category": CategoryAnswer,
    "summary": SummaryAnswer,
    "translate": TranslationAnswer,
}


# -- prompts -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prompt:
    id: str
    version: int
    system: str
    user: str
    digest: str

    @property
    def label(self) -> str:
        """What every call records: id, version and the digest of the template's text."""
        return f"{self.id}@{self.version}:{self.digest}"


@functools.lru_cache(maxsize=8)
def load_prompts(folder: str | None = None) -> dict[str, Prompt]:
    """The templates of every task, from ``folder`` (a user's) or the shipped ones; one clear error if bad."""
    where = Path(folder).expanduser() if folder else PROMPTS_DIR
    out = {}
    for task in TASKS:
        path = where / f"{task}.toml"
        if not path.is_file() and folder:
            path = PROMPTS_DIR / f"{task}.toml"  # a user's folder may replace only some of them
        raw = path.read_bytes()
        try:
            data = tomllib.loads(raw.decode("utf-8"))
            prompt = Prompt(
                str(data["id"]),
                int(data["version"]),
                str(data["system"]),
                str(data["user"]),
                hashlib.blake2b(raw, digest_size=4).hexdigest(),
            )
            blank = dict.fromkeys(PLACEHOLDERS, "")
            prompt.system.format(**blank)
            prompt.user.format(**blank)
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, KeyError, ValueError, IndexError) as exc:
            raise ConfigError(
                f"prompt template {path}: {exc.__class__.__name__} ({exc}); it needs id, version, system "
                "and user, with only {topic}, {description}, {categories}, {stories} and {language} "
                "as placeholders"
            ) from None
        out[task] = prompt
    return out


def prompts_digest(folder: str | None = None) -> str:
    return ",".join(p.label for p in load_prompts(folder).values())


_OPENER = re.compile(f"[{injection.MARKER_OPENERS}]")
_JSON_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|(.))")
_JSON_CHARS = {"n": "\n", "r": "\r", "t": "\t", "f": "\f", "b": "\b"}


def _as_read(json_text: str) -> str:
    """A piece of JSON text as a reader of its strings sees it (``\\n`` a line break)."""
    return _JSON_ESCAPE.sub(lambda m: chr(int(m[1], 16)) if m[1] else _JSON_CHARS.get(m[2], m[2]), json_text)


def _without_markers(json_text: str) -> str:
    """Each character that opens a data marker written as its JSON escape (``<`` as ``\\u003c``)."""
    return _OPENER.sub(
        lambda m: (
            f"\\u{ord(m[0]):04x}"
            if injection.opens_data_marker(_as_read(json_text[m.start() : m.start() + 80]))
            else m[0]
        ),
        json_text,
    )


def story_data(items: Sequence[Item], max_chars: int) -> str:
    """A story's reports as JSON data for a prompt: no more than ``max_chars`` characters of text.

    A ``<data>`` or ``</data>`` in feed text (in any case, width or spacing, with invisible
    characters, or as ``</数据>``) has its ``<`` (or ``＜``…) written as a JSON escape
    (``\\u003c``, ``\\uff1c``): the same text to a JSON reader, but no marker that could close
    the block; such an item is flagged as carrying instructions."""
    budget = max_chars
    rows = []
    for item in items:
        title, summary = item.title[: max(budget, 0)], item.summary[: max(budget - len(item.title), 0)]
        budget -= len(title) + len(summary)
        rows.append(
            {
                "source": item.source,
                "title": title,
                "summary": summary,
                "published": item.published_at.isoformat() if item.published_at else None,
                "untrusted_instructions": injection.looks_like_instructions(f"{item.title} {item.summary}"),
            }
        )
        if budget <= 0:
            break
    return _without_markers(json.dumps(rows, ensure_ascii=False, indent=1))


def title_data(item: Item, max_chars: int) -> str:
    """One headline as JSON data for the translate prompt: its text and language, flagged (and its
    data markers escaped) as ``story_data`` does."""
    row = {
        "title": item.title[:max_chars],
        "language": item.language,
        "untrusted_instructions": injection.looks_like_instructions(item.title),
    }
    return _without_markers(json.dumps([row], ensure_ascii=False, indent=1))


# the language a translated title is asked in, by the brief's language code
LANGUAGE_NAMES = {"en": "English (en)", "zh": "Simplified Chinese (zh)"}


def messages_for(
    prompt: Prompt, stories: str, *, topic: str, description: str, categories: str, language: str = ""
) -> list[dict]:
    fields = {
        "topic": topic,
        "description": description,
        "categories": categories,
        "stories": stories,
        "language": language,
    }
    return [
        {"role": "system", "content": prompt.system.format(**fields)},
        {"role": "user", "content": prompt.user.format(**fields)},
    ]


def request_key(model: str, prompt: Prompt, messages: Sequence[dict]) -> str:
    """Same model, template and messages: the same question, answered once and then read from the log."""
    text = json.dumps([model, prompt.label, list(messages)], ensure_ascii=False, sort_keys=True)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


# -- answers -------------------------------------------------------------------------------

_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")


def parse_answer(
    task: str, text: str | None, categories: Sequence[str] = ()
) -> tuple[Answer | None, str | None]:
    """(answer, None) or (None, what is wrong with it, in a line)."""
    if not text or not text.strip():
        return None, "empty answer"
    try:
        data = json.loads(_FENCE.sub("", text))
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at char {exc.pos})"
    except (ValueError, RecursionError) as exc:  # JSON that Python does not read: too long a number, too deep
        return None, "not JSON that can be read (" + (
            "nested too deeply)" if isinstance(exc, RecursionError) else "a number too long)"
        )
    if not isinstance(data, dict):
        return None, "not a JSON object"
    try:
        answer = ANSWERS[task].model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        return None, f"{'.'.join(map(str, first['loc'])) or 'answer'}: {first['msg']}"
    if isinstance(answer, CategoryAnswer) and categories and answer.category not in categories:
        return None, f"category {answer.category!r} is not one of {', '.join(categories)}"
    return answer, None


def schema_for(task: str) -> dict:
    return {"name": f"{task}_answer", "schema": ANSWERS[task].model_json_schema(), "strict": False}


_URL = re.compile(r"(?:https?://|www\.)[^\s)>\]\"']+", re.IGNORECASE)
_MARKUP = re.compile(r"<\s*/?\s*[a-zA-Z][^>]*>|\]\(|!\[")
_NAME = re.compile(r"(?<![\w.])([A-Z][\w&'-]*(?:\s+(?:[A-Z][\w&'-]*|of|de|van|der))*)")
_COMMON = {
    "The", "A", "An", "It", "Its", "This", "That", "These", "Those", "In", "On", "At", "For", "With",
    "And", "But", "Or", "After", "Before", "As", "By", "From", "Their", "They", "He", "She",
    "We", "Our", "New", "According", "Meanwhile", "Also", "Today", "Yesterday", "Monday", "Tuesday",
    "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "AI",
}  # fmt: skip


@dataclass(frozen=True)
class TextFinding:
    kind: str  # name | amount | number | date | link | instructions | markup
    claim: str
    reason: str  # NOT_IN_SOURCES | AFTER_BRIEF_DATE | NOT_COLLECTED | INSTRUCTIONS | MARKUP


def check_model_text(
    text: str, sources: Sequence[Item], collected_urls: set[str], brief_date: date
) -> list[TextFinding]:
    """What a model's text states that its sources do not: every finding rejects the text."""
    findings: list[TextFinding] = []
    source_text = " \n ".join(f"{s.title} \n {s.summary}" for s in sources)
    lowered = source_text.lower()
    for m in _URL.finditer(text):
        url = m.group(0).rstrip(".,;")
        if url not in collected_urls:
            findings.append(TextFinding("link", url, "NOT_COLLECTED"))
    if injection.looks_like_instructions(text):
        findings.append(TextFinding("instructions", text[:120], "INSTRUCTIONS"))
    if _MARKUP.search(text):
        findings.append(TextFinding("markup", text[:120], "MARKUP"))
    plain = _URL.sub(" ", text)
    for claim in factcheck.unanchored(plain, sources, brief_date.year):
        later = claim.kind == "date" and claim.value > brief_date.isoformat()
        findings.append(
            TextFinding(claim.kind, claim.text, "AFTER_BRIEF_DATE" if later else "NOT_IN_SOURCES")
        )
    for m in _NAME.finditer(plain):
        words = [w for w in m.group(1).split() if w not in _COMMON]
        name = " ".join(words)
        if len(name) < 2 or any(ch.isdigit() for ch in name):
            continue
        if name.lower() not in lowered and not all(w.lower() in lowered for w in words):
            findings.append(TextFinding("name", name, "NOT_IN_SOURCES"))
    return findings


# -- the client ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Reply:
    """One request to the server and what came back (an error instead of a text when it failed)."""

    text: str | None
    tokens_in: int
    tokens_out: int
    latency_ms: int
    error: str | None = None
    status: int | None = None
    retry_after_s: float | None = None
    unreachable: bool = False  # down or too slow: the rest of the run does not try again


def server_host(base_url: str) -> str:
    parts = urlsplit(base_url)
    return parts.netloc.rsplit("@", 1)[-1]
