"""The brief as people read it: Jinja2 templates over a view of the brief document.

Templates ship in ``tasks/templates`` (``brief.md.j2``, ``brief.html.j2``, ``brief.txt.j2``,
``email.html.j2``, ``entry.html.j2``); ``[output] templates = "dir"`` replaces any of them by
name. Feed text is untrusted, so every environment escapes by default: HTML autoescaping, a
Markdown escaper for the Markdown template (nothing can become a link, emphasis or a heading),
and whitespace flattening for plain text. Only ``http(s)`` links are ever handed to a template,
already checked, as the one value a template may print unescaped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from markupsafe import Markup

from storage.brief import Brief, Item
from storage.errors import ConfigError
from tasks.normalize import reader_link
from tasks.normalize import (
    without_tracking as without_tracking,  # the desk's links (flows/desk) take it from here
)
from tasks.write import KIND_SECTIONS, LABELS, left_out_line, md_escape, safe_url

Kind = Literal["markdown", "html", "text", "email", "entry"]
TEMPLATES: dict[Kind, str] = {
    "markdown": "brief.md.j2",
    "html": "brief.html.j2",
    "text": "brief.txt.j2",
    "email": "email.html.j2",
    "entry": "entry.html.j2",
}
SHIPPED = Path(__file__).parent / "templates"
CJK = frozenset({"zh", "ja", "ko"})  # languages whose text wants the CJK fonts of the font stacks


def _md_finalize(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, Markup) or not isinstance(value, str):
        return value
    return md_escape(value)


def _text_finalize(value: Any) -> Any:
    if value is None:
        return ""
    return re.sub(r"\s+", " ", value).strip() if isinstance(value, str) else value


@functools.lru_cache(maxsize=16)
def environment(flavour: Literal["html", "markdown", "text"], folder: str | None = None):
    import jinja2

    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(SHIPPED))]
    if folder:
        loaders.insert(0, jinja2.FileSystemLoader(folder))
    options: dict[str, Any] = {
        "loader": jinja2.ChoiceLoader(loaders),
        "trim_blocks": True,
        "lstrip_blocks": True,
        "keep_trailing_newline": True,
        "undefined": jinja2.StrictUndefined,
    }
    if flavour == "html":
        return jinja2.Environment(autoescape=True, **options)
    finalize = _md_finalize if flavour == "markdown" else _text_finalize
    return jinja2.Environment(autoescape=False, finalize=finalize, **options)


def _flavour(kind: Kind) -> Literal["html", "markdown", "text"]:
    return "markdown" if kind == "markdown" else "text" if kind == "text" else "html"


def check_templates(folder: str, where: str = "config") -> None:
    """Every template in ``folder`` compiles; else one line naming the file and the line."""
    import jinja2

    path = Path(folder).expanduser()
    if not path.is_dir():
        raise ConfigError(f"{where}: output.templates {folder!r} is not a folder")
    for kind, name in TEMPLATES.items():
        if not (path / name).is_file():
            continue
        try:
            environment(_flavour(kind), str(path)).get_template(name)
        except jinja2.TemplateSyntaxError as exc:
            raise ConfigError(f"{path / name}: line {exc.lineno}: {exc.message}") from None


def for_readers(doc: Brief) -> Brief:
    """The brief document as readers get it (its JSON file): cited links as ``reader_link`` shows them
    (no tracking parameters or fragment, host lower-cased, no default port). The run's document keeps
    them as the feed published them (what the fact-check compares)."""
    return doc.with_items(
        [
            i.model_copy(
                update={"citations": [c.model_copy(update={"url": reader_link(c.url)}) for c in i.citations]}
            )
            for i in doc.items
        ]
    )


def _link(url: str) -> Markup | None:
    """A link a reader may follow (``reader_link``, checked by ``safe_url``), else None."""
    safe = safe_url(reader_link(url))
    return Markup(safe) if safe else None


def _item_view(number: int, item: Item, page_language: str, lab: Mapping[str, str]) -> dict[str, Any]:
    """One item as a template sees it: numbered, its citations' links checked, its ``lang`` where it is
    not the page's."""
    citations = [
        {
            "source": c.outlet_label or c.source,
            "url": _link(c.url),
            "published": (c.published or "")[:10],
            "discussion": _link(c.discussion_url) if c.discussion_url else None,
        }
        for c in item.citations
    ]
    return {
        "number": number,
        "story_id": item.story_id,
        "lang": item.language if item.language and item.language != page_language else None,
        "title": item.title,
        # the title in the page's language, labelled as a translation, beside the original
        "translated_title": item.translated_title,
        "translation": lab["translated"].format(title=item.translated_title)
        if item.translated_title
        else None,
        "summary": item.summary,
        "unverified": item.unverified,
        "follow_up": bool(item.follow_up_of),
        "flagged": item.flagged,
        "facts": shown_facts(item)[:8],
        "citations": citations,
        "link": citations[0]
        if citations
        else {"source": "", "url": None, "published": "", "discussion": None},
        "relevance": item.relevance,
        "correction": item.correction,  # a person's correction, shown under the item
    }


