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
from collections.abc import Set as AbstractSet
from typing import Any

from storage.brief import Brief, Item, Retracted, brief_dict
from storage.payloads import BriefCorrected, StoryRetracted

LABELS = {
    "en": {
        "title": "AI brief",
        "top": "Top stories",
        "quick": "Quick links",
        "research": "Research",
        "open_source": "Open source",
        "community": "Community discussion",
        "sources": "Sources",
        "discussion": "discussion",
        "facts": "Key facts",
        "follow": "Follow-up of an earlier story",
        "story": "story",
        "stories": "stories",
        "from": "from",
        "outlet": "outlet",
        "outlets": "outlets",
        "other": "Other news",
        "window": "news published",
        "unverified": "unverified",
        "translated": "(translated: {title})",
        "flag": "Its source text contains instructions addressed to AI systems; "
        "it is shown only as quoted data.",
        "left_out": "{n} {stories} off the topic ({topic}) left out.",
        "questions": "Open questions",
        "default": "default",
        "sent_by": "Sent by dailybrief. Every claim cites the article it comes from.",
        "updated": "Updated since the version sent earlier: {what}.",
        "updated_plain": "Updated: this replaces the version sent earlier.",
        "changed_retracted": "retracted “{title}”",
        "changed_added": "added “{title}”",
        "changed_removed": "took out “{title}”",
        "changed_headline": "corrected the headline of “{title}”",
        "changed_summary": "corrected the summary of “{title}”",
        "changed_order": "changed the order of the stories",
        "changed_more": "and {n} more changes",
        "changed_join": "; ",
        "held": "Held for review: readers get this brief when an editor approves it on the desk's Hold "
        "page{desk} (or runs 'brief approve --date {date}'){deadline}; the questions below are answered "
        "on the desk's Questions page.",
        "held_deadline": ", or at {at} without anyone",
        "unreviewed": "Nobody looked at this brief before it went out: the review deadline ({at}) passed.",
        "subject_updated": "Updated: {title}",
        "subject_review": "For review: {title} ({n} open {questions})",
        "subject_unreviewed": " (not reviewed)",
        "correction": "Correction:",
        "corrected_title": "the headline read “{previous}”.",
        "corrected_summary": "the summary read “{previous}”.",
        "stop": ".",
        "retracted": "Retracted",
        "retracted_item": "“{title}” ({section}) was retracted: {note}",
    },
    "zh": {
        "title": "AI 简报",
        "top": "头条",
        "quick": "快讯",
        "research": "研究",
        "open_source": "开源项目",
        "community": "社区讨论",
        "sources": "来源",
        "discussion": "讨论",
        "facts": "要点",
        "follow": "后续报道",
        "story": "条新闻",
        "stories": "条新闻",
        "from": "来自",
        "outlet": "个来源",
        "outlets": "个来源",
        "other": "其他",
        "window": "发布时间",
        "unverified": "未核实",
        "translated": "（译文：{title}）",
        "flag": "原文含有针对 AI 系统的指令，仅作为引用数据显示。",
        "left_out": "{n} 条与主题（{topic}）无关的新闻未收录。",
        "questions": "待确认的问题",
        "default": "默认",
        "sent_by": "由 dailybrief 发送。每条内容都引用其来源文章。",
        "updated": "更新：与此前发送的版本相比，{what}。",
        "updated_plain": "更新：此版本替换此前发送的版本。",
        "changed_retracted": "撤回了“{title}”",
        "changed_added": "增加了“{title}”",
        "changed_removed": "移除了“{title}”",
        "changed_headline": "更正了“{title}”的标题",
        "changed_summary": "更正了“{title}”的摘要",
        "changed_order": "调整了新闻顺序",
        "changed_more": "另有 {n} 处改动",
        "changed_join": "；",
        "held": "待审阅：编辑在审阅台的 Hold 页面{desk}批准（或运行 'brief approve --date {date}'）后，"
        "读者才会收到{deadline}。下列问题在审阅台的 Questions 页面回答。",
        "held_deadline": "；无人审阅时于 {at} 发送",
        "unreviewed": "此简报发送前无人审阅：审阅截止时间（{at}）已过。",
        "subject_updated": "更新：{title}",
        "subject_review": "待审阅：{title}（{n} 个待确认的问题）",
        "subject_unreviewed": "（未经审阅）",
        "correction": "更正：",
        "corrected_title": "原标题为“{previous}”。",
        "corrected_summary": "原摘要为“{previous}”。",
        "stop": "。",
        "retracted": "已撤回",
        "retracted_item": "“{title}”（{section}）已撤回：{note}",
    },
}


