"""Relay's object identification: every id names one object, and its prefix says which
kind (service/model/ids.py), so `node(id)` needs no type beside the id."""
from __future__ import annotations

from typing import Any, Callable

from strawberry.types import Info

from ..errors import NotFound
from .types import Node, call_out, message_out, session_out

MAX_NODES_PER_LOOKUP = 1000

_KINDS: dict[str, tuple[str, Callable[[Any], Node]]] = {  # id prefix: (loader, GraphQL type)
    "ses": ("sessions", session_out),
    "nod": ("nodes", message_out),
    "cal": ("calls", call_out),
}

_RAISE = object()


async def resolve_node(info: Info, object_id: str, missing: Any = _RAISE) -> Node | None:
    """The object `object_id` names, through the request's loaders. An id that names
    nothing raises NotFound, or returns `missing` when one is given."""
    prefix = object_id.split("_", 1)[0]
    try:
        if prefix not in _KINDS:
            raise NotFound("object", object_id)
        loader, out = _KINDS[prefix]
        return out(await getattr(info.context.loaders, loader).load(object_id))
    except NotFound:
        if missing is _RAISE:
            raise
        return missing