def _groups(
    doc: Brief, category_labels: Mapping[str, str], lab: Mapping[str, str]
) -> list[tuple[str, str, list[Item]]]:
    """The numbered sections' (kind, heading, items) in reading order: the top stories, the categories
    (the one with the most important story first), then the kinds' sections."""
    groups: list[tuple[str, str, list[Item]]] = []
    top = doc.section("top")
    if top:
        groups.append(("top", lab["top"], top))
    categories: dict[str, list[Item]] = {}
    for item in doc.section("category"):
        categories.setdefault(item.category, []).append(item)
    by_kind = {k: doc.section(k) for k in KIND_SECTIONS}
    if by_kind["research"]:  # the papers join the research category's stories under one heading
        by_kind["research"] = categories.pop("research", []) + by_kind["research"]
    for category in sorted(categories, key=lambda c: -max(i.importance for i in categories[c])):
        groups.append(("category", category_labels.get(category, lab["other"]), categories[category]))
    for kind, entries in by_kind.items():
        if entries:
            # research is headed as the policy's research category is, when it has one
            heading = category_labels.get(kind, lab[kind]) if kind == "research" else lab[kind]
            groups.append((kind, heading, entries))
    return groups


def _sections(doc: Brief, category_labels: Mapping[str, str], lab: Mapping[str, str]) -> list[dict[str, Any]]:
    """The sections in reading order, their items numbered from 1 across them; the quick links last,
    unnumbered."""
    sections: list[dict[str, Any]] = []
    number = 0
    for kind, heading, entries in _groups(doc, category_labels, lab):
        views = []
        for item in entries:
            number += 1
            views.append(_item_view(number, item, doc.language, lab))
        sections.append({"kind": kind, "heading": heading, "entries": views})
    quick = doc.section("quick_link")
    if quick:
        unnumbered = [_item_view(0, i, doc.language, lab) for i in quick]
        sections.append({"kind": "quick_link", "heading": lab["quick"], "entries": unnumbered})
    return sections


