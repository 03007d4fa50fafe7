"""A prompt as (system text, Messages API messages): what replay shows and token counts send.

The shape is service/turns/requests.py's Anthropic request, the one every provider call
uses, so a replayed prompt is the request that was sent. A prompt that ends in open tool
uses (a recorded external call may read one) is shaped as it is.
"""
from __future__ import annotations

from typing import Mapping, Sequence

from ..store import Node
from .requests import Options, Tool, anthropic_messages


def to_messages(nodes: Sequence[Node], media: Mapping[str, str] | None = None,
                tools: Sequence[Tool] = ()) -> tuple[str, list[dict]]:
    """A rendered node list (prompt order, ROOT first) as (system text, API messages).

    A pure function; the framing is requests.py's (summary stand-in, plain tool output,
    merged roles, "(conversation continues)" before a leading assistant message, tool
    blocks of tools not among `tools` as text), without the cache breakpoints a model
    call carries.
    """
    body = anthropic_messages(nodes, media or {}, Options(tools=tuple(tools)),
                              allow_open=True, cache=False)
    return body.get("system", ""), body["messages"]
