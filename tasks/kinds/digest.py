"""``digest``: one entry bundles several stories (aibase's "AI日报：A；B；C").

The title names the lead stories; the summary carries numbered text ("1、…", "8、…") for only
some of them, and spliced: one number's text may run into another story's. Each story named
in the title becomes an article with its own headline and only the sentences that name what
it names (most clearly of all the stories); a story no sentence names gets no summary rather
than another story's. Each cites the digest link with its position (``…/26342#2``). An entry
whose title names fewer than two stories (none separated by "；" or ";") stays one article,
with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from tasks.kinds.base import Article, Evidence, FeedInfo, as_written, entry_link, entry_text, host
from tasks.normalize import clean_text

UNSPLIT = "DIGEST_UNSPLIT"
_TITLE = re.compile(r"^(?:[^：:]{1,30}[：:])?\s*(?P<stories>.+)$")  # "AI日报：", "Daily digest: "
_SEPARATOR = re.compile(r"\s*[；;]\s*")
_SENTENCE_END = re.compile(r"(?<=[。！？!?])|(?=(?<![\d.])\d{1,2}、)")
_NUMBER = re.compile(r"^\s*\d{1,2}、\s*")
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9.\-]*[A-Za-z0-9]|[A-Za-z]\d+")
_HAN = re.compile(r"[\u3400-\u9fff]+")
# words every story's headline uses: they say nothing of which story a sentence is about
_COMMON_LATIN = {"ai", "aigc", "agent", "app"}
_COMMON_HAN_WORDS = (
    "发布 上线 推出 正式 开源 模型 大模 首个 首款 功能 全球 宣布 测试 内测 公测 开启 支持 接入 "
    "智能 人工 工智 技术 产品 用户 行业 平台 助手 最新 新款 系列 实现 全新 最强 即将 专属 一键 面向 重磅 升级"
)
_COMMON_HAN = set(_COMMON_HAN_WORDS.split())


def parse(entry: Mapping[str, Any], feed: FeedInfo) -> list[Article]:
    whole = as_written(entry, feed)
    if not whole:
        return []
    digest = whole[0]
    headlines = stories(digest.title)
    if len(headlines) < 2:
        reason = f"{UNSPLIT}: the title names no list of stories ({digest.title[:80]!r})"
        return [Article(**{**digest.__dict__, "outlet": outlet(digest.url), "warning": reason})]
    text = clean_text(entry_text(entry))
    belongs = assign(sentences(text), headlines)
    link = entry_link(entry)
    return [
        Article(
            url=f"{link}#{k}",
            title=headline,
            summary="".join(belongs[k]),
            published=digest.published,
            tags=digest.tags,
            outlet=outlet(link),
            position=k,
            evidence=Evidence(digest_position=k),
        )
        for k, headline in enumerate(headlines, start=1)
    ]


def stories(title: str) -> list[str]:
    """The stories a digest's title names, in order (none when it is not a digest's title)."""
    found = _TITLE.match(title.strip())
    if not found:
        return []
    return [s for s in _SEPARATOR.split(found.group("stories").strip()) if s]


def sentences(text: str) -> list[str]:
    """The summary's sentences, each without its leading number."""
    return [_NUMBER.sub("", s).strip() for s in _SENTENCE_END.split(text) if _NUMBER.sub("", s).strip()]


def assign(lines: list[str], headlines: list[str]) -> dict[int, list[str]]:
    """Each sentence to the one story most of whose names it holds.

    A sentence holding most names of two stories (a comparison), or only one name of several
    (an OpenClaw ranking under "OpenClaw supports GPT-5.4"), belongs to none.
    """
    names = [_names(h) for h in headlines]
    full = [_score(h, n) for h, n in zip(headlines, names, strict=True)]
    out: dict[int, list[str]] = {k: [] for k in range(1, len(headlines) + 1)}
    for line in lines:
        scores = [_score(line, n) for n in names]
        owners = [k for k, score in enumerate(scores, start=1) if score >= 2 and 2 * score > full[k - 1]]
        if len(owners) == 1:
            out[owners[0]].append(line)
    return out


def outlet(url: str) -> str:
    """``aibase`` for ``https://news.aibase.com/…``: the site's own name."""
    labels = host(url).split(".")
    return labels[-2] if len(labels) >= 2 else host(url)


def _names(headline: str) -> tuple[set[str], set[str]]:
    latin = {w.casefold() for w in _LATIN.findall(headline)} - _COMMON_LATIN
    han = {run[i : i + 2] for run in _HAN.findall(headline) for i in range(len(run) - 1)} - _COMMON_HAN
    return latin, han


def _score(line: str, names: tuple[set[str], set[str]]) -> int:
    """Two for each Latin name the sentence holds (spaces ignored), one for each Han word."""
    latin, han = names
    flat = re.sub(r"\s+", "", line).casefold()
    hits = sum(2 for w in latin if w in flat)
    return hits + sum(1 for w in han if w in flat)
