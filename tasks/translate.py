"""A title in the brief's language beside the original, and the check that it says the same.

A language model translates the title of an item whose language is not the brief's. Its text is
shown only when it keeps every name and number of the original and adds none: the original's
Latin-script names (organisations, names written as names, versioned names, and in a sentence-case
title its capitalised words), its versions, amounts, scaled and plain numbers and dates are all in
the translation (amounts, numbers and dates compared normalised: ``$2 billion`` = ``20亿美元``,
``March 18`` = ``3月18日``), and it states nothing of the kind the original does not, carries no
link, no markup and no instruction to an AI system. Otherwise the original is shown alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from tasks import analyze, factcheck, injection, llm, names
from tasks.dedup import Item

LABEL = "translate@1"  # what the check's events say produced them


@dataclass(frozen=True)
class Translation:
    """What the model gave for one title, and what the check found wrong with it (nothing: shown)."""

    original: str
    text: str
    findings: tuple[llm.TextFinding, ...]

    @property
    def accepted(self) -> bool:
        return not self.findings


def wanted(language: str, brief_language: str) -> bool:
    """Whether an item's title is translated: its language is known and not the brief's."""
    return language not in ("und", "", brief_language)


def _as_item(text: str) -> Item:
    return Item("text", "", text, "", "", "", None)


def _plain_numbers(text: str, year: int) -> set[str]:
    """The numbers ``text`` writes outside its amounts, scaled numbers and dates, as
    ``analyze.numbers`` normalises them."""
    for shown in sorted(
        {s for s, _ in [*analyze.amounts(text), *analyze.scaled_numbers(text), *analyze.dates(text, year)]},
        key=len,
        reverse=True,
    ):
        text = text.replace(shown, " ")
    return analyze.numbers(text)


def _title_names(title: str, language: str) -> frozenset[str]:
    """Every name a title uses: as ``names.written_names`` finds them, and the capitalised words
    of a sentence-case title (``names.title_names``)."""
    found = names.written_names(title) | names.title_names(title, english=language == "en")
    return frozenset(n for n in found if not n[:1].isdigit())  # ``7B``: a number, checked as one


_URL = re.compile(r"(?:https?://|www\.)\S+", re.IGNORECASE)
_MARKUP = re.compile(r"<\s*/?\s*[a-zA-Z][^>]*>|\]\(|!\[")


def check(original: str, translation: str, language: str, brief_date: date) -> list[llm.TextFinding]:
    """What keeps ``translation`` from standing beside ``original`` (a title in ``language``):
    each finding refuses it. ``DROPPED``: a name or number of the original the translation
    lacks; ``NOT_IN_SOURCES``: one it adds; ``INSTRUCTIONS``, ``MARKUP``, ``LINK``,
    ``UNCHANGED``: what it is."""
    findings: list[llm.TextFinding] = []
    if names.fold(translation) == names.fold(original):
        findings.append(llm.TextFinding("text", translation[:120], "UNCHANGED"))
    if injection.looks_like_instructions(translation):
        findings.append(llm.TextFinding("instructions", translation[:120], "INSTRUCTIONS"))
    if _MARKUP.search(translation):
        findings.append(llm.TextFinding("markup", translation[:120], "MARKUP"))
    findings += [llm.TextFinding("link", m.group(0), "LINK") for m in _URL.finditer(translation)]
    year = brief_date.year
    kept = _as_item(translation)
    source = _as_item(original)
    for claim in factcheck.unanchored(original, [kept], year):
        findings.append(llm.TextFinding(claim.kind, claim.text, "DROPPED"))
    for claim in factcheck.unanchored(translation, [source], year):
        findings.append(llm.TextFinding(claim.kind, claim.text, "NOT_IN_SOURCES"))
    said, says = analyze.numbers(original), analyze.numbers(translation)
    for number in sorted(_plain_numbers(original, year) - says):
        findings.append(llm.TextFinding("number", number, "DROPPED"))
    for number in sorted(_plain_numbers(translation, year) - said):
        findings.append(llm.TextFinding("number", number, "NOT_IN_SOURCES"))
    for name in sorted(_title_names(original, language)):
        if not names.mentions(translation, name):
            findings.append(llm.TextFinding("name", name, "DROPPED"))
    for name in sorted(names.written_names(translation)):
        if not names.mentions(original, name):
            findings.append(llm.TextFinding("name", name, "NOT_IN_SOURCES"))
    return findings


def checked(original: str, translation: str, language: str, brief_date: date) -> Translation:
    text = re.sub(r"\s+", " ", translation).strip()
    return Translation(original, text, tuple(check(original, text, language, brief_date)))


def payload(story_id: str, item: Item, brief_language: str, translation: Translation) -> dict:
    """The ``title.translated`` event's payload: what was shown, or why the original stands alone."""
    return {
        "story_id": story_id,
        "article_id": item.article_id,
        "source_language": item.language,
        "language": brief_language,
        "original": translation.original,
        "translation": translation.text,
        "accepted": translation.accepted,
        "findings": [{"kind": f.kind, "claim": f.claim, "reason": f.reason} for f in translation.findings],
    }
