"""The run report: timings per step, run.started / run.finished, the per-source table.

Each step ends in one line (``collect    0.3 s  8 items from 2 sources``), given to the
function the flow passes in: it is what ``brief run`` prints and what the Prefect UI logs.
How an operator digs further (``brief replay --projection scores`` says why a story was left
out) is said here, in the run's output and report, never in what readers get.
"""

from __future__ import annotations

from collections.abc import Callable

from storage.errors import BriefError
from tasks.nouns import counted
from tasks.steps.collect import SourceOutcome
from tasks.steps.context import RunContext
from tasks.steps.dedup import DedupOutcome
from tasks.steps.deliver import DeliveryOutcome
from tasks.steps.liveness import this_process
from tasks.steps.publish import Published


class StepFailed(BriefError):
    """A step of a run failed; the message names the step and the cause."""

    def __init__(self, step: str, cause: BaseException) -> None:
        self.step, self.cause = step, cause
        super().__init__(f"step '{step}' failed: {type(cause).__name__}: {cause}")


class RunReport:
    """Times each step, writes run.started / run.finished, and tabulates what happened."""

    def __init__(self, ctx: RunContext, step_line: Callable[[str], None] = lambda line: None) -> None:
        self.ctx = ctx
        self.step_line = step_line  # gets one line as each step ends
        self.details: dict[str, str] = {}  # what each step did, in a few words
        self.started = 0.0
        self.seconds: dict[str, float] = {}
        self.sources: list[SourceOutcome] = []
        self.outcome: DedupOutcome | None = None
        self.published: Published | None = None
        self.off_topic = 0  # stories the topic filter left out
        self.asked = 0  # questions the run asked, for review
        self.llm: dict | None = None  # the language model's calls, when one is configured
        self.delivery: DeliveryOutcome | None = None  # what went to the [[delivery]] channels

    def start(self) -> None:
        import time

        self.started = time.perf_counter()
        self.ctx.append(
            [
                self.ctx.emit(
                    "run.started",
                    {
                        "flow": "daily-brief",
                        "parameters": {
                            "date": self.ctx.day.isoformat(),
                            "policy_version": self.ctx.policy_version,
                        },
                        "process": this_process(),  # a run killed without a word is found by it
                        "policy": self.ctx.identity.policy_origin,
                    },
                    subject=self.ctx.run_id,
                    producer="flow.daily@1",
                )
            ]
        )

    def step(self, name: str):
        """Time a step; when it ends well, its line goes out (what ``say`` noted, after its time)."""
        import contextlib
        import time

        @contextlib.contextmanager
        def timed():
            t = time.perf_counter()
            self.current = name
            try:
                yield
            except StepFailed:
                raise
            except Exception as exc:
                raise StepFailed(name, exc) from exc
            finally:
                self.seconds[name] = round(time.perf_counter() - t, 3)
            self.step_line(self.line(name))

        return timed()

    current = ""  # the step running now: what ``say`` describes

    def say(self, detail: str) -> None:
        """What the running step did, in a few words (its line, with its time, when it ends)."""
        self.details[self.current] = detail

    def collected(self) -> str:
        """The collect step's words: items, sources, the failed and the not fetched."""
        failed = [s.source for s in self.sources if s.error]
        skipped = sum(1 for s in self.sources if s.skipped)
        return (
            f"{counted(sum(s.items for s in self.sources), 'item')} "
            f"from {counted(len(self.sources), 'source')}"
            + (f", {len(failed)} failed ({', '.join(failed)})" if failed else "")
            + (f", {skipped} not fetched" if skipped else "")
        )

    def scored(self, on_topic: int, topic: str) -> str:
        """The score step's words (its line stays short: ``left_out_hint`` says where to read why)."""
        return f"{counted(on_topic, 'story', 'stories')} on {topic}, {self.off_topic} left out"

    def left_out_hint(self) -> str | None:
        """Where an operator reads why stories were left out: for the run's output, never for readers."""
        if not self.off_topic:
            return None
        replay = f"brief replay --date {self.ctx.day} --projection scores{self.ctx.settings.config_option}"
        return f"{self.off_topic} left out: '{replay}' says why"

    def review_hint(self) -> str | None:
        """The command that asks the questions the run raised (for the run's output)."""
        if not self.asked:
            return None
        review = f"brief review --date {self.ctx.day}{self.ctx.settings.config_option}"
        return f"{counted(self.asked, 'question')} for review: '{review}' asks them"

    def line(self, name: str) -> str:
        return f"{name:<9} {self.seconds.get(name, 0.0):5.1f} s  {self.details.get(name, '')}".rstrip()

    def finish(self, outcome: DedupOutcome, published: Published) -> None:
        self.outcome, self.published = outcome, published
        counts = {
            **self.ctx.counts,
            "news": outcome.news,
            "stories": len(outcome.stories),
            "off_topic": self.off_topic,
            "items": published.items,
            "version": published.version,
            "embeddings_computed": self.ctx.embedder.computed,
        }
        if self.delivery is not None:
            counts |= {
                "delivered": sum(s.ok for s in self.delivery.sent),
                "delivery_failed": len(self.delivery.failed),
            }
        from tasks.steps.llm import analyst

        model = analyst(self.ctx)
        detail = None
        if model is not None:
            model.flush()
            stats = model.stats
            detail = {
                "calls": stats.calls,
                "reused": stats.reused,
                "tokens_in": stats.tokens_in,
                "tokens_out": stats.tokens_out,
                "cost": round(stats.cost, 6),
                "fallbacks": [{"story_id": s, "task": t, "reason": r} for s, t, r in stats.fallbacks],
            }
            counts |= {
                "llm_calls": stats.calls,
                "llm_reused": stats.reused,
                "llm_fallbacks": len(stats.fallbacks),
            }
        self.llm = detail
        self.ctx.append(
            [
                self.ctx.emit(
                    "run.finished",
                    {"status": "completed", "step_seconds": self.seconds, "counts": counts, "llm": detail},
                    subject=self.ctx.run_id,
                    producer="flow.daily@1",
                )
            ]
        )

    def table(self) -> list[dict]:
        rows = [
            {
                "source": s.source,
                "items": s.items,
                "new events": s.new_events,
                "status": f"{s.error}: {s.message}" if s.error else (s.message or "ok"),
            }
            for s in self.sources
        ]
        for fallback in (self.llm or {}).get("fallbacks", []):  # the stories the model did not judge
            rows.append(
                {
                    "source": f"language model: {fallback['task']}",
                    "items": 1,
                    "new events": 0,
                    "status": f"{fallback['story_id']}: offline result ({fallback['reason']})",
                }
            )
        rows += self.delivery.rows() if self.delivery else []
        return rows

    def summary(self) -> str:
        failed = [s.source for s in self.sources if s.error]
        steps_text = ", ".join(f"{k} {v:.1f}s" for k, v in self.seconds.items())
        dedup = ""
        if self.outcome is not None:
            dedup = (
                f"; {counted(self.outcome.news, 'new article')} in "
                f"{counted(len(self.outcome.stories), 'story', 'stories')}, "
                f"{counted(self.outcome.duplicates, 'duplicate')} dropped, "
                f"{counted(self.off_topic, 'off-topic story', 'off-topic stories')} left out"
                + (
                    f" ('brief replay --date {self.ctx.day} --projection scores"
                    f"{self.ctx.settings.config_option}' says why)"
                    if self.off_topic
                    else ""
                )
            )
        return (
            f"{self.ctx.day}: {len(self.sources) - len(failed)}/{len(self.sources)} sources ok"
            + (f" (failed: {', '.join(failed)})" if failed else "")
            + dedup
            + (
                f"; language model: {counted(self.llm['calls'], 'call')}, {self.llm['reused']} from the log, "
                f"{self.llm['tokens_in'] + self.llm['tokens_out']} tokens, cost {self.llm['cost']:.4f}, "
                f"{counted(len(self.llm['fallbacks']), 'fallback')}"
                if self.llm
                else ""
            )
            + (
                f"; delivered to {counted(sum(s.ok for s in self.delivery.sent), 'channel')}"
                + (f", {len(self.delivery.failed)} failed" if self.delivery.failed else "")
                if self.delivery and self.delivery.sent
                else ""
            )
            + f"; {steps_text}"
        )