def apply_editor_acts(
    document: Brief,
    corrections: Mapping[str, Mapping[str, BriefCorrected]],
    retractions: Mapping[str, StoryRetracted],
    silent: AbstractSet[tuple[str, str]] = frozenset(),
    first_seen: Mapping[tuple[str, str], str] | None = None,
) -> Brief:
    """The brief with people's corrections and retractions applied (pure).

    ``corrections``: story id -> field (``title``, ``summary``) -> the latest ``brief.corrected``
    payload; ``retractions``: story id -> the ``story.retracted`` payload. A corrected item shows the
    new text and a visible ``correction`` line; a retracted item leaves, and ``retracted`` keeps its
    title, the section it was in and the note. A brief no one corrected comes back as it was, so
    its content hash, and its version, stay the same.

    ``silent``: (story, field) corrected before readers had the brief (held for review): the new
    text without a correction line, since no reader saw the old. ``first_seen``: (story, field) ->
    the text readers first had when that came from such a correction; a later line names it.
    """
    seen = first_seen or {}
    lab = {**LABELS["en"], **LABELS[document.language]}
    items: list[Item] = []
    retracted: list[Retracted] = []
    for item in document.items:
        story = item.story_id
        if story in retractions:
            act = retractions[story]
            retracted.append(Retracted(story_id=story, title=act.title, section=item.section, note=act.note))
            continue
        fixed = corrections.get(story)
        if not fixed:
            items.append(item)
            continue
        lines: list[str] = []
        changed: dict[str, Any] = {}
        for field_ in ("title", "summary"):
            fix = fixed.get(field_)
            if fix is None:
                continue
            changed[field_] = fix.value
            if (story, field_) in silent:
                continue
            previous = seen.get((story, field_), fix.previous)
            if field_ == "summary":  # what readers had, quoted as a headline is; a long one shortened
                previous = short_summary(previous, limit=200)
            said = lab[f"corrected_{field_}"].format(previous=previous)
            lines.append(sentence(said, keep_case=not lines, stop=lab["stop"]))
            if fix.note and fix.note.strip():
                lines.append(sentence(fix.note, keep_case=False, stop=lab["stop"]))
        if "title" in fixed:
            changed["translated_title"] = None  # the translation was of the old headline
        if lines:
            gap = "" if lab["correction"].endswith("：") else " "  # no space after a full-width colon
            changed["correction"] = f"{lab['correction']}{gap}{' '.join(lines)}"
        items.append(item.model_copy(update=changed))
    if not corrections and not retractions:
        return document
    return document.model_copy(update={"items": items, "retracted": retracted or document.retracted})


def sentence(text: str, *, keep_case: bool, stop: str) -> str:
    """``text`` as a sentence of a correction line: capitalised (unless it follows "Correction:"),
    ended with ``stop`` when it has no closing punctuation of its own."""
    said = re.sub(r"\s+", " ", text).strip()
    if not keep_case:
        said = said[:1].upper() + said[1:]
    ends = re.sub(r"[”’\"')»）]+$", "", said)
    return said if ends[-1:] in ".!?…。！？" else f"{said}{stop}"


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


def content_hash(document: Brief) -> str:
    body = {k: v for k, v in brief_dict(document).items() if k != "version"}
    return hashlib.blake2b(json.dumps(body, sort_keys=True).encode(), digest_size=12).hexdigest()


