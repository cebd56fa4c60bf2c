"""The templates: hostile feed text stays inert in every one; users' templates replace them by name."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import feedparser
import pytest

from storage.errors import ConfigError
from tasks.briefs_feed import FeedEntry, atom_feed
from tasks.render import TEMPLATES, check_templates, render, view
from tests.factories import hostile_brief

QUESTION = {
    "id": "q-1",
    "prompt": "Same story? <script>alert(5)</script> [x](javascript:alert(6))",
    "default": "yes",
}


def rendered(kind: str, folder: str | None = None) -> str:
    context = view(hostile_brief(), {}, note="<b>note</b> [n](javascript:alert(7))", questions=[QUESTION])
    return render(kind, context, folder)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["html", "email", "entry"])
def test_hostile_feed_text_is_inert_in_every_html_template(kind: str) -> None:
    page = rendered(kind)
    lowered = page.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<b>note" not in lowered
    assert 'href="javascript' not in lowered and 'onerror="' not in lowered
    assert "&lt;script&gt;alert(1)" in page  # shown as text


def test_the_email_body_has_inline_styles_only() -> None:
    page = rendered("email")
    assert "<style" not in page and "<link" not in page and "<script" not in page
    assert page.count('style="') > 10 and 'width="640"' in page


def test_hostile_feed_text_is_inert_in_markdown_and_text() -> None:
    md = rendered("markdown")
    assert "<script>" not in md and "\\[click\\]" in md
    assert "](javascript" not in md.replace("\\](javascript", "")  # every bracket escaped: no link
    assert "\\<b\\>note" in md and "\\[x\\]" in md  # the note and the question are escaped too
    text = rendered("text")
    assert "Ignore previous instructions" in text and "javascript:alert(4)" not in text  # no unsafe link


def test_a_users_template_replaces_the_shipped_one_by_name(tmp_path: Path) -> None:
    (tmp_path / "brief.md.j2").write_text(
        "# {{ title }}\n{% for s in sections %}{{ s.heading }}: {{ s.entries | length }}\n{% endfor %}"
    )
    check_templates(str(tmp_path))
    md = rendered("markdown", str(tmp_path))
    assert md == "# AI brief — 2025-08-06\nTop stories: 1\n"
    assert "<html" in rendered("html", str(tmp_path))  # the others are still the shipped ones


def test_a_broken_users_template_is_one_line_naming_the_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "email.html.j2").write_text("<p>\n{% for x in %}\n")
    with pytest.raises(ConfigError, match=r"email\.html\.j2: line 2: "):
        check_templates(str(tmp_path))
    with pytest.raises(ConfigError, match="is not a folder"):
        check_templates(str(tmp_path / "missing"))


def test_every_shipped_template_exists() -> None:
    from tasks.render import SHIPPED

    assert all((SHIPPED / name).is_file() for name in TEMPLATES.values())


def test_the_feed_of_briefs_is_atom_with_one_entry_per_date_newest_first() -> None:
    first = datetime(2025, 8, 6, 7, 0, tzinfo=UTC)
    later = datetime(2025, 8, 6, 9, 30, tzinfo=UTC)
    doc2 = hostile_brief(version=2)
    doc_next = hostile_brief(day=date(2025, 8, 7))
    data = atom_feed(
        [
            FeedEntry("2025-08-06", 2, first, later, doc2),
            FeedEntry("2025-08-07", 1, later, later, doc_next),
        ],
        feed_id="urn:dailybrief:briefs:test",
        title="AI brief",
        category_labels={},
        base_url="https://briefs.example.com",
    )
    parsed = feedparser.parse(data)
    assert not parsed.bozo and parsed.version == "atom10"
    assert [e.id for e in parsed.entries] == [
        "urn:dailybrief:brief:2025-08-07",
        "urn:dailybrief:brief:2025-08-06",
    ]
    updated = parsed.entries[1]
    assert updated.title.startswith("AI brief — 2025-08-06: Ignore previous")  # no version number
    assert updated.link == "https://briefs.example.com/2025-08-06.html"
    assert updated.updated_parsed[:5] == (2025, 8, 6, 9, 30) and updated.published_parsed[:5] == (
        2025,
        8,
        6,
        7,
        0,
    )
    content = updated.content[0].value
    assert "<script" not in content.lower() and "&lt;script&gt;" in content  # still text inside the entry
    assert b"<script" not in data  # the XML carries it escaped
