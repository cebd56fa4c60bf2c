"""Fine-tuning datasets from what the pipeline decided and what people answered or corrected.

Tasks: ``classify`` (article -> category), ``extract`` (article -> organisations, people,
products, amounts, dates), ``summarize`` (story -> title and summary as briefed) and
``dedup`` (two articles -> same story or not). Formats: ``chat`` (OpenAI chat JSONL:
system, user, assistant; the assistant content is the task's JSON) and ``preference``
(OpenAI preference pairs: the human-corrected output preferred over the machine's).
``llm`` exports the recorded language-model calls (``llm.called``) as they were asked, with a
person's mark or category, or the sources' own text where the fact-check removed the model's
summary, as the preferred answer: a team can fine-tune a small model on its own decisions.

Human corrections win over machine output. Feed text enters the user message only as a
JSON value (data, never instructions), and text that looks like instructions to a model
is marked ``"untrusted_instructions": true``. The train/validation split is a hash of the
subject; duplicates are removed; each record names the event ids it came from; a dataset
card sits beside the file.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, ConfigDict

from storage.atomic import write_text
from storage.brief import read_brief
from storage.errors import InputError, StoreError
from storage.payloads import (
    ArticlePurged,
    BriefCorrected,
    BriefPublished,
    ConfirmationResolved,
    Fact,
    FactcheckFailed,
    LLMCalled,
    StoryAnalyzed,
    StoryClustered,
    StoryMerged,
    StoryScored,
    StorySplit,
)
from storage.projections import materialize
from storage.store import EventStore
from storage.typed import payload_field, payload_of
from tasks.injection import looks_like_instructions
from tasks.nouns import counted

TASKS = ("classify", "extract", "summarize", "dedup", "relevance", "llm")
SYSTEM = {
    "classify": 'Classify the AI-news article into one category. Answer with JSON {"category": string}.',
    "extract": 'List the facts the article states. Answer with JSON {"organizations": [], "people": [], '
    '"products": [], "amounts": [], "dates": []} using normalised values.',
    "summarize": "Write the brief's title and a one-paragraph summary of the story. Answer with JSON "
    '{"title": string, "summary": string}.',
    "dedup": "Do the two articles report the same real-world event? "
    'Answer with JSON {"same_story": boolean}.',
    "relevance": "Is the story news on the brief's topic? core: primarily about it and may lead; related: "
    "the topic is a significant but secondary element; off-topic: leave it out. "
    'Answer with JSON {"relevance": "core" | "related" | "off-topic", "lead": boolean}.',
}


class ClassifyOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    category: str


class ExtractOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    organizations: list[str]
    people: list[str]
    products: list[str]
    amounts: list[str]
    dates: list[str]


class SummarizeOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    title: str
    summary: str


class DedupOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    same_story: bool


class RelevanceOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    relevance: Literal["core", "related", "off-topic"]
    lead: bool = False


OUTPUT_MODELS: dict[str, type[BaseModel]] = {
    "classify": ClassifyOutput,
    "extract": ExtractOutput,
    "summarize": SummarizeOutput,
    "dedup": DedupOutput,
    "relevance": RelevanceOutput,
}


@dataclass
class Example:
    task: str
    subject: str
    brief_date: str
    input: dict
    machine: dict
    human: dict | None
    event_ids: list[str] = field(default_factory=list)
    policy_version: str = ""
    messages: list[dict] | None = None  # the prompt exactly as a model was asked (task llm)

    @property
    def output(self) -> dict:
        return self.human if self.human is not None else self.machine

    @property
    def split(self) -> str:
        bucket = int(hashlib.blake2b(self.subject.encode(), digest_size=4).hexdigest(), 16) % 10
        return "validation" if bucket == 0 else "train"


def _article_input(row: dict) -> dict:
    text = f"{row['title']} {row['summary'] or ''}"
    data = {"title": row["title"], "text": row["summary"] or "", "source": row["source"]}
    if looks_like_instructions(text):
        data["untrusted_instructions"] = True
    return data


def _latest(frame: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return frame.sort("occurred_at", "seq", "event_id").group_by(keys, maintain_order=True).last()


def examples(store: EventStore, task: str, days: list[date]) -> Iterator[Example]:
    if task not in TASKS:
        raise InputError(f"--task {task!r}: choose one of {', '.join(TASKS)}")
    articles = {r["article_id"]: r for r in materialize(store, "articles").iter_rows(named=True)}
    events = store.query(lambda: store.scan(days))
    if task == "relevance":
        yield from _relevance(events, articles)
        return
    if task == "llm":
        yield from _model_calls(events, articles)
        return
    if task in ("classify", "extract", "summarize"):
        clustered = _latest(
            events.filter(pl.col("event_type") == "story.clustered").with_columns(
                payload_field("story.clustered", "story_id").alias("story")
            ),
            ["story", "brief_date"],
        )
        representative = {
            (r["story"], r["brief_date"]): (payload_of(r, StoryClustered).representative, r["event_id"])
            for r in clustered.iter_rows(named=True)
        }
        analyzed = _latest(
            events.filter(pl.col("event_type") == "story.analyzed").with_columns(
                payload_field("story.analyzed", "story_id").alias("story")
            ),
            ["story", "brief_date"],
        )
        answers = _answers(events)
        for row in analyzed.iter_rows(named=True):
            key = (row["story"], row["brief_date"])
            if key not in representative or representative[key][0] not in articles:
                continue
            article_id, clustered_id = representative[key]
            article = articles[article_id]
            analysis = payload_of(row, StoryAnalyzed)
            ids = [row["event_id"], clustered_id]
            if task == "classify":
                machine = {"category": analysis.category}
                human = {"category": article["category"]} if article["category"] else None
                yield Example(
                    task,
                    article_id,
                    str(row["brief_date"]),
                    _article_input(article),
                    machine,
                    human,
                    ids,
                    row["policy_version"],
                )
            elif task == "extract":
                machine = _facts(analysis.facts, article_id, removed=set())
                removed = {
                    (f"claim:{k}", v)
                    for (s, k, v), a in answers.items()
                    if s == row["story"] and a == "remove"
                }
                corrected = _facts(analysis.facts, article_id, removed=removed)
                yield Example(
                    task,
                    article_id,
                    str(row["brief_date"]),
                    _article_input(article),
                    machine,
                    corrected if corrected != machine else None,
                    ids,
                    row["policy_version"],
                )
        if task == "summarize":
            yield from _summaries(store, events, articles, representative)
    else:
        yield from _pairs(events, articles)


def _relevance(events: pl.DataFrame, articles: dict) -> Iterator[Example]:
    """The topic decisions (``story.scored``), with people's marks as the preferred answer."""
    scored = _latest(
        events.filter(pl.col("event_type") == "story.scored").with_columns(
            payload_field("story.scored", "story_id").alias("story")
        ),
        ["story", "brief_date"],
    )
    for row in scored.iter_rows(named=True):
        decision = payload_of(row, StoryScored)
        article = articles.get(decision.representative)
        if article is None:
            continue
        machine = {"relevance": decision.model_outcome or decision.outcome, "lead": False}
        mark = article.get("relevance")
        human = {"relevance": "core" if mark == "lead" else mark, "lead": mark == "lead"} if mark else None
        yield Example(
            "relevance",
            decision.representative,
            str(row["brief_date"]),
            {**_article_input(article), "tags": list(article.get("tags") or [])},
            machine,
            human,
            [row["event_id"]],
            row["policy_version"],
        )


