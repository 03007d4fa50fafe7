"""Text a client sends that is not Unicode.

JSON may spell half of a UTF-16 surrogate pair without its other half (`"\\ud800"`), and
a body may carry its bytes; Python decodes either into a string no Unicode text holds,
which can be neither hashed, stored nor sent to Neo4j. transport.py refuses an HTTP
request or a websocket message holding one, BAD_INPUT, before anything runs.
"""
from __future__ import annotations

import re

_SURROGATE = re.compile(r"[\ud800-\udfff]")


def lone_surrogate(value: object) -> str | None:
    """Why a decoded JSON value is not Unicode text (a string or key in it holds a lone
    surrogate), or None. Walks it without recursion: it may nest as deeply as the
    decoder follows."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            found = None if item.isascii() else _SURROGATE.search(item)
            if found is not None:
                return (f"the request holds \"\\u{ord(found.group()):04x}\", half of a UTF-16 "
                        "surrogate pair without its other half, which is no character: "
                        "JSON text must be Unicode")
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return None
