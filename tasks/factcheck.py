"""Fact-check a brief draft against the articles it cites.

Every organisation, person, product, money amount and date an item states must be found in
the text of the articles it cites, and so must every amount, number with a scale (``1.5万``,
``2 billion``) and date its title and summary write. Amounts, numbers and dates are compared
normalised, in either language: ``$1.2B`` = ``1.2 billion dollars`` = ``12亿美元``,
``15,000`` = ``1.5万``, ``2026年3月18日`` = ``March 18, 2026``, and a month (``3月``) is
stated by any day of it. No date among its facts may be after the brief date; an item states
at most one amount; every link it cites must be a collected article. A failure is a finding
naming the claim and the sources checked; the caller records it and marks the item.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from storage.brief import Brief
from storage.brief import Item as BriefItem
from tasks import analyze
from tasks.dedup import Item
from tasks.normalize import reader_link


@dataclass(frozen=True)
class Finding:
    story_id: str
    kind: str  # organization | person | product | amount | number | date | citation
    claim: str
    reason: str  # NOT_IN_SOURCES | AFTER_BRIEF_DATE | SEVERAL_AMOUNTS | NOT_COLLECTED
    sources: tuple[str, ...]

    def as_payload(self) -> dict:
        return {
            "story_id": self.story_id,
            "kind": self.kind,
            "claim": self.claim,
            "reason": self.reason,
            "sources_checked": list(self.sources),
        }


@dataclass(frozen=True)
class Claim:
    kind: str  # amount | number | date
    text: str
    value: str


def unanchored(text: str, sources: Sequence[Item], year: int) -> list[Claim]:
    """The money amounts, scaled numbers and dates ``text`` states that ``sources`` do not, each once.

    Compared normalised, in either language: ``20亿美元`` = ``$2 billion``, ``1.5万`` =
    ``15,000``; a month (``3月``) is stated by any day of it. A date the sources state may be
    after the brief date: what a later date means is the caller's to decide."""
    source_text = " \n ".join(f"{s.title} \n {s.summary}" for s in sources)
    money = {value for _, value in analyze.amounts(source_text)}
    counted = analyze.numbers(source_text)
    days = {f.value for s in sources for f in analyze.extract_facts(s, year) if f.kind == "date"}
    claims = [Claim("amount", shown, value) for shown, value in analyze.amounts(text) if value not in money]
    claims += [
        Claim("number", shown, value) for shown, value in analyze.scaled_numbers(text) if value not in counted
    ]
    claims += [
        Claim("date", shown, value)
        for shown, value in analyze.dates(text, year)
        if not analyze.date_stated(value, days)
    ]
    first: dict[tuple[str, str], Claim] = {}
    for claim in claims:
        first.setdefault((claim.kind, claim.value), claim)
    return list(first.values())


def check_item(item: BriefItem, articles: Mapping[str, Item], brief_date: date) -> list[Finding]:
    """Findings for one brief item (empty when every claim is anchored in its sources)."""
    story = item.story_id
    cited = list(item.citations)
    known = [articles[c.article_id] for c in cited if c.article_id in articles]
    collected_urls = {a.canonical_url for a in articles.values()} | {a.url for a in articles.values()}
    collected_urls |= {reader_link(a.url) for a in articles.values()}  # as a published brief cites it
    sources = tuple(c.url for c in cited)
    findings = [
        Finding(story, "citation", c.url, "NOT_COLLECTED", sources)
        for c in cited
        if c.url not in collected_urls or c.article_id not in articles
    ]
    text = " \n ".join(f"{a.title} \n {a.summary}" for a in known)
    lowered = text.lower()
    source_amounts = {value for _, value in analyze.amounts(text)}
    source_dates = {
        f.value for a in known for f in analyze.extract_facts(a, brief_date.year) if f.kind == "date"
    }
    for fact in item.facts:
        kind, value, shown = fact.kind, fact.value, fact.text
        if kind == "amount":
            if value not in source_amounts:
                findings.append(Finding(story, kind, shown, "NOT_IN_SOURCES", sources))
        elif kind == "date":
            if value > brief_date.isoformat():
                findings.append(Finding(story, kind, shown, "AFTER_BRIEF_DATE", sources))
            elif not analyze.date_stated(value, source_dates):
                findings.append(Finding(story, kind, shown, "NOT_IN_SOURCES", sources))
        elif shown.lower() not in lowered:
            findings.append(Finding(story, kind, shown, "NOT_IN_SOURCES", sources))
    in_facts = {(f.kind, f.value) for f in item.facts}  # checked above
    for claim in unanchored(f"{item.title} \n {item.summary}", known, brief_date.year):
        if (claim.kind, claim.value) not in in_facts:
            shown = claim.value if claim.kind == "amount" else claim.text  # an amount named normalised
            findings.append(Finding(story, claim.kind, shown, "NOT_IN_SOURCES", sources))
    stated_in_facts = {f.value for f in item.facts if f.kind == "amount"}
    if len(stated_in_facts) > 1:
        findings.append(
            Finding(story, "amount", " / ".join(sorted(stated_in_facts)), "SEVERAL_AMOUNTS", sources)
        )
    return findings


def check_brief(document: Brief, articles: Mapping[str, Item], brief_date: date) -> list[Finding]:
    return [f for item in document.items for f in check_item(item, articles, brief_date)]


def stated_facts(facts: Sequence[Mapping], brief_date: date) -> list[Mapping]:
    """What an item states of its analysis: no date after the brief date, at most one amount."""
    out, amount_seen = [], False
    for fact in facts:
        if fact["kind"] == "date" and fact["value"] > brief_date.isoformat():
            continue  # a deadline or forecast in the source, not what happened
        if fact["kind"] == "amount":
            if amount_seen:
                continue
            amount_seen = True
        out.append(fact)
    return out