def _model_calls(events: pl.DataFrame, articles: dict) -> Iterator[Example]:
    """The language model's valid answers as asked, with what people (or the fact-check) preferred."""
    from tasks import write

    removed = {
        f.story_id
        for r in events.filter(pl.col("event_type") == "factcheck.failed").iter_rows(named=True)
        if (f := payload_of(r, FactcheckFailed)).action == "removed_model_text"
    }
    calls = events.filter(pl.col("event_type") == "llm.called")
    purged = {
        a
        for r in events.filter(pl.col("event_type") == "article.purged").iter_rows(named=True)
        for a in payload_of(r, ArticlePurged).article_ids
    }
    for row in calls.iter_rows(named=True):
        call = payload_of(row, LLMCalled)
        if call.output is None or purged.intersection(call.articles):
            continue  # no answer; or it read an article taken out of the store
        if any("content" not in m for m in call.messages[:2]):
            continue  # thinned by retention: the prompt is a digest now
        members = [articles[a] for a in call.articles if a in articles]
        human = None
        if call.task == "relevance":
            mark = next((m["relevance"] for m in members if m.get("relevance")), None)
            if mark:
                outcome = "core" if mark == "lead" else mark
                human = {"outcome": outcome, "confidence": 1.0, "reason": "a person marked it"}
        elif call.task == "category":
            corrected = next((m["category"] for m in members if m.get("category")), None)
            if corrected:
                human = {"category": corrected, "confidence": 1.0}
        elif call.task == "summary" and call.subject in removed and members:
            human = {"summary": write.short_summary(members[0]["summary"] or members[0]["title"])}
        yield Example(
            f"llm.{call.task}",
            f"{call.task}:{call.request_key}",
            str(row["brief_date"]),
            {},
            call.output,
            human,
            [row["event_id"], *(row["source_event_ids"] or [])],
            row["policy_version"],
            messages=call.messages[:2],
        )


