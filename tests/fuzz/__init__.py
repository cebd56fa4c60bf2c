"""Fuzz tests (hypothesis) over what the pipeline reads from outside: feed bytes, config files,
answers files, a language model's replies and a channel's errors.

Each target ends in a completed result or one of the project's errors with a one-line message;
never another exception, never a secret in an event or a message, and nothing written when the
input is refused. The settings are fixed (``derandomize``, no example database) so that CI runs
the same examples every time; every target runs ``EXAMPLES`` of them.
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, settings

EXAMPLES = 300
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=(
        Phase.explicit,
        Phase.generate,
        Phase.shrink,
    ),  # no explain phase: it re-runs a failure hundreds of times
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)


def one_line(message: str) -> bool:
    """A message a terminal shows as one line: no line break of any kind, not empty."""
    return bool(message.strip()) and len(message.splitlines()) == 1 and "\r" not in message
