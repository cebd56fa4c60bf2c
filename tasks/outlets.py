"""How a citation names its outlet as a reader knows it, from the article's kind and evidence.

``techcrunch.com · Hacker News (643 points)``, ``GitHub · 2,330 stars today``, ``aibase #3``.
A news or lab article is named by its source, as before kinds: it gets no fields at all, so
the briefs of plain news sources stay what they were.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HACKER_NEWS = "Hacker News"
NAMED_KINDS = ("community", "repos", "digest", "papers")


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def outlet_label(kind: str, source: str, outlet: str | None, evidence: Mapping[str, Any]) -> str:
    """The outlet as a reader knows it; the source's name for a kind without one of its own."""
    name = outlet or source
    if kind == "community":
        points = evidence.get("points")
        home = f"{HACKER_NEWS} ({_count(points, 'point', 'points')})" if points is not None else HACKER_NEWS
        return home if name == HACKER_NEWS else f"{name} · {home}"
    if kind == "repos":
        if evidence.get("stars_today") is not None:
            return f"{name} · {_count(evidence['stars_today'], 'star', 'stars')} today"
        if evidence.get("stars") is not None:
            return f"{name} · {_count(evidence['stars'], 'star', 'stars')}"
        return name
    if kind == "digest":
        position = evidence.get("digest_position")
        return f"{name} #{position}" if position is not None else name
    if kind == "papers" and evidence.get("upvotes") is not None:
        return f"{name} · {_count(evidence['upvotes'], 'upvote', 'upvotes')}"
    return name


def citation_fields(
    kind: str, source: str, outlet: str | None, discussion_url: str | None, evidence: Mapping[str, Any]
) -> dict[str, Any]:
    """What a citation adds for a kind that names its outlet: none for news and lab articles."""
    if kind not in NAMED_KINDS:
        return {}
    fields: dict[str, Any] = {"kind": kind, "outlet_label": outlet_label(kind, source, outlet, evidence)}
    if discussion_url:
        fields["discussion_url"] = discussion_url
    if evidence:
        fields["evidence"] = dict(evidence)
    return fields