def _read_published(store: EventStore, path: str) -> bytes:
    """A published brief file, through the store's filesystem (local disk or object store)."""
    tree = getattr(store, "tree", None)  # an in-memory store names local files
    try:
        return Path(path).read_bytes() if tree is None else tree.files.read(path)
    except (FileNotFoundError, OSError) as exc:
        raise StoreError(
            f"published brief {path!r} cannot be read ({exc}); rerun 'brief run --date D' to write it again"
        ) from None


def _answers(events: pl.DataFrame) -> dict[tuple[str, str, str], str]:
    resolved = events.filter(pl.col("event_type") == "confirmation.resolved")
    out = {}
    for r in resolved.sort("occurred_at").iter_rows(named=True):
        p = payload_of(r, ConfirmationResolved)
        out[(p.subject, p.field.removeprefix("claim:"), p.value)] = p.answer
    return out


def _facts(facts: list[Fact], article_id: str, removed: set[tuple[str, str]]) -> dict:
    out: dict[str, list[str]] = {
        "organizations": [],
        "people": [],
        "products": [],
        "amounts": [],
        "dates": [],
    }
    names = {
        "organization": "organizations",
        "person": "people",
        "product": "products",
        "amount": "amounts",
        "date": "dates",
    }
    for f in facts:
        if f.anchor.article_id != article_id or (f"claim:{f.kind}", f.text) in removed:
            continue
        values = out[names[f.kind]]
        if f.value not in values:
            values.append(f.value)
    return out


def _summaries(
    store: EventStore, events: pl.DataFrame, articles: dict, representative: dict
) -> Iterator[Example]:
    published = events.filter(pl.col("event_type") == "brief.published")
    corrected = _corrected(events)
    for r in _latest(published, ["brief_date"]).iter_rows(named=True):
        files = payload_of(r, BriefPublished).files
        brief = read_brief(_read_published(store, files["json"]))
        for item in brief.items:
            rep = representative.get((item.story_id, r["brief_date"]))
            if rep is None or rep[0] not in articles:
                continue
            article = articles[rep[0]]
            shown = {"title": item.title, "summary": item.summary}
            fixes = corrected.get((item.story_id, r["brief_date"]), {})
            # what the pipeline wrote (the text readers first saw), and a person's correction of it
            machine = {k: fixes[k][1] if k in fixes else v for k, v in shown.items()}
            human = {k: fixes[k][0] if k in fixes else v for k, v in shown.items()} if fixes else None
            yield Example(
                "summarize",
                item.story_id,
                str(r["brief_date"]),
                _article_input(article),
                machine,
                human,
                [r["event_id"], rep[1], *(fixes[k][2] for k in sorted(fixes))],
                r["policy_version"],
            )


