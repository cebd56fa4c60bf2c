"""What a headline names, and whether another text mentions it: the evidence dedup weighs
beside embeddings.

- **Organisations** (a closed list): a company a title names is the company the story is
  about; a page on the company's own site (``openai.com``) names it too.
- **Names**: the words a title uses as names. A Chinese title's Latin words; in a
  sentence-case title (``Google's Gemini panicked when playing Pokémon``, or any Dutch
  one) the capitalised words after a clause's first; in every title, words written as names
  whatever the case (``AirPods``, ``iOS``, ``H20``, ``Watch8``, acronyms) and versioned
  names (``Gemma 3``, ``GPT-5.4``). A title-case headline (``Hackers Hijacked Google's Gemini
  AI``) capitalises every word, so only the last kinds count there. An organisation is not a
  name here: a shared company is not a shared event.
- **Versions**: a name followed by a number (``Gemini 2.5``, ``RTX 5060``, ``iOS 26``):
  one product line at two versions is two products.

A text *mentions* a name when it holds it ignoring case, accents, spaces and hyphens
(``Watch 8`` mentions ``Watch8``, ``Pokemon`` mentions ``Pokémon``).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from urllib.parse import urlsplit

ORGANISATIONS = (
    "OpenAI",
    "Anthropic",
    "Google",
    "DeepMind",
    "Microsoft",
    "Meta",
    "Amazon",
    "AWS",
    "Apple",
    "Nvidia",
    "NVIDIA",
    "Tesla",
    "xAI",
    "Mistral",
    "Cohere",
    "Hugging Face",
    "IBM",
    "Intel",
    "AMD",
    "Perplexity",
    "Cloudflare",
    "Samsung",
    "Baidu",
    "Alibaba",
    "Tencent",
    "ByteDance",
    "Oracle",
    "Salesforce",
    "Azure",
    "NASA",
    "SpaceX",
    "Netflix",
    "Uber",
    "Waymo",
    "GitHub",
    "Reddit",
    "Qualcomm",
    "TSMC",
    "Huawei",
    "Xiaomi",
    "DOGE",
    "FTC",
    "SEC",
    "Windows",
    "Stability AI",
    "Midjourney",
    "Databricks",
    "Snowflake",
    "Scale AI",
    "Character.AI",
    "Inflection",
    "Adobe",
    "Spotify",
    "TikTok",
    "YouTube",
    "Instagram",
    "WhatsApp",
    "LinkedIn",
    "Palantir",
    "Anduril",
)
_ORG_PATTERNS = [(o, re.compile(r"(?<![A-Za-z])" + re.escape(o) + r"(?![A-Za-z])")) for o in ORGANISATIONS]
_ORG_KEYS = {re.sub(r"[^a-z0-9]", "", o.lower()): o.lower() for o in ORGANISATIONS}

_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2212"})
_CLAUSE = re.compile(r"\s-+\s|\s-+|-+\s|[:;|!?()\[\]\"“”‘«»「」【】]")
_WORD = re.compile(r"[^\W_](?:[\w'’.+]*[^\W_])?")
_LATIN_WORD = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9'’.+]*[A-Za-z0-9])?")
_VERSIONED = re.compile(  # a capitalised word, then a number: "Gemini 2.5", "GPT-4o", "Watch8"
    r"(?<![A-Za-z0-9.])(?P<line>[A-Za-z]*[A-Z][A-Za-z]*)[ -]?"
    r"(?P<version>\d+(?:\.\d+)*[a-z]?)(?![A-Za-z0-9]|\.\d)"
)
_CJK = re.compile(r"[\u3400-\u9fff]")
# words capitalised for their grammar, not as names, or that every headline of the field uses
_COMMON_WORDS = (
    "ai api app apps ceo cto cfo us uk eu un the and of for in to a an vs pro new how why what "
    "with on at by from is are was its it this that your you we i my our"
)
_MONTH_WORDS = (
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec"
)
COMMON = frozenset(_COMMON_WORDS.split())
MONTHS = frozenset(_MONTH_WORDS.split())


@functools.lru_cache(maxsize=1 << 16)
def fold(text: str) -> str:
    """Lower case without accents, spaces or punctuation: what a mention compares."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_DASHES).casefold())
    return "".join(c for c in decomposed if c.isalnum() and not unicodedata.combining(c))


def plain(text: str) -> str:
    """One spelling of a text's names: full-width letters and digits as ASCII, a non-breaking space
    or hyphen as the plain one (``ＧＬＭ－５`` and ``GLM\u20115`` are ``GLM-5``)."""
    return unicodedata.normalize("NFKC", text).translate(_DASHES)


def organisations(text: str) -> frozenset[str]:
    # a name's pattern matches only where the text holds the name as written: that substring test
    # first (most texts name few of the organisations), the search only then
    return frozenset(name for name, pattern in _ORG_PATTERNS if name in text and pattern.search(text))


@functools.lru_cache(maxsize=1 << 16)
def caseblind_organisations(text: str) -> frozenset[str]:
    """Known organisations a text names, in lower case, however it capitalises them."""
    lowered = text.lower()
    return frozenset(o.lower() for o in ORGANISATIONS if o.lower() in lowered)


def host_organisations(url: str) -> frozenset[str]:
    """Organisations whose own site a link is on (``openai.com``, ``blog.google``), in lower case."""
    host = (urlsplit(url).hostname or "").lower()
    return frozenset(_ORG_KEYS[label] for label in host.split(".") if label in _ORG_KEYS)


