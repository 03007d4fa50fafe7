"""Every GraphQL error leaves with a stable `extensions.code`, on every transport;
unexpected ones are masked.

ctxdag's own errors keep their message and code. Errors in the request itself (syntax,
unknown fields, invalid enum values, variables missing or of the wrong type, limits) are
BAD_INPUT. Anything else is logged server-side and reaches the client as
"Unexpected error." with code INTERNAL. HTTP-level refusals (unparsable body, too large,
wrong host) use the same shape through `error_body`.
"""
import contextlib
import logging
from typing import AsyncGenerator, TypeVar

from graphql import GraphQLError

from ..errors import CtxdagError

log = logging.getLogger("ctxdag.api")
T = TypeVar("T")


def extensions_of(error: CtxdagError) -> dict[str, str]:
    extensions = {"code": error.code}
    if getattr(error, "id", None):
        extensions["id"] = error.id
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
    if original is None or isinstance(original, GraphQLError):
        return GraphQLError(error.message, nodes=error.nodes, source=error.source,
                            positions=error.positions, path=error.path,
                            extensions={**(error.extensions or {}), "code": "BAD_INPUT"})
    log.error("unexpected error in %s", error.path, exc_info=original)
    return GraphQLError("Unexpected error.", nodes=error.nodes, path=error.path,
                        extensions={"code": "INTERNAL"})


def error_body(message: str, code: str = "BAD_INPUT") -> dict:
    return {"data": None, "errors": [{"message": message, "extensions": {"code": code}}]}


def with_codes(result: T) -> T:
    errors = getattr(result, "errors", None)
    if errors:
        result.errors = [coded(e) for e in errors]
    return result


async def coded_stream(results: AsyncGenerator[T, None]) -> AsyncGenerator[T, None]:
    async with contextlib.aclosing(results):
        async for result in results:
            yield with_codes(result)
