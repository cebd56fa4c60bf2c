"""Replay stored facts through a candidate policy, beside the current one, and compare.

Nothing is published: each day is decided in a dry run (``RunContext.dry_run``) from the
facts already in the log. Figures per policy: story-clustering precision / recall / F1
against people's answers (``story.merged`` / ``story.split``) and, given a labels folder,
against the hand-made story labels; category accuracy against corrections; fact-check
pass rate; citation coverage (news articles cited by an item); questions raised.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from datetime import date
from pathlib import Path

import polars as pl
from pydantic import ValidationError

from tasks.settings import PolicySettings, Settings
from storage.errors import ConfigError
from tasks import analyze as an
from tasks import dedup as dd
from tasks import steps


def load_policy(path: str) -> PolicySettings:
    """A candidate policy: a TOML file with a ``[policy]`` table (the config's schema)."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"--policy {path!r}: no such file") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"--policy {path!r}: not valid TOML ({exc})") from None
    try:
        return PolicySettings.model_validate(data.get("policy", data))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(
            f"--policy {path!r}: policy.{'.'.join(map(str, first['loc']))} {first['msg']}"
        ) from None


def _prf(tp: int, fp: int, fn: int) -> tuple[float | None, float | None, float | None]:
    if tp + fp + fn == 0:
        return None, None, None
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return round(p, 4), round(r, 4), round(2 * p * r / (p + r), 4) if p + r else 0.0


def evaluate_policy(
    settings: Settings, policy: PolicySettings, days: Sequence[date], labels: Path | None = None
) -> dict[str, float | int | None]:
    trial = settings.model_copy(update={"policy": policy})
    human_tp = human_fp = human_fn = 0
    label_scores = [0, 0, 0]
    category_hits = category_total = 0
    items = passed = news = cited = questions = 0
    for day in days:
        ctx = steps.make_context(trial, day, f"evaluate-{policy.version()}")
        ctx.dry_run = True
        outcome = steps.dedup_day(ctx)
        document, findings, _ = steps.draft(ctx, outcome)
        questions += steps.raise_questions(ctx, outcome, document, findings)["asked"]
        story_of = {a: k for k, s in enumerate(outcome.stories) for a in s.members}
        must, cannot = steps.human_links(ctx, [d for d in ctx.store.days() if d <= day])
        for pair in must:
            a, b = sorted(pair)
            if a in story_of and b in story_of:
                human_tp += story_of[a] == story_of[b]
                human_fn += story_of[a] != story_of[b]
        for pair in cannot:
            a, b = sorted(pair)
            if a in story_of and b in story_of:
                human_fp += story_of[a] == story_of[b]
        if labels is not None and (labels / f"stories-{day.isoformat()}.json").is_file():
            truth_links = json.loads((labels / f"stories-{day.isoformat()}.json").read_text())
            by_link = {link: s["story"] for s in truth_links["stories"] for link in s["items"]}
            truth = {
                a: by_link[outcome.items[a].url]
                for s in outcome.stories
                for a in s.members
                if outcome.items[a].url in by_link
            }
            for k, v in enumerate(dd.pairwise_scores([s.members for s in outcome.stories], truth)):
                label_scores[k] += v
        rules = [an.CategoryRule(c.name, tuple(c.keywords), c.weight) for c in policy.categories]
        for story in outcome.stories:
            corrected = outcome.corrected_category.get(story.representative)
            if corrected:
                members = [outcome.items[a] for a in story.members]
                guess, _ = an.categorise(" ".join(f"{m.title} {m.title} {m.summary}" for m in members), rules)
                category_hits += guess == corrected
                category_total += 1
        failed = {f.story_id for f in findings}
        items += len(document["items"])
        passed += sum(i["story_id"] not in failed for i in document["items"])
        news += outcome.news
        cited += len({c["article_id"] for i in document["items"] for c in i["citations"]})
    hp, hr, hf = _prf(human_tp, human_fp, human_fn)
    lp, lr, lf = _prf(*label_scores)
    return {
        "human_pairs": human_tp + human_fp + human_fn,
        "human_precision": hp,
        "human_recall": hr,
        "human_f1": hf,
        "label_precision": lp,
        "label_recall": lr,
        "label_f1": lf,
        "category_accuracy": round(category_hits / category_total, 4) if category_total else None,
        "category_corrections": category_total,
        "factcheck_pass_rate": round(passed / items, 4) if items else None,
        "citation_coverage": round(cited / news, 4) if news else None,
        "questions_raised": questions,
        "items": items,
        "news_articles": news,
    }


def record(
    settings: Settings, candidate: PolicySettings, start: date, end: date, figures: dict, labels: Path | None
) -> None:
    from storage.events import new_event, utcnow

    store = settings.storage.event_store()
    current = settings.policy.version()
    store.append(
        [
            new_event(
                "policy.evaluated",
                {
                    "current_policy": current,
                    "candidate_policy": candidate.version(),
                    "start": start.isoformat(),
                    "end": end.isoformat(),
                    "figures": figures,
                    "labels": str(labels) if labels else None,
                },
                brief_date=end,
                run_id=f"evaluate-{candidate.version()}",
                subject_id=f"policy-{candidate.version()}",
                produced_by="evaluate@1",
                occurred_at=utcnow(),
                policy_version=candidate.version(),
            )
        ]
    )


def table(figures: dict[str, dict]) -> pl.DataFrame:
    names = list(figures)
    metrics = list(next(iter(figures.values())))
    return pl.DataFrame({"metric": metrics, **{n: [_fmt(figures[n][m]) for m in metrics] for n in names}})


def _fmt(value: float | int | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
