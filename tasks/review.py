"""The interview protocol: the few questions the pipeline cannot settle alone.

Three kinds of question, each with a priority, candidates, a default and a batch:

- **clarification**: two articles of different outlets that are nearly, but not quite,
  alike enough to be one story: "same story?" (default: no);
- **confirmation**: a category chosen with low confidence (default: keep it), and a claim
  the fact-check could not find in its sources (default: remove it);
- **completion**: a required field is missing: a new article without a publish time
  (default: skip).

A question is identified by what it asks about (type, subject, field, value), so the same
question raised by another run is the same question, and one answered before (same
subject, field and value) is not asked again: the earlier answer applies.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

BATCH_SIZE = 5
BORDERLINE_MARGIN = 0.08


@dataclass(frozen=True)
class Question:
    type: str
    subject: str
    field: str
    value: str
    prompt: str
    candidates: tuple[str, ...]
    default: str
    priority: int

    @property
    def question_id(self) -> str:
        key = "\x1f".join((self.type, self.subject, self.field, self.value))
        return "q-" + hashlib.blake2b(key.encode(), digest_size=8).hexdigest()

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.subject, self.field, self.value)

    def payload(self, batch_id: str) -> dict:
        return {
            "question_id": self.question_id,
            "type": self.type,
            "subject": self.subject,
            "field": self.field,
            "value": self.value,
            "prompt": self.prompt,
            "candidates": list(self.candidates),
            "default": self.default,
            "priority": self.priority,
            "batch_id": batch_id,
        }


def same_story_question(a_id: str, a_title: str, b_id: str, b_title: str, score: float) -> Question:
    first, second = sorted([(a_id, a_title), (b_id, b_title)])
    return Question(
        "clarification",
        f"{first[0]}|{second[0]}",
        "same_story",
        f"{score:.2f}",
        f"Are these the same story?\n  A. {first[1]}\n  B. {second[1]}\n"
        "yes: one story that cites both reports; no: two stories",
        ("no", "yes"),
        "no",
        60 + int(30 * score),  # the closer to the threshold, the sooner it is asked
    )


def category_question(
    story_id: str, title: str, category: str, confidence: float, categories: Sequence[str]
) -> Question:
    others = [c for c in categories if c != category]
    return Question(
        "confirmation",
        story_id,
        "category",
        category,
        f"Category of “{title}” is {category!r} (confidence {confidence:.2f}). Right?",
        (category, *others, "other"),
        category,
        40 + int(50 * (1 - confidence)),
    )


def claim_question(story_id: str, title: str, kind: str, claim: str, reason: str) -> Question:
    return Question(
        "confirmation",
        story_id,
        f"claim:{kind}",
        claim,
        f"“{title}” states {kind} “{claim}”, which the fact-check could not confirm ({reason}). Keep it?",
        ("remove", "keep"),
        "remove",
        90,
    )


RELEVANCE_CHOICES = ("core", "related", "off-topic", "lead")


def relevance_question(story_id: str, title: str, topic: str, outcome: str, score: float) -> Question:
    """Is the story on the topic? Asked when the model's score is near its decision."""
    return Question(
        "confirmation",
        story_id,
        "relevance",
        outcome,
        f"Is “{title}” {topic} news? The model says {outcome} (score {score:.2f}). "
        "core: yes, it may lead · related: partly · off-topic: leave it out · lead: it should lead",
        (outcome, *[c for c in RELEVANCE_CHOICES if c != outcome]),
        outcome,
        50 + int(40 * (1 - 2 * abs(score - 0.5))),  # the closer to the decision, the sooner
    )


def publish_time_question(article_id: str, title: str) -> Question:
    return Question(
        "completion",
        article_id,
        "published_at",
        "",
        f"When was “{title}” published? (YYYY-MM-DD)",
        (),
        "skip",
        20,
    )


def batch(questions: Iterable[Question], day: date, size: int = BATCH_SIZE) -> list[tuple[str, Question]]:
    """Most important first, in batches of ``size``: (batch id, question)."""
    ranked = sorted(
        {q.question_id: q for q in questions}.values(), key=lambda q: (-q.priority, q.question_id)
    )
    return [(f"{day.isoformat()}-b{k // size + 1}", q) for k, q in enumerate(ranked)]


def check_answer(question: Mapping, answer: str) -> str | None:
    """Why ``answer`` is not acceptable for ``question`` (None when it is)."""
    if question["type"] == "completion":
        if answer in ("", "skip"):
            return None
        try:
            date.fromisoformat(answer)
        except ValueError:
            return f"{answer!r} is not a date; answer YYYY-MM-DD or 'skip'"
        return None
    if answer not in question["candidates"]:
        return f"{answer!r} is not one of {', '.join(question['candidates'])}"
    return None
