"""The desk's own timer: every ``every`` seconds while it runs, the updates whose ``[delivery]
update_after`` window has closed are sent (``ops.acts.release_updates``), so that readers get the
update of an editing session when its window ends, not at the next act. With the desk closed, the
next act, run, ``brief deliver --due`` or the ``deliver-held`` deployment sends it (whichever comes
first: each sends under the day's lock, and only what a channel has not had)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ops import acts
from ops.workspace import Resources
from storage.errors import BriefError
from tasks.settings import Settings

EVERY_S = 30.0
log = logging.getLogger("dailybrief.desk")


def lifespan(
    settings: Settings, resources: Resources, every: float | None
) -> Callable[[Any], contextlib.AbstractAsyncContextManager]:
    """The application's lifespan: the timer runs while the desk serves (none when ``every`` is None,
    or nothing is coalesced: no channel, ``update_after = 0``)."""

    @contextlib.asynccontextmanager
    async def serving(app: Any) -> AsyncIterator[None]:
        delivery = settings.delivery
        task = None
        if every and delivery.update_after and delivery.channels:
            task = asyncio.create_task(flush(settings, resources, every))
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    return serving


async def flush(settings: Settings, resources: Resources, every: float) -> None:
    # a thread of the timer's own, not the event loop's default executor, which the server's loop
    # waits for as it closes: a send under way does not hold the desk's Ctrl-C (what it had sent
    # is recorded; the rest goes at the next tick, act or run)
    sender = ThreadPoolExecutor(max_workers=1, thread_name_prefix="desk-updates")
    loop = asyncio.get_running_loop()
    try:
        while True:
            await asyncio.sleep(every)
            try:
                await loop.run_in_executor(sender, acts.release_updates, settings, resources, None, log.info)
            except (BriefError, OSError) as problem:  # the next tick tries again
                log.warning(f"sending the updates due failed: {problem}")
    finally:
        sender.shutdown(wait=False, cancel_futures=True)