_ORG_IN_PATH = [
    (
        o,
        re.compile(
            r"(?<![a-z0-9])"
            + r"[ _-]?".join(map(re.escape, re.findall(r"[a-z0-9]+", o.lower())))
            + r"(?![a-z0-9])"
        ),
    )
    for o in ORGANISATIONS
]


@functools.lru_cache(maxsize=1 << 14)
def path_organisations(url: str) -> frozenset[str]:
    """Organisations a link's path names in a headline's words (``/2025/08/openai-announces-deal-…``):
    a site's path often carries the headline it first had, in lower case between hyphens."""
    path = urlsplit(url).path.lower()
    slugs = " ".join(part for part in path.split("/") if "-" in part or "_" in part)
    return frozenset(o for o, pattern in _ORG_IN_PATH if slugs and pattern.search(slugs))


def is_title_case(title: str) -> bool:
    """Most longer words after a clause's first capitalised, as English headline style writes them."""
    words = [
        w
        for clause in _CLAUSE.split(title.translate(_DASHES))
        for w in re.findall(r"[^\W\d_][\w'’]*", clause)[1:]
        if len(w) >= 4
    ]
    return len(words) >= 2 and sum(w[0].isupper() for w in words) * 3 >= len(words) * 2


def _written_as_name(word: str) -> bool:
    """Capitals inside the word, letters with digits, or an acronym: a name in any headline style."""
    letters = [c for c in word if c.isalpha()]
    return bool(letters) and (
        (any(c.isupper() for c in word[1:]) and any(c.islower() for c in word))
        or any(c.isdigit() for c in word)
        or (len(letters) >= 2 and all(c.isupper() for c in letters))
    )


def _versions(text: str) -> list[tuple[str, str, tuple[int, int]]]:
    out = []
    for m in _VERSIONED.finditer(text):
        line = m.group("line").lower()
        if len(line) >= 2 and line not in MONTHS and line not in COMMON:
            out.append((line, m.group("version").lower(), m.span()))
    return out


def release(version: str) -> str:
    """A version as its release: ``141.0`` is ``141``, ``2.5.0`` is ``2.5``."""
    parts = version.split(".")
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return ".".join(parts)


def releases(found: frozenset[tuple[str, str]]) -> frozenset[tuple[str, str]]:
    """(product line, version) pairs with each version read as its release."""
    return frozenset((line, release(version)) for line, version in found)


@functools.lru_cache(maxsize=1 << 16)
def versions(text: str) -> frozenset[tuple[str, str]]:
    """(product line, version) pairs a text names: ``Gemini 2.5`` is ('gemini', '2.5')."""
    return frozenset((line, version) for line, version, _ in _versions(plain(text)))


@functools.lru_cache(maxsize=1 << 16)
def title_names(title: str, english: bool = True) -> frozenset[str]:
    """The names a headline uses besides its versions and organisations, as ``fold`` writes them.

    ``english``: the headline may be in English title case (other languages write sentence case).
    """
    text = plain(title)
    spans = [span for *_, span in _versions(text)]
    cjk = bool(_CJK.search(text))
    sentence_case = not cjk and not (english and is_title_case(text))
    words = _LATIN_WORD if cjk else _WORD
    names = set()
    for clause in _CLAUSE.split(text):
        offset = text.find(clause)
        for k, m in enumerate(words.finditer(clause)):
            start, end = offset + m.start(), offset + m.end()
            if any(a < end and start < b for a, b in spans):
                continue  # part of a version
            for part in re.split(r"-", m.group().strip("'’.")):
                key = fold(re.sub(r"['’]s$", "", part))
                if len(key) < 2 or key in COMMON or key in MONTHS or key.isdigit() or key in _ORG_KEYS:
                    continue
                latin = part.isascii() and part[:1].isalpha()
                if (
                    (cjk and latin)
                    or _written_as_name(part)
                    or (sentence_case and k > 0 and part[:1].isupper())
                ):
                    names.add(key)
    return frozenset(names)


@functools.lru_cache(maxsize=1 << 12)
def written_names(text: str) -> frozenset[str]:
    """The names a text writes as names in any language and headline style, as ``fold`` writes
    them: its organisations, its versioned names (``Gemini 2.5`` is ``gemini25``), its words
    written as names (``AirPods``, ``H20``, acronyms) and, in a Chinese text, every Latin word.
    Capitalised words alone are not among them: a language's grammar capitalises those."""
    text = text.translate(_DASHES)
    found = {fold(o) for o in organisations(text)}
    found |= {fold(line + version) for line, version, _ in _versions(text)}
    cjk = bool(_CJK.search(text))
    for m in (_LATIN_WORD if cjk else _WORD).finditer(text):
        for part in re.split(r"-", m.group().strip("'’.")):
            key = fold(re.sub(r"['’]s$", "", part))
            if len(key) < 2 or key in COMMON or key in MONTHS or key[:1].isdigit():
                continue  # a number with its unit (``7B``, ``120M``) is a number, not a name
            if (cjk and part.isascii() and part[:1].isalpha()) or _written_as_name(part):
                found.add(key)
    return frozenset(found)


def mentions(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` (a ``fold``-ed name) ignoring case, accents, spaces and hyphens."""
    return name in fold(text)