def _corrected(events: pl.DataFrame) -> dict[tuple[str, date], dict[str, tuple[str, str, str]]]:
    """People's corrections of items (``brief.corrected``): per story and brief date, per field, the
    latest text, the text readers first saw and the correction's event id."""
    found: dict[tuple[str, date], dict[str, tuple[str, str, str]]] = {}
    rows = events.filter(pl.col("event_type") == "brief.corrected").sort("occurred_at", "seq")
    for r in rows.iter_rows(named=True):
        fix = payload_of(r, BriefCorrected)
        fields = found.setdefault((fix.story_id, r["brief_date"]), {})
        first = fields[fix.field][1] if fix.field in fields else fix.previous
        fields[fix.field] = (fix.value, first, r["event_id"])
    return found


def _pairs(events: pl.DataFrame, articles: dict) -> Iterator[Example]:
    clustered = events.filter(pl.col("event_type") == "story.clustered")
    for r in clustered.iter_rows(named=True):
        members = [m for m in payload_of(r, StoryClustered).members if m in articles]
        for i, a in enumerate(members[:6]):
            for b in members[i + 1 : 6]:
                yield _pair(
                    a, b, articles, True, None, [r["event_id"]], str(r["brief_date"]), r["policy_version"]
                )
    human = events.filter(pl.col("event_type").is_in(["story.merged", "story.split"]))
    for r in human.iter_rows(named=True):
        link = payload_of(r, StoryMerged) if r["event_type"] == "story.merged" else payload_of(r, StorySplit)
        ids = link.article_ids
        if len(ids) == 2 and all(i in articles for i in ids):
            said = r["event_type"] == "story.merged"
            yield _pair(
                ids[0],
                ids[1],
                articles,
                False,
                said,
                [r["event_id"], *r["source_event_ids"]],
                str(r["brief_date"]),
                "",
            )


def _pair(
    a: str, b: str, articles: dict, machine: bool, human: bool | None, ids: list[str], day: str, policy: str
) -> Example:
    first, second = sorted((a, b))
    data = {"first": _article_input(articles[first]), "second": _article_input(articles[second])}
    return Example(
        "dedup",
        f"{first}|{second}",
        day,
        data,
        {"same_story": machine},
        None if human is None else {"same_story": human},
        ids,
        policy,
    )


