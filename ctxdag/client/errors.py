"""The one exception the client raises: ctxdag's error code (`extensions.code`) with the
message, whatever the transport said."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator

from .generated.sync import exceptions as sync_errors
from .generated.aio import exceptions as aio_errors


class CtxdagError(Exception):
    """`code` is the service's (BAD_INPUT, NOT_FOUND, CONFLICT, UNAUTHENTICATED, …), or
    HTTP_<status> when the answer was no GraphQL response. `errors`: every error as sent."""

    def __init__(self, code: str | None, message: str,
                 errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(f"{code}: {message}" if code else message)
        self.code = code
        self.message = message
        self.errors = errors or []

    @property
    def extensions(self) -> dict[str, Any]:
        """The first error's extensions (open_tool_use_ids and the like)."""
        return (self.errors[0].get("extensions") or {}) if self.errors else {}


class TurnFailed(CtxdagError):
    """A turn that stored the message but got no reply (the model call failed): the Turn's
    errorCode and error. `turn` is the Turn as returned."""

    def __init__(self, turn: Any) -> None:
        super().__init__(turn.error_code, turn.error or "the turn has no reply")
        self.turn = turn


@contextlib.contextmanager
def translated() -> Iterator[None]:
    """Turns the generated clients' exceptions into CtxdagError."""
    try:
        yield
    except (sync_errors.GraphQLClientGraphQLMultiError,
            aio_errors.GraphQLClientGraphQLMultiError) as e:
        errors = [error.original or {"message": error.message} for error in e.errors]
        first = e.errors[0]
        raise CtxdagError((first.extensions or {}).get("code"), first.message, errors) from None
    except (sync_errors.GraphQLClientHttpError, aio_errors.GraphQLClientHttpError) as e:
        raise CtxdagError(f"HTTP_{e.status_code}", e.response.text[:2000]) from None
