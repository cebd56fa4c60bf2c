"""Write a brief: the JSON document (the contract), its arrangement, labels and escaping.

Feed text is untrusted: Markdown escapes every character that could become markup, HTML
escapes everything, and only http(s) links are ever rendered as links. The templates that
turn the document into Markdown and HTML are ``tasks/render.py``'s.
"""

from __future__ import annotations

import hashlib
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
        "discussion": "discussion",
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
        "questions": "Open questions",
        "default": "default",
        "sent_by": "Sent by dailybrief. Every claim cites the article it comes from.",
        "updated": "Updated: this is version {version}; it replaces version {previous} sent earlier.",
        "held": "Held for review: readers get this brief when someone runs 'brief approve --date {date}' "
        "or answers the questions in 'brief review'{deadline}.",
        "held_deadline": ", or at {at} without anyone",
        "unreviewed": "Nobody looked at this brief before it went out: the review deadline ({at}) passed.",
    },
    "zh": {
        "title": "AI 简报",
        "top": "头条",
        "quick": "快讯",
        "sources": "来源",
        "discussion": "讨论",
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
        "questions": "待确认的问题",
        "default": "默认",
        "sent_by": "由 dailybrief 发送。每条内容都引用其来源文章。",
        "updated": "更新：这是第 {version} 版，替换此前发送的第 {previous} 版。",
        "held": "待审阅：有人运行 'brief approve --date {date}' 或在 'brief review' "
        "中回答问题后，读者才会收到{deadline}。",
        "held_deadline": "；无人审阅时于 {at} 发送",
        "unreviewed": "此简报发送前无人审阅：审阅截止时间（{at}）已过。",
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


def left_out_line(doc: Mapping[str, Any]) -> str:
    """The footer that says how many stories the topic filter left out (empty when none)."""
    n = (doc.get("left_out") or {}).get("off_topic", 0)
    if not n:
        return ""
    stories = "story" if n == 1 else "stories"
    return LABELS[doc["language"]]["left_out"].format(n=n, stories=stories, topic=doc.get("topic", "AI"))
