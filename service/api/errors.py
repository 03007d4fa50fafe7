"""Every GraphQL error leaves with a stable `extensions.code`, on every transport;
unexpected ones are masked.

ctxdag's own errors keep their message and code. Errors in the request itself (syntax,
unknown fields, invalid enum values, variables missing or of the wrong type, limits) are
BAD_INPUT. Anything else is logged server-side and reaches the client as
"Unexpected error." with code INTERNAL. HTTP-level refusals (unparsable body, too large,
wrong host, a path nothing is served at, a method a path does not answer) use the same
shape through `error_body`.
"""
import contextlib
import logging
from typing import AsyncGenerator, TypeVar

from graphql import GraphQLError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Match
from strawberry.exceptions import MissingQueryError
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError

from ..errors import CtxdagError

log = logging.getLogger("ctxdag.api")
T = TypeVar("T")
# What strawberry finds wrong with a request before running it; over HTTP it raises them
# itself (transport.py answers), but a stream reports them as errors of its result.
REQUEST_ERRORS = (MissingQueryError, CannotGetOperationTypeError, InvalidOperationTypeError)


def extensions_of(error: CtxdagError) -> dict[str, str | int]:
    extensions = {"code": error.code}
    if getattr(error, "id", None):
        extensions["id"] = error.id
    if isinstance(error.details.get("line"), int):
        extensions["line"] = error.details["line"]  # the line of an imported transcript
    return extensions


def coded(error: GraphQLError) -> GraphQLError:
    if (error.extensions or {}).get("code"):
        return error
    original = error.original_error
    while isinstance(original, GraphQLError) and original.original_error is not None:
        original = original.original_error
    if isinstance(original, CtxdagError):
        return GraphQLError(original.message, nodes=error.nodes, source=error.source,
                            positions=error.positions, path=error.path,
                            original_error=original, extensions=extensions_of(original))
    if original is None or isinstance(original, (GraphQLError, *REQUEST_ERRORS)):
        return GraphQLError(error.message, nodes=error.nodes, source=error.source,
                            positions=error.positions, path=error.path,
                            extensions={**(error.extensions or {}), "code": "BAD_INPUT"})
    log.error("unexpected error in %s", error.path, exc_info=original)
    return GraphQLError("Unexpected error.", nodes=error.nodes, path=error.path,
                        extensions={"code": "INTERNAL"})


def error_body(message: str, code: str = "BAD_INPUT") -> dict:
    return {"data": None, "errors": [{"message": message, "extensions": {"code": code}}]}


METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")


def allowed_methods(request: Request) -> list[str]:
    """The methods some route answers at the request's path; none when a route took the
    request's own method and refused it itself (static files)."""
    def answered(method: str) -> bool:
        scope = {**request.scope, "method": method}
        return any(route.matches(scope)[0] is Match.FULL for route in request.app.router.routes)

    return [] if answered(request.method) else [m for m in METHODS if answered(m)]


# A refusal names no part of the path it refuses (a link can put markup there), and says
# its body is the JSON its type says.
NOSNIFF = {"x-content-type-options": "nosniff"}


async def route_refused(request: Request, refused: HTTPException) -> JSONResponse:
    """The routing's own refusals (Starlette's), in the shape of every other."""
    headers = {**dict(refused.headers or {}), **NOSNIFF}
    if refused.status_code == 404:
        message, code = "nothing is served at this path", "NOT_FOUND"
    elif refused.status_code == 405:
        allowed = allowed_methods(request) or [
            m.strip() for m in headers.get("Allow", "").split(",") if m.strip()]
        message, code = f"{request.method} is not answered at this path", "BAD_INPUT"
        if allowed:
            headers["Allow"] = ", ".join(allowed)
            message += f"; {' and '.join(allowed)} {'are' if len(allowed) > 1 else 'is'}"
    else:
        message = refused.detail
        code = "BAD_INPUT" if refused.status_code < 500 else "INTERNAL"
    return JSONResponse(error_body(message, code), status_code=refused.status_code,
                        headers=headers)


def with_codes(result: T) -> T:
    errors = getattr(result, "errors", None)
    if errors:
        result.errors = [coded(e) for e in errors]
    return result


async def coded_stream(results: AsyncGenerator[T, None]) -> AsyncGenerator[T, None]:
    async with contextlib.aclosing(results):
        async for result in results:
            yield with_codes(result)
