"""The language model's client: the ``openai`` SDK pointed at any chat-completions server.

The I/O of the run's ``Analyst`` (``tasks/steps/llm.py``): the network and the request's
latency. What a request holds and how an answer is read are ``tasks/llm.py``'s.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from tasks.llm import Reply, schema_for


class ChatClient:
    """The ``openai`` SDK pointed at any chat-completions server; no retries of its own (ours are logged)."""

    def __init__(self, base_url: str, model: str, api_key: str | None, timeout_s: float) -> None:
        from openai import OpenAI

        self.model, self._key = model, api_key
        self._client = OpenAI(
            base_url=base_url, api_key=api_key or "not-needed", timeout=timeout_s, max_retries=0
        )

    def _scrub(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def complete(self, messages: Sequence[dict], task: str, *, structured: bool = True) -> Reply:
        """One request; ``structured`` asks for the task's JSON schema in ``response_format``
        (servers that refuse it are asked again without, the prompt saying what JSON to give)."""
        import openai

        started = time.perf_counter()

        def elapsed() -> int:
            return round((time.perf_counter() - started) * 1000)

        try:
            extra: dict[str, Any] = (
                {"response_format": {"type": "json_schema", "json_schema": schema_for(task)}}
                if structured
                else {}
            )
            response = self._client.chat.completions.create(  # type: ignore[call-overload]
                model=self.model,
                messages=list(messages),  # type: ignore[arg-type]
                temperature=0,
                **extra,
            )
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "unreachable"
            return Reply(None, 0, 0, elapsed(), f"server {kind}", unreachable=True)
        except openai.APIStatusError as exc:
            retry_after = _retry_after(exc.response.headers.get("retry-after"))
            message = self._scrub(str(exc).splitlines()[0])[:200]
            return Reply(
                None, 0, 0, elapsed(), f"HTTP {exc.status_code}: {message}", exc.status_code, retry_after
            )
        except openai.OpenAIError as exc:
            return Reply(None, 0, 0, elapsed(), self._scrub(f"{exc.__class__.__name__}: {exc}")[:200])
        except (ValueError, RecursionError) as exc:  # a body labelled JSON that the SDK cannot read as such
            why = "nested too deeply" if isinstance(exc, RecursionError) else type(exc).__name__
            return Reply(None, 0, 0, elapsed(), f"not a chat completion: the body is not JSON ({why})")
        return self._read(response, elapsed())

    def _read(self, response: Any, latency_ms: int) -> Reply:
        """A 200 answer as a Reply; one that is not a chat completion is an error, never an exception."""
        if not hasattr(response, "choices"):  # the SDK hands back the body as text when it is not JSON
            return Reply(
                None, 0, 0, latency_ms, self._scrub(f"not a chat completion: {str(response)[:80]!r}")
            )
        choices = response.choices if isinstance(response.choices, list) else []
        message = getattr(choices[0], "message", None) if choices else None
        if message is None:
            return Reply(None, 0, 0, latency_ms, "no message in the answer (no choices, or message: null)")
        content = getattr(message, "content", None)
        text = content if isinstance(content, str) else None
        usage = getattr(response, "usage", None)
        if usage is None:  # some servers do not count: the answer stands, its tokens are 0
            return Reply(text, 0, 0, latency_ms)
        counts = (
            _count(getattr(usage, "prompt_tokens", None)),
            _count(getattr(usage, "completion_tokens", None)),
        )
        if counts[0] is None or counts[1] is None:
            return Reply(None, 0, 0, latency_ms, "usage is not token counts: the answer is not used")
        return Reply(text, counts[0], counts[1], latency_ms)


def _count(value: Any) -> int | None:
    """A token count as the protocol gives it (a whole number, 0 or more), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        return None
    return int(value) if value != float("inf") else None


def _retry_after(value: Any) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except (TypeError, ValueError):
        return None
