"""Bounds on what one GraphQL operation may cost, checked before the cost is paid.

A document's size after fragment expansion can be exponential in its length (each
fragment spreading the next one twice doubles it), so every limit here is measured in
one pass over the document with each fragment measured once. Only a document within
the limits goes on to graphql-core's validation, which then walks at most
MAX_SELECTIONS fields, and runs in a worker thread so the event loop keeps serving
other requests. In the same thread a valid operation then has its answer's size
estimated from the document and its variables (cost.py), and one that may hold more
values than CTXDAG_MAX_QUERY_COST allows is refused before anything runs; while it runs,
the lists that hold more than assumed add to its estimate (budget.py), and one
whose answer then passes the limit is refused whole. Execution is bounded in time by the
operation timeout.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, AsyncIterator, Iterator

from graphql import (
    DocumentNode, FieldNode, FragmentDefinitionNode, FragmentSpreadNode, GraphQLError,
    GraphQLSchema, InlineFragmentNode, OperationDefinitionNode, OperationType,
    SelectionSetNode,
)
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document

from ..errors import OperationTimedOut
from .budget import AnswerBudget, answer_budget, cost_error
from .cost import Estimate, estimate

MAX_QUERY_CHARS = 64 * 1024
MAX_TOKENS = 2000
MAX_DEPTH = 12
MAX_ALIASES = 20
MAX_SELECTIONS = 1000


@dataclass(frozen=True)
class Cost:
    """`depth`: levels of nested fields (of a document: below its root fields; introspection
    fields are left to graphql-core's MaxIntrospectionDepthRule); `aliases` and `selections`
    count fields as executed, every fragment spread expanded."""

    depth: int = 0
    aliases: int = 0
    selections: int = 0

    def nested(self, field: FieldNode) -> "Cost":
        """This cost as the selection set of `field`."""
        return Cost(self.depth + 1, self.aliases + (field.alias is not None), self.selections + 1)

    def __or__(self, other: "Cost") -> "Cost":
        """Two selections side by side."""
        return Cost(max(self.depth, other.depth), self.aliases + other.aliases,
                    self.selections + other.selections)


def measure(document: DocumentNode) -> Cost:
    """The cost of the document's operations, in time linear in the document.

    Unknown fragments and fragment cycles cost nothing here; graphql-core's own rules
    report them afterwards.
    """
    fragments = {d.name.value: d for d in document.definitions
                 if isinstance(d, FragmentDefinitionNode)}
    measured: dict[str, Cost] = {}
    entered: set[str] = set()

    def fragment(name: str) -> Cost:
        if name in measured:
            return measured[name]
        if name in entered or name not in fragments:
            return Cost()
        entered.add(name)
        measured[name] = cost = selections(fragments[name].selection_set)
        return cost

    def selections(selection_set: SelectionSetNode | None) -> Cost:
        total = Cost()
        for selection in selection_set.selections if selection_set else ():
            if isinstance(selection, FieldNode):
                if selection.name.value.startswith("__"):
                    total |= Cost(0, selection.alias is not None, 1)
                else:
                    total |= selections(selection.selection_set).nested(selection)
            elif isinstance(selection, InlineFragmentNode):
                total |= selections(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                total |= fragment(selection.name.value)
        return total

    total = Cost()
    for definition in document.definitions:
        if isinstance(definition, OperationDefinitionNode):
            cost = selections(definition.selection_set)
            total |= Cost(max(cost.depth - 1, 0), cost.aliases, cost.selections)
    return total


def over_limits(cost: Cost) -> str | None:
    """Why a document of this cost is refused, or None."""
    if cost.depth > MAX_DEPTH:
        return f"the query nests {cost.depth} levels deep; the limit is {MAX_DEPTH}"
    if cost.aliases > MAX_ALIASES:
        return (f"the query uses {cost.aliases} aliases (fragments expanded); "
                f"the limit is {MAX_ALIASES}")
    if cost.selections > MAX_SELECTIONS:
        return (f"the query selects {cost.selections} fields once its fragments are "
                f"expanded; the limit is {MAX_SELECTIONS}")
    return None


def over_cost(cost: Estimate, limit: int) -> GraphQLError | None:
    """The refusal of an operation whose answer may hold more than `limit` values."""
    if cost.total <= limit:
        return None
    return cost_error(cost.total, limit, cost.explain())


def checked(schema: GraphQLSchema, document: DocumentNode, rules: Any,
            operation_name: str | None, variables: Any, limit: int
            ) -> tuple[list[GraphQLError], Estimate | None]:
    """graphql-core's validation, then, for a valid operation, the cost estimate."""
    errors = validate_document(schema, document, rules)
    if errors:
        return errors, None
    cost = estimate(schema, document, operation_name, variables)
    refused = over_cost(cost, limit)
    return ([refused], None) if refused else ([], cost)


class BoundedValidation(SchemaExtension):
    """Refuses a document over the limits before any other rule runs; validates the rest,
    and estimates a valid operation's cost, off the event loop; runs a query or mutation
    within its estimate's budget."""

    budget: AnswerBudget | None = None

    async def on_validate(self) -> AsyncIterator[None]:
        context = self.execution_context
        document = context.graphql_document
        if document is not None and context.pre_execution_errors is None:
            reason = over_limits(measure(document))
            if reason is not None:
                context.pre_execution_errors = [GraphQLError(reason)]
            else:
                limit = context.context.runtime.settings.max_query_cost
                errors, cost = await asyncio.to_thread(
                    checked, context.schema._schema, document, context.validation_rules,
                    context.operation_name, context.variables, limit)
                context.pre_execution_errors = errors
                if cost is not None:
                    self.budget = AnswerBudget(cost, limit)
        yield

    def on_execute(self) -> Iterator[None]:
        if self.budget is None or \
                self.execution_context.operation_type is OperationType.SUBSCRIPTION:
            yield
            return
        token = answer_budget.set(self.budget)
        try:
            yield
        finally:
            answer_budget.reset(token)
        if self.budget.refusal is not None:
            raise self.budget.refusal


class OperationDeadline(SchemaExtension):
    """A query or mutation that runs longer than the operation timeout is cancelled;
    subscriptions are long-lived by design and are not."""

    async def on_execute(self) -> AsyncIterator[None]:
        context = self.execution_context
        if context.operation_type is OperationType.SUBSCRIPTION:
            yield
            return
        seconds = context.context.runtime.settings.operation_timeout_seconds
        try:
            async with asyncio.timeout(seconds):
                yield
        except TimeoutError:
            raise OperationTimedOut(seconds) from None
