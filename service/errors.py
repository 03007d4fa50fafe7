"""Every error ctxdag raises on purpose. Each carries a stable code for clients.

Driver errors are translated into these in exactly one place:
`service.store.db.translate_driver_errors`.
"""
from __future__ import annotations


class CtxdagError(Exception):
    """Root of all expected errors. `code` is stable; `message` is for people."""

    code = "INTERNAL"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class NotFound(CtxdagError):
    code = "NOT_FOUND"

    def __init__(self, kind: str, id: str, message: str | None = None) -> None:
        super().__init__(message or f"{kind} {id!r} does not exist", kind=kind, id=id)
        self.kind = kind
        self.id = id


class BadInput(CtxdagError):
    code = "BAD_INPUT"


class ConfigurationError(CtxdagError):
    """A setting is malformed or out of range; the message names the variable.

    Raised by `service.config.Settings.from_env`, the one place settings are read.
    """

    code = "BAD_CONFIG"


class Conflict(CtxdagError):
    code = "CONFLICT"


class EventsExpired(CtxdagError):
    """The events after a subscriber's cursor are no longer kept: it reloads the session."""

    code = "EVENTS_EXPIRED"


class Unavailable(CtxdagError):
    """The database cannot be reached or did not answer in time."""

    code = "UNAVAILABLE"


class StoreFailure(CtxdagError):
    """The database refused a statement for a reason that is our bug, not the input."""

    code = "INTERNAL"


class ModelError(CtxdagError):
    """A model or summarizer call failed (provider error, bad response)."""

    code = "MODEL_ERROR"


class ModelUnavailable(ModelError):
    """The provider is overloaded, rate-limited, timed out or unreachable."""

    code = "MODEL_UNAVAILABLE"


class ContextOverflow(ModelError):
    """The provider says the prompt does not fit the model's context window."""

    code = "CONTEXT_OVERFLOW"


class Unauthenticated(CtxdagError):
    """No valid bearer token where tokens are required."""

    code = "UNAUTHENTICATED"


class Forbidden(CtxdagError):
    """A valid token that does not grant what was asked (redaction: CTXDAG_REDACT_TOKENS)."""

    code = "FORBIDDEN"


class OperationTimedOut(CtxdagError):
    """A query or mutation ran past the operation timeout and was cancelled."""

    code = "TIMEOUT"

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the operation ran longer than {seconds:g} s and was cancelled "
                         "(CTXDAG_OPERATION_TIMEOUT_SECONDS)")
