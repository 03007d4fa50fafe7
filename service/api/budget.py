"""An operation's cost estimate (cost.py) kept while it runs.

The estimate assumes how many items a list the data sizes holds; a write can fill some far
beyond that (a message holds up to MAX_BLOCKS blocks, one import may fork a session a
thousand times). Their resolvers pass what they answer through `charged`, which adds the
items past the assumption, each as many values as the estimate counts one, and refuses
the operation once the total passes the limit: with the cost error, before the answer is
built further or sent.
"""
from __future__ import annotations

import contextvars
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence, TypeVar

from graphql import GraphQLError
from strawberry.types import Info

if TYPE_CHECKING:
    from .cost import Estimate

T = TypeVar("T")


def cost_error(total: int, limit: int, why: str) -> GraphQLError:
    return GraphQLError(
        f"query cost estimate {total:,} exceeds the limit {limit:,} "
        f"(CTXDAG_MAX_QUERY_COST){': ' + why if why else ''}; ask for fewer fields, "
        "smaller pages or fewer ids",
        extensions={"code": "BAD_INPUT", "costEstimate": total, "costLimit": limit})


@dataclass
class AnswerBudget:
    """`refusal`: the cost error, once the estimate has passed `limit`; the operation's
    answer is then that error alone (limits.BoundedValidation)."""

    estimate: "Estimate"
    limit: int
    refusal: GraphQLError | None = None

    def add(self, info: Info, items: int) -> None:
        path = ".".join(key for key in info.path.as_list() if isinstance(key, str))
        found = self.estimate.per_item.get((info.field_name, path))
        if self.refusal is None and found is not None and items > found[0].size:
            assumed, values = found
            self.estimate.total += (items - assumed.size) * values
            if self.estimate.total > self.limit:
                self.refusal = cost_error(
                    self.estimate.total, self.limit,
                    f"{path} holds {items:,} {assumed.what} where {assumed.size:,} were "
                    "assumed")
        if self.refusal is not None:
            raise self.refusal


answer_budget: contextvars.ContextVar[AnswerBudget | None] = contextvars.ContextVar(
    "ctxdag_answer_budget", default=None)


def charged(info: Info, items: Sequence[T]) -> Sequence[T]:
    """`items`, what an assumed list answers, counted against the running query's or
    mutation's budget (a subscription's events have none)."""
    budget = answer_budget.get()
    if budget is not None:
        budget.add(info, len(items))
    return items
