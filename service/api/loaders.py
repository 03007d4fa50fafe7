"""Per-request DataLoaders: every field that reads the store goes through one, so a query
costs a constant number of statements however many sessions, nodes or calls it touches."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable, Hashable, Sequence, TypeVar

from strawberry.dataloader import DataLoader

from ..context.render import render_many
from ..errors import NotFound
from ..store import (Branch, Call, Ledger, Node, Page, Rendered, Session, Summary,
                     ToolSetVersion, Window)
from ..store.calls import CacheTotals, CallReading
from ..store.views import GraphRow

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
A = TypeVar("A", bound=Hashable)


def _by_key(fetch: Callable[[list[K]], Awaitable[Sequence[V]]], key: Callable[[V], K],
            kind: str) -> DataLoader[K, V]:
    """A loader over a `*_many` store call; a missing key loads as NotFound."""

    async def load(keys: list[K]) -> list[V | BaseException]:
        found = {key(item): item for item in await fetch(keys)}
        return [found.get(k, NotFound(kind, str(k))) for k in keys]

    return DataLoader(load)


def _per_argument(fetch: Callable[[list[str], A], Awaitable[dict[str, V]]]
                  ) -> DataLoader[tuple[str, A], V]:
    """Keys (id, argument) — a page window, a flag — fetched with one statement per
    distinct argument (sibling fields in a query share one)."""

    async def load(keys: list[tuple[str, A]]) -> list[V]:
        by_argument: dict[A, list[str]] = {}
        for record_id, argument in keys:
            by_argument.setdefault(argument, []).append(record_id)
        found = {}
        for argument, ids in by_argument.items():
            for record_id, value in (await fetch(list(dict.fromkeys(ids)), argument)).items():
                found[record_id, argument] = value
        return [found[k] for k in keys]

    return DataLoader(load)


def _grouped(fetch: Callable[[list[K]], Awaitable[dict[K, V]]]) -> DataLoader[K, V]:
    async def load(keys: list[K]) -> list[V]:
        found = await fetch(keys)
        return [found[k] for k in keys]

    return DataLoader(load)


@dataclass(frozen=True)
class Loaders:
    sessions: DataLoader[str, Session]
    nodes: DataLoader[str, Node]
    children: DataLoader[str, list[Node]]
    summaries: DataLoader[str, Summary]
    calls: DataLoader[str, Call]
    branches: DataLoader[str, list[Branch]]
    renders: DataLoader[tuple[str, str | None], Rendered]
    graphs: DataLoader[tuple[str, bool], list[GraphRow]]
    session_calls: DataLoader[tuple[str, Window], Page[Call]]
    readers: DataLoader[tuple[str, Window], Page[CallReading]]
    covering: DataLoader[str, list[str]]
    media: DataLoader[str, str | None]  # stored media data (base64) by hash
    tool_sets: DataLoader[str, list[dict] | None]  # the tools calls were offered, by hash
    labels: DataLoader[str, str | None]  # nodes' labels by node id (None: unlabeled)
    branch_names: DataLoader[str, str | None]  # names of the branches tips end, by tip id
    pins: DataLoader[str, bool | None]  # whether nodes are pinned, by node id
    carried: DataLoader[str, list[str]]  # the turns a carry node summarizes, chain order
    carriers: DataLoader[str, list[str]]  # the carry nodes summarizing a node, newest first
    quoting: DataLoader[str, list[str]]  # what may quote a redacted node, newest first
    quoted: DataLoader[str, list[str]]  # the redacted nodes a summary or carry may quote
    # prompt-cache totals by (session id, branch tip id or None for the whole session)
    cache_totals: DataLoader[tuple[str, str | None], CacheTotals]
    tool_set_histories: DataLoader[str, list[ToolSetVersion]]  # by session id, oldest first

    @classmethod
    def for_request(cls, ledger: Ledger) -> "Loaders":
        async def renders(keys: list[tuple[str, str | None]]):
            return await render_many(ledger, keys)

        return cls(
            sessions=_by_key(ledger.sessions.get_many, lambda s: s.id, "session"),
            nodes=_by_key(ledger.nodes.get_many, lambda n: n.id, "node"),
            children=_grouped(ledger.nodes.children_many),
            summaries=_by_key(ledger.summaries.get_many, lambda s: s.id, "summary"),
            calls=_by_key(ledger.calls.get_many, lambda c: c.id, "call"),
            branches=_grouped(ledger.branches.list_many),
            renders=DataLoader(renders),
            graphs=_per_argument(ledger.views.graph_many),
            session_calls=_per_argument(ledger.calls.session_pages),
            readers=_per_argument(ledger.calls.readers_pages),
            covering=_grouped(ledger.summaries.covering_many),
            media=DataLoader(_found(ledger.nodes.media)),
            tool_sets=DataLoader(_found(ledger.calls.tool_sets)),
            labels=DataLoader(_found(ledger.labels.get_many)),
            branch_names=DataLoader(_found(ledger.branch_names.get_many)),
            pins=DataLoader(_found(ledger.pins.get_many)),
            carried=_grouped(ledger.carries.carried_many),
            carriers=_grouped(ledger.carries.carriers_many),
            quoting=_grouped(ledger.redactions.quoting_many),
            quoted=_grouped(ledger.redactions.quoted_many),
            cache_totals=_grouped(ledger.calls.cache_totals),
            tool_set_histories=_grouped(ledger.tool_sets.histories),
        )


def _found(fetch: Callable[[list[K]], Awaitable[dict[K, V]]]
           ) -> Callable[[list[K]], Awaitable[list[V | None]]]:
    """A load over a fetch by content hash: a hash nothing is stored under loads as None."""

    async def load(keys: list[K]) -> list[V | None]:
        found = await fetch(keys)
        return [found.get(k) for k in keys]

    return load