def build(store: EventStore, task: str, fmt: str, out: Path, start: date, end: date) -> dict:
    """Write ``out`` (JSONL) and ``out``.card.json / .card.md; returns the card."""
    if fmt not in ("chat", "preference"):
        raise InputError(f"--format {fmt!r}: choose chat or preference")
    days = [d for d in store.days() if start <= d <= end]
    seen: dict[str, Example] = {}
    merged: dict[str, Example] = {}
    for example in examples(store, task, days):
        key = f"{example.task}|{example.subject}"
        if key in merged and merged[key].human is not None and example.human is None:
            continue  # a human-labelled record of a subject wins over a machine-only one
        merged[key] = example
    records: list[dict[str, Any]] = []
    uncorrected = 0
    for example in merged.values():
        user = json.dumps({"task": task, "input": example.input}, ensure_ascii=False, sort_keys=True)
        prompt = example.messages or [
            {"role": "system", "content": SYSTEM[task]},
            {"role": "user", "content": user},
        ]
        record: dict[str, Any]
        if fmt == "chat":
            record = {
                "messages": [
                    *prompt,
                    {"role": "assistant", "content": json.dumps(example.output, ensure_ascii=False)},
                ]
            }
        else:
            if example.human is None or example.human == example.machine:
                uncorrected += 1
                continue
            record = {
                "input": {"messages": prompt},
                "preferred_output": [
                    {"role": "assistant", "content": json.dumps(example.human, ensure_ascii=False)}
                ],
                "non_preferred_output": [
                    {"role": "assistant", "content": json.dumps(example.machine, ensure_ascii=False)}
                ],
            }
        digest = hashlib.blake2b(json.dumps(record, sort_keys=True).encode(), digest_size=12).hexdigest()
        if digest in seen:
            continue
        seen[digest] = example
        record["metadata"] = {
            "subject": example.subject,
            "brief_date": example.brief_date,
            "split": example.split,
            "human_labelled": example.human is not None,
            "event_ids": example.event_ids,
            "policy_version": example.policy_version,
        }
        records.append(record)
    write_text(out, "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records))
    card = dataset_card(task, fmt, records, start, end)
    card["examples"], card["uncorrected"] = len(merged), uncorrected
    write_text(out.with_suffix(".card.json"), json.dumps(card, indent=2) + "\n")
    write_text(out.with_suffix(".card.md"), card_markdown(card))
    return card


# what makes a preference pair of each task: a person's word that differs from the pipeline's
PREFERRED_BY = {
    "classify": "a category corrected (an answer to a category question in 'brief review')",
    "extract": "a claim removed (an answer to a claim question in 'brief review')",
    "summarize": "a headline or summary corrected ('brief correct STORY --summary TEXT', or the desk)",
    "dedup": "a same-story answer ('brief review', or the desk's same story / two stories)",
    "relevance": "a mark that differs from the model's call ('brief review --mark STORY=MARK')",
    "llm": "a mark, a corrected category, or a model summary the fact-check removed",
}


def why_empty(card: dict[str, Any]) -> str | None:
    """Why a dataset has no record, in one line (None when it has some)."""
    if card["records"]:
        return None
    span = f"{card['range'][0]} .. {card['range'][1]}"
    if not card.get("examples"):
        return f"nothing to learn from: no {card['task']} decision in {span}"
    if card["format"] == "preference":
        return (
            f"no pair: none of the {counted(card['examples'], card['task'] + ' decision')} "
            f"of {span} was corrected "
            f"by a person; a pair needs {PREFERRED_BY[card['task']]}"
        )
    return None


def dataset_card(task: str, fmt: str, records: list[dict], start: date, end: date) -> dict[str, Any]:
    meta = [r["metadata"] for r in records]
    human = sum(m["human_labelled"] for m in meta)
    return {
        "task": task,
        "format": fmt,
        "records": len(records),
        "splits": dict(Counter(m["split"] for m in meta)),
        "dates": sorted({m["brief_date"] for m in meta}),
        "range": [start.isoformat(), end.isoformat()],
        "policy_versions": sorted({m["policy_version"] for m in meta if m["policy_version"]}),
        "human_labelled": human,
        "human_share": round(human / len(records), 4) if records else 0.0,
        "output_schema": (
            {t: m.model_json_schema() for t, m in llm_answers().items()}
            if task == "llm"
            else OUTPUT_MODELS[task].model_json_schema()
        ),
    }


def llm_answers() -> dict:
    from tasks.llm import ANSWERS

    return ANSWERS


def card_markdown(card: dict) -> str:
    return (
        f"# Dataset card: {card['task']} ({card['format']})\n\n"
        f"- records: {card['records']} ({', '.join(f'{k} {v}' for k, v in sorted(card['splits'].items()))})\n"
        f"- brief dates: {', '.join(card['dates']) or '-'}\n"
        f"- policy versions: {', '.join(card['policy_versions']) or '-'}\n"
        f"- human-labelled: {card['human_labelled']} ({card['human_share']:.0%})\n\n"
        "Inputs are feed text as JSON data; outputs follow `output_schema` in the .card.json.\n"
    )
