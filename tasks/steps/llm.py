"""The language model as a run uses it: every call an ``llm.called`` event, the log its cache.

``Analyst.ask`` answers one task for one story (``translate``: its representative's title),
or returns None and records why (the caller
then keeps its offline result). It never raises: a server that is down or too slow, answers
429 (``Retry-After`` honoured up to ``max_retry_after_s``) or 5xx, a 200 that is not a chat
completion (an HTML page, no message, usage that is not token counts), an answer that is not valid
twice, or a run over its ``max_calls_per_run`` budget all end in the offline result for that
story, listed in the run report. A question already answered in this brief date's log under
the same model and template (the same request key) is answered from the log: a rerun or a
backfill of a day makes no call.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import polars as pl

from storage.payloads import LLMCalled
from storage.typed import payload_of
from tasks import llm
from tasks.dedup import Item
from tasks.nouns import counted
from tasks.steps.chat import ChatClient
from tasks.steps.context import RunContext

FLUSH_EVERY = 50  # calls recorded per append: one file per call would cost more than the call


@dataclass
class LLMStats:
    calls: int = 0  # requests sent (retries included)
    reused: int = 0  # answers read from the log instead
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    fallbacks: list[tuple[str, str, str]] = field(default_factory=list)  # (story, task, why)

    def line(self) -> str:
        return (
            f"{counted(self.calls, 'call')}, {self.reused} "
            f"answered from the log, {self.tokens_in} tokens in, "
            f"{self.tokens_out} out, cost {self.cost:.4f}, "
            f"{counted(len(self.fallbacks), 'fallback')} to the offline result"
        )


class Analyst:
    def __init__(self, ctx: RunContext) -> None:
        settings = ctx.settings.llm
        assert settings is not None
        self.ctx, self.settings = ctx, settings
        self.prompts = llm.load_prompts(settings.prompts)
        self.stats = LLMStats()
        self.down: str | None = None
        self.pending: list = []  # llm.called events not yet appended
        self.structured = True  # ask for the JSON schema in response_format until the server refuses it
        self._client: ChatClient | None = None
        self._recorded: dict[str, dict] | None = None
        self._recorded_by: dict[str, str] = {}  # request key -> the llm.called event that answered it
        self.answered_by: dict[tuple[str, str], str] = {}  # (task, story) -> the llm.called it used
        self.last_call = ""  # the id of the latest llm.called this analyst made
        self.host = llm.server_host(settings.base_url)

    # -- the log as the cache ---------------------------------------------------------

    def recorded(self) -> dict[str, dict]:
        """Valid answers already in this brief date's log: request key -> output."""
        if self._recorded is None:
            store = self.ctx.store
            frame = store.query(lambda: store.scan([self.ctx.day], event_types=["llm.called"]))
            self._recorded = {}
            for row in frame.select("event_id", "event_type", "schema_version", "payload").iter_rows(
                named=True
            ):
                call = payload_of(row, LLMCalled)
                if call.output is not None and call.request_key not in self._recorded:
                    self._recorded[call.request_key] = call.output
                    self._recorded_by[call.request_key] = row["event_id"]
        return self._recorded

    def client(self) -> ChatClient | None:
        if self._client is None:
            key = None
            if self.settings.api_key_env:
                key = os.environ.get(self.settings.api_key_env)
                if not key:
                    self.down = f"the key variable {self.settings.api_key_env} is not set"
                    return None
            self._client = ChatClient(
                self.settings.base_url, self.settings.model, key, self.settings.timeout_s
            )
        return self._client

    # -- asking -----------------------------------------------------------------------

    def ask(self, task: str, story_id: str, items: Sequence[Item]) -> llm.Answer | None:
        if task not in self.settings.tasks:
            return None
        policy = self.ctx.settings.policy
        prompt = self.prompts[task]
        categories = [c.name for c in policy.categories]
        data = (
            llm.title_data(items[0], self.settings.max_input_chars)
            if task == "translate"  # one headline, asked in the brief's language
            else llm.story_data(items, self.settings.max_input_chars)
        )
        messages = llm.messages_for(
            prompt,
            data,
            topic=policy.topic.name,
            description=policy.topic.description,
            categories=", ".join(categories),
            language=llm.LANGUAGE_NAMES[self.ctx.settings.language],
        )
        key = llm.request_key(self.settings.model, prompt, messages)
        known = self.recorded().get(key)
        if known is not None:
            self.stats.reused += 1
            answer, _ = llm.parse_answer(task, json.dumps(known), categories)
            if key in self._recorded_by:
                self.answered_by[(task, story_id)] = self._recorded_by[key]
            return answer
        articles = [i.article_id for i in items]
        conversation = list(messages)
        for attempt in (1, 2, 3):
            why = self.down or self._over_budget()
            client = None if why else self.client()
            if client is None:
                return self._fallback(story_id, task, why or self.down or "no client")
            structured = self.structured
            reply = client.complete(conversation, task, structured=structured)
            answer, invalid = (None, None) if reply.error else llm.parse_answer(task, reply.text, categories)
            self._record(
                task,
                story_id,
                articles,
                prompt,
                conversation,
                reply,
                answer,
                invalid,
                attempt,
                key,
                structured,
            )
            if answer is not None:
                self.recorded()[key] = answer.model_dump()
                self._recorded_by[key] = self.answered_by[(task, story_id)] = self.last_call
                return answer
            if reply.status == 400 and self.structured and attempt < 3:
                self.structured = False  # a server without JSON-schema output: the prompt asks for JSON
                continue
            if reply.unreachable:
                self.down = f"{reply.error} ({self.host}, {self.settings.timeout_s:g} s timeout)"
                return self._fallback(story_id, task, self.down)
            if reply.status == 429 and attempt < 3:
                wait = reply.retry_after_s if reply.retry_after_s is not None else 1.0
                if wait > self.settings.max_retry_after_s:
                    return self._fallback(story_id, task, f"rate-limited for {wait:g} s (429)")
                time.sleep(wait)
                continue
            if reply.error and (reply.status or 0) >= 500 and attempt == 1:
                continue  # once more: a server error may pass
            if invalid is not None and attempt == 1:
                conversation = [
                    *messages,
                    {"role": "assistant", "content": (reply.text or "")[:2000]},
                    {
                        "role": "user",
                        "content": f"That answer is not valid: {invalid}. Reply with the JSON object only.",
                    },
                ]
                continue
            return self._fallback(story_id, task, reply.error or f"invalid answer: {invalid}")
        return self._fallback(story_id, task, "no valid answer after retries")

    def _over_budget(self) -> str | None:
        if self.stats.calls >= self.settings.max_calls_per_run:
            return f"over budget (max_calls_per_run = {self.settings.max_calls_per_run})"
        return None

    def _fallback(self, story_id: str, task: str, why: str) -> llm.Answer | None:
        """Record that this story keeps its offline result for ``task``, and why; always None."""
        self.stats.fallbacks.append((story_id, task, why))
        return None

    def _record(
        self,
        task: str,
        story_id: str,
        articles: list[str],
        prompt: llm.Prompt,
        messages: Sequence[dict],
        reply: llm.Reply,
        answer: llm.Answer | None,
        invalid: str | None,
        attempt: int,
        key: str,
        structured: bool,
    ) -> None:
        cost = (
            reply.tokens_in / 1000 * self.settings.price_in_per_1k
            + reply.tokens_out / 1000 * self.settings.price_out_per_1k
        )
        self.stats.calls += 1
        self.stats.tokens_in += reply.tokens_in
        self.stats.tokens_out += reply.tokens_out
        self.stats.cost += cost
        call = self.ctx.emit(
            "llm.called",
            {
                "task": task,
                "subject": story_id,
                "articles": articles,
                "model": self.settings.model,
                "server": self.host,
                "template": prompt.label,
                "messages": [dict(m) for m in messages],
                "params": {"temperature": 0, "response_format": "json_schema" if structured else None},
                "response": reply.text,
                "output": answer.model_dump() if answer is not None else None,
                "invalid": invalid,
                "error": reply.error,
                "tokens_in": reply.tokens_in,
                "tokens_out": reply.tokens_out,
                "latency_ms": reply.latency_ms,
                "cost": round(cost, 6),
                "attempt": attempt,
                "request_key": key,
            },
            subject=story_id,
            producer=f"llm@1:{self.settings.model}",
            sources=self.source_events(articles),
        )
        self.pending.append(call)
        self.last_call = call.event_id
        if len(self.pending) >= FLUSH_EVERY:
            self.flush()

    def flush(self) -> None:
        """Append the calls not yet in the log (a step flushes when it ends; every FLUSH_EVERY calls too)."""
        if self.pending:
            self.ctx.append(self.pending)
            self.pending = []

    def used(self, task: str, story_id: str) -> list[str]:
        """The ``llm.called`` event whose answer ``task`` took for ``story_id`` (none if it fell back)."""
        found = self.answered_by.get((task, story_id))
        return [found] if found else []

    def source_events(self, articles: Sequence[str]) -> list[str]:
        """The ``article.collected`` events of the articles a call read (the latest of each)."""
        store = self.ctx.store
        if not hasattr(self, "_collected"):
            frame = store.query(
                lambda: (
                    store.scan(self.ctx.reach, event_types=["article.collected"])
                    .select("subject_id", "event_id", "occurred_at")
                    .sort("occurred_at")
                    .group_by("subject_id")
                    .agg(pl.col("event_id").last())
                )
            )
            self._collected = dict(zip(frame["subject_id"], frame["event_id"], strict=True))
        return [self._collected[a] for a in articles if a in self._collected]


def analyst(ctx: RunContext) -> Analyst | None:
    """The run's analyst (one per run, so the budget and the down-server verdict hold run-wide)."""
    if ctx.settings.llm is None:
        return None
    return ctx.analyst.get(lambda: Analyst(ctx))
