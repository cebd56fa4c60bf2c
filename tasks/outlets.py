"""How a citation names its outlet as a reader knows it, from the article's kind and evidence.

``techcrunch.com · Hacker News (643 points)``, ``GitHub · 2,330 stars today``, ``aibase #3``;
in a Chinese brief ``techcrunch.com · Hacker News（643 分）``, ``GitHub · 今日 2,330 星``. A
news or lab article is named by its source, as before kinds: it gets no fields at all, so the
briefs of plain news sources stay what they were.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HACKER_NEWS = "Hacker News"
NAMED_KINDS = ("community", "repos", "digest", "papers")


# What the counts are called, in the brief's language: {n} is the number with its thousands marked.
COUNTS = {
    "en": {
        "points": (" ({n} point)", " ({n} points)"),
        "stars_today": ("{n} star today", "{n} stars today"),
        "stars": ("{n} star", "{n} stars"),
        "upvotes": ("{n} upvote", "{n} upvotes"),
    },
    "zh": {
        "points": ("（{n} 分）", "（{n} 分）"),
        "stars_today": ("今日 {n} 星", "今日 {n} 星"),
        "stars": ("{n} 星", "{n} 星"),
        "upvotes": ("{n} 赞", "{n} 赞"),
    },
}


def _count(n: int, what: str, language: str) -> str:
    one, many = COUNTS.get(language, COUNTS["en"])[what]
    return (one if n == 1 else many).format(n=f"{n:,}")


def outlet_label(
    kind: str, source: str, outlet: str | None, evidence: Mapping[str, Any], language: str = "en"
) -> str:
    """The outlet as a reader knows it, its counts in the brief's ``language``; the source's name
    for a kind without one of its own."""
    name = outlet or source
    if kind == "community":
        points = evidence.get("points")
        home = f"{HACKER_NEWS}{_count(points, 'points', language)}" if points is not None else HACKER_NEWS
        return home if name == HACKER_NEWS else f"{name} · {home}"
    if kind == "repos":
        for what in ("stars_today", "stars"):
            if evidence.get(what) is not None:
                return f"{name} · {_count(evidence[what], what, language)}"
        return name
    if kind == "digest":
        position = evidence.get("digest_position")
        return f"{name} #{position}" if position is not None else name
    if kind == "papers" and evidence.get("upvotes") is not None:
        return f"{name} · {_count(evidence['upvotes'], 'upvotes', language)}"
    return name


def citation_fields(
    kind: str,
    source: str,
    outlet: str | None,
    discussion_url: str | None,
    evidence: Mapping[str, Any],
    language: str = "en",
) -> dict[str, Any]:
    """What a citation adds for a kind that names its outlet: none for news and lab articles."""
    if kind not in NAMED_KINDS:
        return {}
    label = outlet_label(kind, source, outlet, evidence, language)
    fields: dict[str, Any] = {"kind": kind, "outlet_label": label}
    if discussion_url:
        fields["discussion_url"] = discussion_url
    if evidence:
        fields["evidence"] = dict(evidence)
    return fields
