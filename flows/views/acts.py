"""What the editor's commands (``brief review``, ``deliver``, ``approve``, ``correct``, ``retract``)
print of an act's delivery."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from flows.views.console import styled

if TYPE_CHECKING:  # at run time it would load pyarrow and polars before a command needs them
    from ops.acts import DeliveryOutcome


def show_delivery(out: Console, outcome: DeliveryOutcome) -> None:
    """One line per channel: sent, failed (and how to resend), or why not."""
    for sent in outcome.sent:
        if sent.ok:
            out.print(
                f"  {sent.channel:<16} {sent.kind} v{sent.version} delivered ({sent.attempts} attempt(s))"
            )
        else:
            out.print(
                styled(
                    f"  {sent.channel:<16} ",
                    ("failed", "red"),
                    f" after {sent.attempts} attempt(s): {sent.reason}",
                )
            )
    for name, why in outcome.skipped:
        out.print(f"  {name:<16} not sent: {why}", markup=False)
    if not outcome.sent and not outcome.skipped and outcome.waiting is None:
        out.print(f"  nothing to send: every channel has v{outcome.version} of {outcome.day}")
