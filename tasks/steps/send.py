"""Sending a message through Apprise: the deliver step's I/O (the network, sleeps between
attempts, the clock). Every reason it reports has passed through ``redact``.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from storage.errors import ConfigError
from storage.events import utcnow
from tasks.channels import Endpoint, redact
from tasks.deliver import Attempt, Message, reasons_from_log


def send(
    channel: Endpoint,
    message: Message,
    *,
    environ: Mapping[str, str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], datetime] | None = None,
    on_failure: Callable[[Attempt, bool], None] | None = None,
) -> list[Attempt]:
    """Up to ``1 + retries`` attempts, waiting ``backoff_s``, doubling, between them (with jitter).

    ``on_failure(attempt, will_retry)`` is called after each failed attempt. Reasons carry no
    secret: every value the URL took from the environment is replaced by ``***``.
    """
    import apprise

    now = clock or utcnow
    env = dict(environ) if environ is not None else None
    secrets = channel.secrets(env)
    attempts: list[Attempt] = []
    for number in range(1, channel.retries + 2):
        try:
            url = channel.resolve(env)
            reason = _notify(apprise, url, message)
        except ConfigError as exc:
            reason = str(exc)
            attempts.append(Attempt(False, now(), _told(reason, secrets)))
            if on_failure:
                on_failure(attempts[-1], False)
            return attempts  # a missing variable does not come back by waiting
        if reason is None:
            attempts.append(Attempt(True, now()))
            return attempts
        attempts.append(Attempt(False, now(), _told(reason, secrets)))
        retry = number <= channel.retries
        if on_failure:
            on_failure(attempts[-1], retry)
        if retry:
            sleep(channel.backoff_s * 2 ** (number - 1) * random.uniform(0.9, 1.1))
    return attempts


MAX_REASON = 500


def _told(reason: str, secrets: list[str]) -> str:
    """A reason as events may keep it: redacted first, then cut (a cut first could split a secret)."""
    return redact(reason, secrets)[:MAX_REASON]


def rejects(url: str, secrets: list[str]) -> str | None:
    """Why Apprise would not take ``url`` (its scheme unknown, a part missing or malformed), or
    None; nothing is sent, and Apprise's own lines stay out of every log."""
    import apprise

    logger = logging.getLogger("apprise")
    propagate = logger.propagate
    logger.propagate = False
    try:
        with apprise.LogCapture(level=logging.WARNING, fmt="%(levelname)s %(message)s") as captured:
            plugin = apprise.Apprise.instantiate(url)
            lines = reasons_from_log(captured.getvalue())
    except Exception as exc:  # a plugin raised while reading its URL
        return _told(f"{type(exc).__name__}: {exc}", secrets)
    finally:
        logger.propagate = propagate
    if plugin is not None:
        return None
    scheme = url.split("://", 1)[0] if "://" in url else "?"
    said = "; ".join(dict.fromkeys(lines))
    return _told(
        f"Apprise does not accept this URL (scheme {scheme!r})" + (f": {said}" if said else ""), secrets
    )


def _notify(apprise: Any, url: str, message: Message) -> str | None:
    """One attempt; ``None`` when the service took the message, else why not."""
    logger = logging.getLogger("apprise")
    propagate = logger.propagate
    logger.propagate = False  # Apprise's own lines stay out of every other log
    try:
        client = apprise.Apprise()
        if not client.add(url):
            scheme = url.split("://", 1)[0] if "://" in url else "?"
            return f"Apprise does not accept this URL (scheme {scheme!r}); see the Apprise wiki for its form"
        with apprise.LogCapture(level=logging.DEBUG, fmt="%(levelname)s %(message)s") as captured:
            ok = client.notify(
                title=message.subject,
                body=message.body,
                body_format=message.format,
                notify_type=message.kind,
            )
            lines = reasons_from_log(captured.getvalue())
    except Exception as exc:  # an Apprise plugin raised: the reason is the exception
        return f"{type(exc).__name__}: {exc}"
    finally:
        logger.propagate = propagate
    if ok:
        return None
    return "; ".join(dict.fromkeys(lines)) or "the service did not accept the message"
