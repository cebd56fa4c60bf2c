"""The project's errors: one root, a few named kinds.

Bad *input data* (a malformed feed, an unparsable date inside an item) is recorded as an
event, never raised. These exceptions are for mistakes a user or a caller must fix; each
message is one line that says what is wrong and how to fix it.
"""


class BriefError(Exception):
    """Root of every error this project raises on purpose."""


class ConfigError(BriefError):
    """The configuration (file, variable or option) is missing or invalid."""


class UnknownEventType(BriefError):
    """An event type (or schema version) that the registry does not know."""


class InvalidPayload(BriefError):
    """A payload that does not match the model registered for its event type."""


class StoreError(BriefError):
    """The event store cannot be opened, read or written."""


class InputError(BriefError):
    """A command-line argument or other user input is malformed."""


class ActConflict(InputError):
    """An act on something another act changed meanwhile (an undo naming a retraction that no longer
    stands, another one standing in its place): refused, nothing written; the desk answers 409."""


class StaleAct(InputError):
    """An act made from an earlier version of a day's brief than the current one, on something that
    changed since: ``seen`` the version the form was made from, ``current`` the day's version now,
    ``changes`` what changed (a line per item), ``acts`` the acts (or runs) that changed it."""

    def __init__(
        self,
        message: str,
        seen: int,
        current: int,
        changes: list[str] | None = None,
        acts: list[str] | None = None,
    ) -> None:
        super().__init__(message)
        self.seen = seen
        self.current = current
        self.changes = changes or []
        self.acts = acts or []
