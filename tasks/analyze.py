"""Deterministic, offline analysis of a story: category, facts with anchors, importance.

Every fact (organisation, person, product/model, money amount, date) carries an anchor:
the article, the field (title or summary) and the character span it was read from, so the
brief can cite it and the fact-check can find it again.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from tasks.dedup import ORGANISATIONS, Item

# -- facts -----------------------------------------------------------------------------

_ORG = re.compile(
    r"(?<![A-Za-z])("
    + "|".join(re.escape(o) for o in sorted(ORGANISATIONS, key=len, reverse=True))
    + r")(?![A-Za-z])"
)
PRODUCT = re.compile(
    r"(?<![\w-])("
    r"GPT-[0-9][\w.]*(?:[- ](?:mini|nano|pro|turbo))?|gpt-oss(?:-\d+b)?|o[1-9](?:-(?:mini|pro|preview))?"
    r"|Claude(?: (?:Opus|Sonnet|Haiku))? ?\d(?:\.\d)?"
    r"|Gemini(?: \d(?:\.\d)?)?(?: (?:Pro|Flash|Ultra|Nano)(?:-Lite)?)?"
    r"|Llama ?\d[\w.]*|Grok ?\d[\w.]*|ChatGPT(?: (?:Enterprise|Plus|Pro|Team|agent))?"
    r"|Copilot|Codex|Sora|DALL-E ?\d?"
    r"|PyTorch ?\d[\d.]*|TensorFlow ?\d?[\d.]*|Windows ?1[01]"
    r"|[A-Z][a-z]+-\d+(?:\.\d+)?[A-Za-z]*"  # Pippin-2, Qwen-3 …
    r")(?![\w-])"
)
_HYPHENS = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2012": "-"})  # "GPT‑5.4" as "GPT-5.4"
_RELEASE = re.compile(
    r"(?<![\w-])("
    r"GPT-\d[\w.]*[- ](?:Mini|Nano|Pro|Turbo)"  # GPT-5.4 Mini
    r"|[A-Z]{2,}[a-z]*-\d+(?:\.\d+)*(?:-[A-Z][A-Za-z]+)*"  # GLM-5-Turbo, GLM-4.7-Flash
    r")(?![\w-])"
)


def versioned(names: Sequence[str]) -> re.Pattern[str] | None:
    """Any of ``names`` (Latin script) with a version number: ``Genie 3``, ``Qwen3.5``, ``DeepSeek V4``."""
    latin = sorted((n for n in names if n.isascii()), key=len, reverse=True)
    if not latin:
        return None
    alternatives = "|".join(re.escape(n) for n in latin)
    return re.compile(rf"(?<![A-Za-z0-9-])((?:{alternatives})[ -]?[A-Za-z]?\d+(?:\.\d+)*)(?![A-Za-z0-9.-])")


def release_names(title: str, named: re.Pattern[str] | None = None) -> set[str]:
    """The model and product names a title gives (lower case), for telling a launch from news
    about a known product: ``PRODUCT``'s names, versioned names it leaves out (``GLM-5-Turbo``,
    ``GPT‑5.4 Mini`` with a non-breaking hyphen) and the topic's names with a version (``named``,
    from ``versioned``)."""
    text = title.translate(_HYPHENS)
    patterns = (PRODUCT, _RELEASE) if named is None else (PRODUCT, _RELEASE, named)
    return {m.group(1).lower() for pattern in patterns for m in pattern.finditer(text)}


_PERSON = re.compile(
    r"(?:(?:CEO|CTO|founder|chief|president|director|minister|senator|judge|researcher|boss)\s+|said\s+)"
    r"((?:[A-Z][a-z]+|[A-Z]\.)(?:\s[A-Z][a-z]+){1,2})"
    r"|((?:[A-Z][a-z]+)(?:\s[A-Z][a-z]+){1,2}),\s(?:the\s)?(?:CEO|founder|chief|head|president|director)"
)
_SCALE = {
    "k": 1e3,
    "thousand": 1e3,
    "m": 1e6,
    "mn": 1e6,
    "million": 1e6,
    "b": 1e9,
    "bn": 1e9,
    "billion": 1e9,
    "t": 1e12,
    "trillion": 1e12,
    "千": 1e3,
    "万": 1e4,
    "百万": 1e6,
    "千万": 1e7,
    "亿": 1e8,
    "千亿": 1e11,
    "万亿": 1e12,
}
_CURRENCY_SIGN = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "CNY"}
_CURRENCY_WORD = {
    "dollars": "USD",
    "dollar": "USD",
    "usd": "USD",
    "euros": "EUR",
    "eur": "EUR",
    "pounds": "GBP",
    "yuan": "CNY",
    "rmb": "CNY",
    "cny": "CNY",
    "美元": "USD",
    "美金": "USD",
    "元": "CNY",
    "人民币": "CNY",
    "元人民币": "CNY",
    "欧元": "EUR",
    "英镑": "GBP",
    "日元": "JPY",
    "港元": "HKD",
    "港币": "HKD",
}
_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"
_CHINESE_SCALE = "万亿|千亿|千万|百万|亿|万"
_AMOUNT = re.compile(
    rf"(?P<sign>[$€£¥])\s?(?P<n1>{_NUMBER})\s?(?P<s1>trillion|billion|million|thousand|bn|mn|[kKmMbBtT](?![a-z]))?"
    rf"|(?P<n2>{_NUMBER})\s?(?P<s2>trillion|billion|million|thousand)\s(?P<w2>dollars|euros|pounds|yuan|USD|EUR|RMB|CNY)"
    rf"|(?P<n3>{_NUMBER})\s?(?P<s3>{_CHINESE_SCALE}|千)?\s?"
    r"(?P<w3>元人民币|人民币|美元|美金|欧元|英镑|日元|港元|港币|RMB|CNY|元(?!宇宙))"
)
# a number with a scale and no currency: 1.5万 (users), 2000亿 (parameters), 7 billion (downloads)
_SCALED = re.compile(
    rf"(?<![\d.,])(?P<n>{_NUMBER})\s?(?:(?P<zh>{_CHINESE_SCALE})|(?P<en>trillion|billion|million)(?![a-z]))"
)
_PLAIN_NUMBER = re.compile(rf"(?<![\d.,]){_NUMBER}")
_MONTHS = {
    m: i
    for i, m in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH_RE = (
    r"(January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec)\.?"
)
_DATE = re.compile(
    rf"(?P<m1>{_MONTH_RE})\s(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?(?:,\s(?P<y1>\d{{4}}))?(?!\d)"
    rf"|(?<!\d)(?P<d2>\d{{1,2}})\s(?P<m2>{_MONTH_RE})(?:\s(?P<y2>\d{{4}}))?"
    r"|(?P<y3>\d{4})-(?P<m3>\d{2})-(?P<d3>\d{2})"
    r"|(?:(?P<y4>\d{4})\s?年\s?)?(?<!\d)(?P<m4>\d{1,2})\s?月\s?(?P<d4>\d{1,2})\s?[日号]"
    # a month: 3月, 2026年3月, 3月份, 3月底 (not 3个月, not the month of 3月18日)
    r"|(?:(?P<y5>\d{4})\s?年\s?)?(?<!\d)(?P<m5>\d{1,2})\s?月(?!\s?\d)"
)


@dataclass(frozen=True)
class FoundFact:
    kind: str
    text: str
    value: str
    article_id: str
    field: str
    start: int
    end: int

    def as_payload(self) -> dict:
        return {
            "kind": self.kind,
            "text": self.text,
            "value": self.value,
            "anchor": {
                "article_id": self.article_id,
                "field": self.field,
                "start": self.start,
                "end": self.end,
            },
        }


def amount_value(match: re.Match[str]) -> str:
    """A normalised amount: ``USD 1200000000`` — the same for ``$1.2B`` and ``1.2 billion dollars``."""
    g = match.groupdict()
    number = g["n1"] or g["n2"] or g["n3"]
    scale = g["s1"] or g["s2"] or g["s3"] or ""
    currency = _CURRENCY_SIGN.get(g["sign"] or "") or _CURRENCY_WORD.get(
        (g["w2"] or g["w3"] or "").lower(), "USD"
    )
    value = float(number.replace(",", "")) * _SCALE.get(scale.lower() if scale.isascii() else scale, 1.0)
    return f"{currency} {value:.0f}"


def amounts(text: str) -> list[tuple[str, str]]:
    """Each money amount ``text`` states, as written and normalised: ``("20亿美元", "USD 2000000000")``."""
    return [(m.group(0).strip(), amount_value(m)) for m in _AMOUNT.finditer(text)]


def scaled_numbers(text: str) -> list[tuple[str, str]]:
    """Each number with a scale and no currency, as written and as a number: ``("1.5万", "15000")``."""
    money = [m.span() for m in _AMOUNT.finditer(text)]
    out = []
    for m in _SCALED.finditer(text):
        if not any(start <= m.start() < end for start, end in money):
            scale = _SCALE[m["zh"] or m["en"]]
            out.append((m.group(0), f"{float(m['n'].replace(',', '')) * scale:.0f}"))
    return out


def numbers(text: str) -> set[str]:
    """Every number ``text`` states, scaled: what a scaled number elsewhere may be compared with
    (``15,000`` and ``1.5万``, ``$2 billion`` and ``20亿``, are one number)."""
    plain = {f"{float(m.group(0).replace(',', '')):.0f}" for m in _PLAIN_NUMBER.finditer(text)}
    money = {value.split()[1] for _, value in amounts(text)}
    return plain | money | {value for _, value in scaled_numbers(text)}


def dates(text: str, default_year: int) -> list[tuple[str, str]]:
    """Each date (or month) ``text`` states, as written and in ISO form: ``("4月15日", "2026-04-15")``."""
    found = [(m.group(0), date_value(m, default_year)) for m in _DATE.finditer(text)]
    return [(shown, value) for shown, value in found if value]


def date_stated(value: str, stated: set[str]) -> bool:
    """Whether a date (``2026-03-18``) or a month (``2026-03``) is among ``stated``; a month is
    stated by any day of it."""
    return value in stated or (len(value) == 7 and any(s.startswith(value) for s in stated))


def date_value(match: re.Match[str], default_year: int) -> str | None:
    g = match.groupdict()
    try:
        if g["y3"]:
            return date(int(g["y3"]), int(g["m3"]), int(g["d3"])).isoformat()
        if g["m4"]:
            return date(int(g["y4"] or default_year), int(g["m4"]), int(g["d4"])).isoformat()
        if g["m5"]:
            return date(int(g["y5"] or default_year), int(g["m5"]), 1).isoformat()[:7]
        month = _MONTHS[(g["m1"] or g["m2"]).lower().rstrip(".")]
        day = int(g["d1"] or g["d2"])
        return date(int(g["y1"] or g["y2"] or default_year), month, day).isoformat()
    except (ValueError, KeyError):
        return None


def extract_facts(item: Item, default_year: int) -> list[FoundFact]:
    """Every fact the title and summary state, each with its anchor."""
    facts: list[FoundFact] = []
    for field, text in (("title", item.title), ("summary", item.summary)):
        for m in _ORG.finditer(text):
            facts.append(
                FoundFact(
                    "organization", m.group(1), m.group(1), item.article_id, field, m.start(1), m.end(1)
                )
            )
        for m in PRODUCT.finditer(text):
            facts.append(
                FoundFact("product", m.group(1), m.group(1), item.article_id, field, m.start(1), m.end(1))
            )
        for m in _PERSON.finditer(text):
            group = 1 if m.group(1) else 2
            name = m.group(group)
            if not _ORG.fullmatch(name):
                facts.append(
                    FoundFact("person", name, name, item.article_id, field, m.start(group), m.end(group))
                )
        for m in _AMOUNT.finditer(text):
            facts.append(
                FoundFact(
                    "amount",
                    m.group(0).strip(),
                    amount_value(m),
                    item.article_id,
                    field,
                    m.start(),
                    m.start() + len(m.group(0).strip()),
                )
            )
        for m in _DATE.finditer(text):
            value = date_value(m, default_year)
            if value:
                facts.append(FoundFact("date", m.group(0), value, item.article_id, field, m.start(), m.end()))
    return facts


# -- category and importance -----------------------------------------------------------


@dataclass(frozen=True)
class CategoryRule:
    name: str
    keywords: tuple[str, ...]
    weight: float = 1.0


def categorise(text: str, rules: Sequence[CategoryRule]) -> tuple[str, float]:
    """The best-matching category and a confidence in [0, 1] (share of the keyword evidence)."""
    lowered = text.lower()
    scores = {}
    for rule in rules:
        hits = sum(
            len(re.findall(r"(?<![a-z0-9])" + re.escape(k.lower()) + r"(?![a-z0-9])", lowered))
            if k.isascii()
            else lowered.count(k)
            for k in rule.keywords
        )
        if hits:
            scores[rule.name] = hits
    if not scores:
        return "other", 0.3
    best = max(sorted(scores), key=lambda n: scores[n])
    total = sum(scores.values())
    confidence = (scores[best] / total) * (1 - math.exp(-scores[best]))
    return best, round(min(max(confidence, 0.0), 1.0), 3)


def importance(
    sources: Sequence[str],
    source_weights: Mapping[str, float],
    category_weight: float,
    newest: datetime | None,
    window_end: datetime,
    lookback_hours: int,
) -> float:
    """Coverage across outlets, the outlets' weight, the category's weight, recency; in [0, 1]."""
    outlets = set(sources)
    coverage = 1 - 0.5 ** len(outlets)
    weight = max((source_weights.get(s, 1.0) for s in outlets), default=1.0) / 2
    recency = 0.0
    if newest is not None:
        age_h = max((window_end - newest).total_seconds() / 3600, 0.0)
        recency = max(0.0, 1 - age_h / lookback_hours)
    score = 0.45 * coverage + 0.2 * min(weight, 1.0) + 0.2 * min(category_weight / 1.5, 1.0) + 0.15 * recency
    return round(min(max(score, 0.0), 1.0), 4)


def dedupe_facts(facts: Sequence[FoundFact]) -> list[FoundFact]:
    """One fact per (kind, value), keeping the first anchor (representative article first)."""
    seen, out = set(), []
    for fact in facts:
        key = (fact.kind, fact.value.lower())
        if key not in seen:
            seen.add(key)
            out.append(fact)
    return out