def item_language(language: str, brief_language: str) -> dict[str, str]:
    """``{"language": …}`` for an item in another language than the brief's (its title's, known
    from the source or detected per item); nothing when it is the brief's or unknown, so the
    briefs of sources in the brief's language are what they were."""
    return {} if language in ("und", brief_language) else {"language": language}


# The kinds of source that report news; a story none of them reports has a section of its kind.
NEWS_KINDS = frozenset({"news", "lab", "digest"})
# The sections a story's kinds give it, in reading order (after the category sections).
KIND_SECTIONS = ("research", "open_source", "community")
KIND_SECTION_SIZE = 5  # stories per kind section; the rest join the quick links
MANY_SOURCES = 2  # sources that make a story without a news report a candidate to lead


def kind_section(item: Item) -> str | None:
    """The section a story belongs to by what reported it, or None when a news, lab or digest
    source reports it: ``research`` for a paper, ``open_source`` for a repository, ``community``
    for a story known only from a community source (Hacker News). A citation without a
    ``kind`` is a news or lab article."""
    kinds = {c.named_kind for c in item.citations}
    if not kinds or kinds & NEWS_KINDS:
        return None
    if "papers" in kinds:
        return "research"
    return "open_source" if "repos" in kinds else "community"


def arrange(items: Sequence[Item], *, top: int, quotas: Mapping[str, int], quick_links: int) -> list[Item]:
    """Top stories first, then by category within quotas, then the sections of the stories no
    news source reports (research, open source, community discussion), then quick links; each
    gets a ``section``.

    Only core stories lead (a story a person marked to lead comes first), and never one that
    looks like a promotion (an event, a livestream, a deal); related stories go to the category
    sections and quick links. A discussion (a Hacker News story) leads on its importance, as a
    news report does: the crowd's attention is one of its features. A paper or a repository
    leads only when ``MANY_SOURCES`` sources report it; the others go to their kind's section, up to
    ``KIND_SECTION_SIZE`` each. A day of news and lab sources only is arranged as before kinds.
    """
    ranked = sorted(items, key=lambda i: (not i.lead, -i.importance, i.story_id))
    homes = {id(i): kind_section(i) for i in ranked}

    def may_lead(item: Item) -> bool:
        widely = len({c.source for c in item.citations}) >= MANY_SOURCES
        # a story the crowd discusses leads on its importance, as a news report does
        return homes[id(item)] in (None, "community") or bool(item.lead) or widely

    def placed_in(item: Item, section: str) -> Item:
        return item.model_copy(update={"section": section})

    out: list[Item] = []
    used: dict[str, int] = {}  # stories per category
    placed: dict[str, int] = {}  # stories per kind section
    leaders = [i for i in ranked if i.core and (i.lead or not i.promotion) and may_lead(i)][:top]
    chosen = {id(i) for i in leaders}
    for item in leaders:
        out.append(placed_in(item, "top"))
    rest = [i for i in ranked if id(i) not in chosen]
    quick = []
    for item in rest:
        home = homes[id(item)]
        if home is not None:
            if placed.get(home, 0) < KIND_SECTION_SIZE:
                placed[home] = placed.get(home, 0) + 1
                out.append(placed_in(item, home))
            else:
                quick.append(item)
            continue
        category = item.category
        if used.get(category, 0) < quotas.get(category, 3):
            used[category] = used.get(category, 0) + 1
            out.append(placed_in(item, "category"))
        else:
            quick.append(item)
    out.extend(placed_in(item, "quick_link") for item in quick[:quick_links])
    return out


def left_out_line(doc: Brief) -> str:
    """The footer that says how many stories the topic filter left out (empty when none).

    Readers' words only: how an operator finds out why (``brief replay --projection scores``)
    is the run report's to say (``tasks/steps/report.py``), never a reader's."""
    n = doc.left_out.off_topic
    if not n:
        return ""
    stories = "story" if n == 1 else "stories"
    return LABELS[doc.language]["left_out"].format(n=n, stories=stories, topic=doc.topic)
