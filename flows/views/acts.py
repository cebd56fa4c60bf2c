"""What the editor's commands (``brief review``, ``deliver``, ``approve``, ``correct``, ``retract``)
print of an act's delivery."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Protocol

from rich.console import Console

from flows.views.console import styled
from flows.views.text import counted


class Message(Protocol):
    """One send of a delivery, as the line for it shows it."""

    @property
    def channel(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def ok(self) -> bool: ...
    @property
    def attempts(self) -> int: ...
    @property
    def reason(self) -> str: ...


class Delivery(Protocol):
    """What a delivery did, as these lines show it: the ``DeliveryOutcome`` the acts of ``ops.acts``
    return (a command never names the steps it is made by)."""

    @property
    def day(self) -> date: ...
    @property
    def version(self) -> int | None: ...
    @property
    def sent(self) -> Sequence[Message]: ...
    @property
    def skipped(self) -> Sequence[tuple[str, str]]: ...
    @property
    def waiting(self) -> str | None: ...


def show_delivery(out: Console, outcome: Delivery) -> None:
    """One line per channel: sent, failed (and how to resend), or why not."""
    for sent in outcome.sent:
        if sent.ok:
            out.print(
                f"  {sent.channel:<16} {sent.kind} v{sent.version} "
                f"delivered ({counted(sent.attempts, 'attempt')})"
            )
        else:
            out.print(
                styled(
                    f"  {sent.channel:<16} ",
                    ("failed", "red"),
                    f" after {counted(sent.attempts, 'attempt')}: {sent.reason}",
                )
            )
    for name, why in outcome.skipped:
        out.print(f"  {name:<16} not sent: {why}", markup=False)
    if not outcome.sent and not outcome.skipped and outcome.waiting is None:
        out.print(f"  nothing to send: every channel has v{outcome.version} of {outcome.day}")
