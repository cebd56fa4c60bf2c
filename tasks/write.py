"""Render a brief: the JSON document (the contract), Markdown and HTML.

Feed text is untrusted: Markdown escapes every character that could become markup, HTML
escapes everything, and only http(s) links are ever rendered as links.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

LABELS = {
    "en": {
        "title": "AI brief",
        "top": "Top stories",
        "quick": "Quick links",
        "sources": "Sources",
        "facts": "Key facts",
        "follow": "Follow-up of an earlier story",
        "stories": "stories",
        "from": "from",
        "outlets": "outlets",
        "other": "Other news",
        "window": "news published",
        "unverified": "unverified",
        "flag": "Its source text contains instructions addressed to AI systems; "
        "it is shown only as quoted data.",
        "left_out": "{n} {stories} off the topic ({topic}) left out; "
        "'brief replay --projection scores' says why.",
    },
    "zh": {
        "title": "AI 简报",
        "top": "头条",
        "quick": "快讯",
        "sources": "来源",
        "facts": "要点",
        "follow": "后续报道",
        "stories": "条新闻",
        "from": "来自",
        "outlets": "个来源",
        "other": "其他",
        "window": "发布时间",
        "unverified": "未核实",
        "flag": "原文含有针对 AI 系统的指令，仅作为引用数据显示。",
        "left_out": "{n} 条与主题（{topic}）无关的新闻未收录；原因见 'brief replay --projection scores'。",
    },
}
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|<>~])")
_MD_LINE_START = re.compile(r"^([#+\-!>=]|\d+\.)")


def safe_url(url: str) -> str | None:
    url = url.strip()
    return url if re.match(r"^https?://[^\s<>\"']+$", url, re.IGNORECASE) else None


def md_escape(text: str) -> str:
    """Feed text as inert Markdown: no emphasis, links, HTML, tables or headings can form."""
    flat = _MD_SPECIAL.sub(r"\\\1", re.sub(r"\s+", " ", text)).strip()
    return _MD_LINE_START.sub(r"\\\1", flat)


def short_summary(text: str, limit: int = 320) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    if len(text) <= limit:
        return text
    cut = text[:limit]
    end = max(cut.rfind(". "), cut.rfind("。"), cut.rfind("! "), cut.rfind("? "))
    return cut[: end + 1] if end > limit // 3 else cut.rsplit(" ", 1)[0] + " …"


def content_hash(document: Mapping[str, Any]) -> str:
    body = {k: v for k, v in document.items() if k != "version"}
    return hashlib.blake2b(json.dumps(body, sort_keys=True).encode(), digest_size=12).hexdigest()


def arrange(items: Sequence[dict], *, top: int, quotas: Mapping[str, int], quick_links: int) -> list[dict]:
    """Top stories first, then by category within quotas, then quick links; each gets a ``section``.

    Only core stories lead (a story a person marked to lead comes first), and never one that
    looks like a promotion (an event, a livestream, a deal); related stories go to the category
    sections and quick links.
    """
    ranked = sorted(items, key=lambda i: (not i.get("lead"), -i["importance"], i["story_id"]))
    out: list[dict] = []
    used: dict[str, int] = {}
    leaders = [
        i
        for i in ranked
        if i.get("relevance", "core") == "core" and (i.get("lead") or not i.get("promotion"))
    ][:top]
    chosen = {id(i) for i in leaders}
    for item in leaders:
        out.append({**item, "section": "top"})
    rest = [i for i in ranked if id(i) not in chosen]
    quick = []
    for item in rest:
        category = item["category"]
        if used.get(category, 0) < quotas.get(category, 3):
            used[category] = used.get(category, 0) + 1
            out.append({**item, "section": "category"})
        else:
            quick.append(item)
    out.extend({**item, "section": "quick_link"} for item in quick[:quick_links])
    return out


def render_markdown(doc: Mapping[str, Any], category_labels: Mapping[str, str]) -> str:
    lab = LABELS[doc["language"]]
    items = doc["items"]
    lines = [f"# {lab['title']} — {doc['date']}", ""]
    outlets = sorted({c["source"] for i in items for c in i["citations"]})
    lines += [
        f"_{len(items)} {lab['stories']} {lab['from']} {len(outlets)} {lab['outlets']} · "
        f"{lab['window']} {doc['window']['start'][:16]} – {doc['window']['end'][:16]} UTC"
        f" · v{doc['version']}_",
        "",
    ]

    def block(number: int, item: Mapping[str, Any]) -> list[str]:
        flag = f" _({lab['unverified']})_" if item.get("verified") is False else ""
        out = [f"### {number}. {md_escape(item['title'])}{flag}", ""]
        if item.get("follow_up_of"):
            out += [f"_{lab['follow']}._", ""]
        if "instructions_to_ai" in item.get("flags", ()):
            out += [f"> ⚠ {lab['flag']}", ""]
        if item["summary"]:
            out += [md_escape(item["summary"]), ""]
        facts = [md_escape(f["text"]) for f in item["facts"]][:8]
        if facts:
            out.append(f"- **{lab['facts']}:** " + " · ".join(facts))
        cites = []
        for c in item["citations"]:
            url = safe_url(c["url"])
            name = md_escape(c["source"])
            when = (c["published"] or "")[:10]
            cites.append(f"[{name}](<{url}>) ({when})" if url else f"{name} ({when})")
        out += [f"- **{lab['sources']}:** " + " · ".join(cites), ""]
        return out

    number = 0
    top = [i for i in items if i["section"] == "top"]
    if top:
        lines += [f"## {lab['top']}", ""]
        for item in top:
            number += 1
            lines += block(number, item)
    categories: dict[str, list] = {}
    for item in items:
        if item["section"] == "category":
            categories.setdefault(item["category"], []).append(item)
    for category in sorted(categories, key=lambda c: -max(i["importance"] for i in categories[c])):
        lines += [f"## {md_escape(category_labels.get(category, lab['other']))}", ""]
        for item in categories[category]:
            number += 1
            lines += block(number, item)
    quick = [i for i in items if i["section"] == "quick_link"]
    if quick:
        lines += [f"## {lab['quick']}", ""]
        for item in quick:
            c = item["citations"][0]
            url = safe_url(c["url"])
            title = md_escape(item["title"])
            lines.append(
                f"- [{title}](<{url}>) — {md_escape(c['source'])}"
                if url
                else f"- {title} — {md_escape(c['source'])}"
            )
        lines.append("")
    footer = left_out_line(doc)
    if footer:
        lines += ["---", "", f"_{md_escape(footer)}_", ""]
    return "\n".join(lines).rstrip() + "\n"


def left_out_line(doc: Mapping[str, Any]) -> str:
    """The footer that says how many stories the topic filter left out (empty when none)."""
    n = (doc.get("left_out") or {}).get("off_topic", 0)
    if not n:
        return ""
    stories = "story" if n == 1 else "stories"
    return LABELS[doc["language"]]["left_out"].format(n=n, stories=stories, topic=doc.get("topic", "AI"))


_CSS = """body{font:16px/1.55 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;
color:#1d1d1f}
h1{font-size:1.8rem;margin-bottom:.2rem}h2{margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
h3{font-size:1.1rem;margin-bottom:.3rem}.meta{color:#666;font-size:.9rem}.facts,.sources{font-size:.92rem;color:#333}
.tag{font-size:.75rem;background:#eef;border-radius:.3rem;padding:.05rem .35rem;margin-left:.3rem}
a{color:#0b57d0;text-decoration:none}a:hover{text-decoration:underline}"""


def render_html(doc: Mapping[str, Any], category_labels: Mapping[str, str]) -> str:
    lab = LABELS[doc["language"]]
    e = html.escape

    def link(url: str, text: str) -> str:
        safe = safe_url(url)
        return f'<a href="{e(safe)}" rel="noopener nofollow">{e(text)}</a>' if safe else e(text)

    parts = [
        f'<!doctype html><html lang="{e(doc["language"])}"><head><meta charset="utf-8">',
        f"<title>{e(lab['title'])} — {e(doc['date'])}</title><style>{_CSS}</style></head><body>",
        f"<h1>{e(lab['title'])} — {e(doc['date'])}</h1>",
        f'<p class="meta">{len(doc["items"])} {e(lab["stories"])} · v{doc["version"]}</p>',
    ]
    section_titles = {"top": lab["top"], "quick_link": lab["quick"]}
    current = None
    for item in doc["items"]:
        heading = section_titles.get(item["section"]) or category_labels.get(item["category"], lab["other"])
        if heading != current:
            parts.append(f"<h2>{e(heading)}</h2>")
            current = heading
            if item["section"] == "quick_link":
                parts.append("<ul>")
        if item["section"] == "quick_link":
            c = item["citations"][0]
            parts.append(f"<li>{link(c['url'], item['title'])} — {e(c['source'])}</li>")
            continue
        tag = f'<span class="tag">{e(lab["unverified"])}</span>' if item.get("verified") is False else ""
        parts.append(f"<h3>{e(item['title'])}{tag}</h3>")
        if item.get("follow_up_of"):
            parts.append(f'<p class="meta">{e(lab["follow"])}</p>')
        if "instructions_to_ai" in item.get("flags", ()):
            parts.append(f'<p class="meta">⚠ {e(lab["flag"])}</p>')
        if item["summary"]:
            parts.append(f"<p>{e(item['summary'])}</p>")
        if item["facts"]:
            parts.append(
                f'<p class="facts"><b>{e(lab["facts"])}:</b> '
                + " · ".join(e(f["text"]) for f in item["facts"][:8])
                + "</p>"
            )
        cites = " · ".join(
            f"{link(c['url'], c['source'])} ({e((c['published'] or '')[:10])})" for c in item["citations"]
        )
        parts.append(f'<p class="sources"><b>{e(lab["sources"])}:</b> {cites}</p>')
    if current == lab["quick"]:
        parts.append("</ul>")
    footer = left_out_line(doc)
    if footer:
        parts.append(f'<hr><p class="meta">{e(footer)}</p>')
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
