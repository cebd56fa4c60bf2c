"""Normalise feed items: canonical URL, clean text from HTML, UTC publish time, language, content hash.

Plain functions; feed text is untrusted data and is only ever turned into plain text here.
"""

from __future__ import annotations

import functools
import hashlib
import html
import re
import unicodedata
from calendar import timegm
from datetime import UTC, datetime
from html.parser import HTMLParser
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

TRACKING_PARAMS = {
    "fbclid",
    "gclid",
    "dclid",
    "msclkid",
    "mc_cid",
    "mc_eid",
    "igshid",
    "yclid",
    "_hsenc",
    "_hsmi",
    "ref_src",
    "cmpid",
    "ncid",
    "guccounter",
    "guce_referrer",
    "guce_referrer_sig",
}
DEFAULT_PORTS = {"http": 80, "https": 443}
CITED_TRACKING = frozenset({"fbclid", "gclid", "mc_cid", "mc_eid"})  # and every utm_*


def without_tracking(url: str) -> str:
    """A link as published less its tracking parameters (``utm_*``, ``fbclid``, ``gclid``, ``mc_cid``,
    ``mc_eid``): everything else (order, case, other parameters, the fragment) byte for byte."""
    head, hash_, fragment = url.partition("#")
    base, question, query = head.partition("?")
    if not question:
        return url
    pairs = query.split("&")
    kept = [p for p in pairs if not _is_tracking(p.split("=", 1)[0])]
    if len(kept) == len(pairs):
        return url
    rest = "&".join(kept)
    return base + (f"?{rest}" if rest else "") + hash_ + fragment


_AUTHORITY = re.compile(
    r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*)://(?P<authority>[^/?#]*)(?P<rest>.*)$", re.DOTALL
)
_HOST_PORT = re.compile(r"^(?P<host>\[[^\]]*\]|[^:]*)(?::(?P<port>\d*))?$")


def reader_link(url: str) -> str:
    """The link a reader is shown: as published, with its host lower-cased, a default port (or an empty
    one) left out, and no fragment or tracking parameters; the scheme, user, path and the other
    parameters (their order and case) byte for byte."""
    head = without_tracking(url.partition("#")[0])
    match = _AUTHORITY.match(head)
    if match is None:
        return head
    user, at, host_port = match["authority"].rpartition("@")
    parts = _HOST_PORT.match(host_port)
    if parts is None:
        return head
    port = parts["port"]
    default = port is not None and (not port or DEFAULT_PORTS.get(match["scheme"].lower()) == int(port))
    netloc = parts["host"].lower() + ("" if port is None or default else f":{port}")
    return f"{match['scheme']}://{user}{at}{netloc}{match['rest']}"


def _is_tracking(key: str) -> bool:
    from urllib.parse import unquote_plus

    name = unquote_plus(key).strip().lower()
    return name.startswith("utm_") or name in CITED_TRACKING


@functools.lru_cache(maxsize=1 << 14)  # a backfill reads each archive's links several times
def canonical_url(url: str) -> str:
    """Lower-case scheme and host, no default port, no tracking parameters, no fragment, no trailing slash."""
    url = url.strip()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    netloc = host if port is None or DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith("utm_") and k.lower() not in TRACKING_PARAMS
    ]
    path = re.sub(r"/+$", "", parts.path) or ""
    return urlunsplit((scheme, netloc, path, urlencode(sorted(query)), ""))


class _TextExtractor(HTMLParser):
    SKIP: ClassVar[set[str]] = {
        "script",
        "style",
        "iframe",
        "noscript",
        "object",
        "embed",
        "template",
        "svg",
        "head",
    }
    BLOCK: ClassVar[set[str]] = {
        "p",
        "div",
        "br",
        "li",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "blockquote",
        "section",
        "figure",
    }

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag in self.SKIP:
            self.skipping += 1
        elif tag in self.BLOCK:
            self.parts.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIP and self.skipping:
            self.skipping -= 1
        elif tag in self.BLOCK:
            self.parts.append(" ")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


def plain_line(text: str) -> str:
    """Text a person typed, as one line readers may be shown: without control and format
    characters (bidirectional overrides and isolates, zero-width ones), as feed text is cleaned
    (``clean_text``), and with its runs of white space made one space."""
    kept = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C" or ch in "\n\t ")
    return " ".join(kept.split())


def clean_text(markup: str | None) -> str:
    """Visible text of an HTML fragment: no tags, scripts or styles; entities decoded; spaces collapsed."""
    if not markup:
        return ""
    parser = _TextExtractor()
    try:
        parser.feed(markup)
        parser.close()
        text = "".join(parser.parts)
    except Exception:  # a broken fragment still yields its text, never its markup
        text = re.sub(r"<[^>]*>", " ", markup)
    text = html.unescape(text)
    text = "".join(ch for ch in text if unicodedata.category(ch)[0] != "C" or ch in "\n\t ")
    return re.sub(r"\s+", " ", text).strip()


def published_utc(entry: Any) -> datetime | None:
    """The entry's publish (else update) time in UTC; feedparser already read the zone (none: UTC)."""
    for key in ("published_parsed", "updated_parsed", "created_parsed"):
        value = entry.get(key)
        if value:
            try:
                return datetime.fromtimestamp(timegm(value), tz=UTC)
            except (OverflowError, ValueError, TypeError):
                continue
    return None


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_DUTCH = re.compile(r"\b(de|het|een|van|voor|niet|zijn|wordt|bij|naar|ook)\b", re.IGNORECASE)
_ENGLISH = re.compile(r"\b(the|and|of|to|with|for|is|in|on|that)\b", re.IGNORECASE)


def guess_language(text: str, declared: str | None = None) -> str:
    """'zh', 'en', 'nl' … from the feed's declared language, else from the text itself."""
    if declared:
        code = declared.strip().lower().replace("_", "-").split("-")[0]
        if code.isalpha() and 2 <= len(code) <= 3:
            return code
    if not text:
        return "und"
    if len(_CJK.findall(text)) >= max(2, len(text) // 10):
        return "zh"
    dutch, english = len(_DUTCH.findall(text)), len(_ENGLISH.findall(text))
    if dutch > english and dutch >= 2:
        return "nl"
    return "en" if english else "und"


@functools.lru_cache(maxsize=1 << 13)  # a backfill reads each archive's articles several times
def content_hash(title: str, text: str) -> str:
    """Hash of what the article says (case and spacing ignored), to spot copies under other URLs."""
    norm = re.sub(r"\s+", " ", f"{title}\n{text}".casefold()).strip()
    return hashlib.blake2b(norm.encode(), digest_size=16).hexdigest()


def article_id(url: str, source: str, *, position: int | None = None) -> str:
    """One article per outlet and canonical URL: a syndicated copy in another feed is its own
    article (the outlet that carried it), and exact dedup joins the two by their URL. A story
    of a digest is one article per ``position`` in it (its URL's fragment is not enough)."""
    key = f"{source}\x1f{canonical_url(url)}" + (f"#{position}" if position else "")
    return "art-" + hashlib.blake2b(key.encode(), digest_size=10).hexdigest()
