"""Every GraphQL error leaves with a stable `extensions.code`; unexpected ones are masked.

ctxdag's own errors keep their message and code. Errors in the query itself (syntax,
unknown fields, invalid enum values, limits) are BAD_INPUT. Anything else is logged
server-side and reaches the client as "Unexpected error." with code INTERNAL.
"""
import logging
from typing import Iterator

from graphql import GraphQLError
from strawberry.extensions import SchemaExtension

from ..errors import CtxdagError

log = logging.getLogger("ctxdag.api")


def extensions_of(error: CtxdagError) -> dict[str, str]:
    extensions = {"code": error.code}
    if getattr(error, "id", None):
        extensions["id"] = error.id
    return extensions


def coded(error: GraphQLError) -> GraphQLError:
    original = error.original_error
    if isinstance(original, CtxdagError):
        return GraphQLError(original.message, nodes=error.nodes, source=error.source,
                            positions=error.positions, path=error.path,
                            original_error=original, extensions=extensions_of(original))
    if original is None:
        return GraphQLError(error.message, nodes=error.nodes, source=error.source,
                            positions=error.positions, path=error.path,
                            extensions={"code": "BAD_INPUT", **(error.extensions or {})})
    log.error("unexpected error in %s", error.path, exc_info=original)
    return GraphQLError("Unexpected error.", nodes=error.nodes, path=error.path,
                        extensions={"code": "INTERNAL"})


class CodedErrors(SchemaExtension):
    def on_operation(self) -> Iterator[None]:
        yield
        result = self.execution_context.result
        if result is not None and result.errors:
            result.errors = [coded(e) for e in result.errors]