def view(
    doc: Brief,
    category_labels: Mapping[str, str],
    *,
    note: str | None = None,
    questions: Sequence[Mapping[str, str]] = (),
    numbered: bool = True,
) -> dict[str, Any]:
    """What a template sees: sections in reading order, numbered items, checked links; an item's
    ``lang`` where it is not the page's (its ``translation``, a title in the page's language, is
    in the page's), and ``cjk`` when the page holds Chinese, Japanese or
    Korean text (its font stacks then name CJK fonts). ``numbered``: the version number is shown (the
    store's files, which the desk and auditors compare); what channels send and the feed show none."""
    lab = {**LABELS["en"], **LABELS[doc.language]}
    items = doc.items
    sections = _sections(doc, category_labels, lab)
    return {
        "title": f"{lab['title']} — {doc.date}",
        "date": doc.date,
        "language": doc.language,
        "cjk": doc.language in CJK or any(i.language in CJK for i in items),
        "version": doc.version,
        "numbered": numbered,
        "lab": lab,
        "count": len(items),
        "core": doc.core,
        "outlets": len({c.source for i in items for c in i.citations}),
        "window": {"start": doc.window.start[:16], "end": doc.window.end[:16]},
        "period": window_text(doc.window.start, doc.window.end, str(doc.date)),  # for reading
        "sections": sections,
        "lead": sections[0]["entries"][0]["title"] if sections and sections[0]["entries"] else None,
        # the desk's line of how many stories the topic filter left out (Today links it to Left
        # out); the shipped reader templates do not show it: readers cannot see those stories
        "footer": left_out_line(doc),
        "note": note,
        "questions": list(questions),
        # items people retracted: their title, the section they were in, and the note
        "retracted": [
            lab["retracted_item"].format(title=r.title, section=_section_heading(r.section, lab), note=r.note)
            for r in doc.retracted or ()
        ],
    }


def shown_facts(item: Item) -> list[str]:
    """The item's facts a reader learns something from: not one its headline already states (the
    product's name, the amount raised), and not a bare date (kept in the brief's JSON, checked)."""
    title = item.title.casefold()
    return [f.text for f in item.facts if f.kind != "date" and f.text.casefold() not in title]


def window_text(start: str, end: str, day: str | None = None) -> str:
    """The news window as a person reads it. Whole days by their dates, the last one included:
    ``2025-08-05 – 2025-08-06 UTC`` (a window from midnight to midnight, ``2025-08-05T00:00`` up to
    ``2025-08-07T00:00``), ``2025-08-06 UTC`` for one day. A window of whole days in another
    timezone (its bounds at that zone's midnight, ``2025-08-04T22:00`` up to ``2025-08-06T22:00``
    in Amsterdam) ends with the brief's ``day``: its local dates, ``2025-08-05 – 2025-08-06``. Else
    with the times, ``2025-08-06 06:00 – 18:00 UTC``, the end's date left out when it is the start's."""
    begun, ended = datetime.fromisoformat(start[:16]), datetime.fromisoformat(end[:16])
    days, rest = divmod(ended - begun, timedelta(days=1))
    if days >= 1 and not rest and (start[11:16] == "00:00" or day is not None):
        last_day = date.fromisoformat(end[:10]) - timedelta(days=1)
        zone = " UTC"
        if start[11:16] != "00:00" and day is not None:  # whole days of another zone: the brief's own
            last_day, zone = date.fromisoformat(day), ""
        first_day = last_day - timedelta(days=days - 1)
        return f"{first_day}{zone}" if days == 1 else f"{first_day} – {last_day}{zone}"
    first, last = start[:16].replace("T", " "), end[:16].replace("T", " ")
    if first[:10] == last[:10]:
        last = last[11:]
    return f"{first} – {last} UTC"


def _section_heading(section: str | None, lab: Mapping[str, str]) -> str:
    names = {"top": "top", "quick_link": "quick", "category": "other"}
    key = names.get(section or "", section or "other")
    return lab.get(key, lab["other"])


def render(kind: Kind, context: Mapping[str, Any], folder: str | None = None) -> str:
    """One template over a view (``view(...)``); the text ends with exactly one newline."""
    template = environment(_flavour(kind), folder).get_template(TEMPLATES[kind])
    text = template.render(**context)
    if kind == "markdown":
        text = re.sub(r"\n{3,}", "\n\n", text)
    return text.rstrip() + "\n"


def render_markdown(doc: Brief, category_labels: Mapping[str, str], templates: str | None = None) -> str:
    return render("markdown", view(doc, category_labels), templates)


def render_html(doc: Brief, category_labels: Mapping[str, str], templates: str | None = None) -> str:
    return render("html", view(doc, category_labels), templates)
