"""The recall tools the service answers itself (docs/guides/recall.md): their definitions, and
their answers as the tool_result blocks the ledger stores.

An answer also names the nodes whose text it quotes (`recalled_ids`): the tool message
carries them in its metadata, and every call whose prompt holds that message records a
READ edge to each of them (CallRecord.of_prompt), so provenance names the turns the model
read back. A bad input or a summary the head does not show is an error result the model
reads (is_error), never an exception of the turn.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import BadInput, CtxdagError
from ..model.blocks import ToolUse
from ..store import Ledger, Node
from .covered import MAX_HITS, search_covered
from .expand import ExpandPage, expand

HISTORY_SEARCH = "history_search"
HISTORY_EXPAND = "history_expand"
RECALLED_IDS = "recalled_ids"  # the tool message's metadata key naming the quoted nodes

DEFINITIONS: tuple[dict[str, Any], ...] = (
    {"name": HISTORY_SEARCH,
     "description": ("Searches the earlier turns of this conversation that a summary now "
                     "stands in for. Returns each match's id, role, a snippet and the "
                     "summary covering it (give that to history_expand)."),
     "input_schema": {"type": "object", "properties": {
         "query": {"type": "string", "description": "words or a \"quoted phrase\""},
         "first": {"type": "integer", "minimum": 1, "maximum": MAX_HITS,
                   "description": "how many matches (default 10)"}},
         "required": ["query"]}},
    {"name": HISTORY_EXPAND,
     "description": ("Returns the turns a summary of this conversation stands in for, "
                     "verbatim and in order, a page at a time; pass the cursor it gives "
                     "for the next page."),
     "input_schema": {"type": "object", "properties": {
         "summary_id": {"type": "string", "description": "the summary's id"},
         "cursor": {"type": "string", "description": "from the previous page"}},
         "required": ["summary_id"]}},
)
NAMES = frozenset(d["name"] for d in DEFINITIONS)


@dataclass(frozen=True)
class Answer:
    block: dict[str, Any]  # the tool_result block
    recalled_ids: tuple[str, ...]  # the nodes its text quotes


async def answer(ledger: Ledger, session_id: str, head_id: str, use: ToolUse,
                 budget_tokens: int) -> Answer:
    """The result of one recall tool use, asked at `head_id` (the reply that made it)."""
    try:
        text, recalled = await _run(ledger, session_id, head_id, use.name, use.input,
                                    budget_tokens)
    except CtxdagError as error:
        return Answer(_result(use.id, error.message, is_error=True), ())
    return Answer(_result(use.id, text), recalled)


async def _run(ledger: Ledger, session_id: str, head_id: str, name: str,
               given: Mapping[str, Any], budget_tokens: int) -> tuple[str, tuple[str, ...]]:
    unknown = set(given) - set(_properties(name))
    if unknown:
        raise BadInput(f"{name} takes {', '.join(_properties(name))}; not "
                       f"{', '.join(sorted(unknown))}")
    if name == HISTORY_SEARCH:
        hits = await search_covered(ledger, session_id, _string(given, "query"), head_id,
                                    given.get("first"))
        if not hits:
            return "No earlier turn a summary stands in for matches.", ()
        lines = [f"- {h.node_id} ({h.role.value}), covered by summary {h.summary_id}: "
                 f"{h.snippet.text}" for h in hits]
        return "\n".join(lines), tuple(dict.fromkeys(h.node_id for h in hits))
    cursor = given.get("cursor")
    if cursor is not None and not isinstance(cursor, str):
        raise BadInput("cursor must be the text a previous page gave")
    page = await expand(ledger, session_id, _string(given, "summary_id"), head_id,
                        budget_tokens, cursor)
    return expanded_text(page), tuple(n.id for n in page.turns)


def expanded_text(page: ExpandPage) -> str:
    """A page as the model reads it: each turn's text verbatim, tagged with id and role."""
    end = page.start + len(page.turns)
    head = (f"Turns {page.start + 1} to {end} of the {page.total} that summary "
            f"{page.summary_id} stands in for, verbatim, in order.")
    more = (f"More follow: call history_expand with summary_id \"{page.summary_id}\" and "
            f"cursor \"{page.next_cursor}\"." if page.next_cursor else "That is the last page.")
    return "\n\n".join([head, *(_turn(n) for n in page.turns), more])


def _turn(node: Node) -> str:
    return f"<turn id=\"{node.id}\" role=\"{node.role.value}\">\n{node.content}\n</turn>"


def _properties(name: str) -> list[str]:
    definition = next(d for d in DEFINITIONS if d["name"] == name)
    return list(definition["input_schema"]["properties"])


def _string(given: Mapping[str, Any], key: str) -> str:
    value = given.get(key)
    if not isinstance(value, str) or not value:
        raise BadInput(f"{key} must be given as text")
    return value


def _result(tool_use_id: str, text: str, *, is_error: bool = False) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id,
            "content": [{"type": "text", "text": text}], **({"is_error": True} if is_error else {})}


def recall_uses(blocks: Sequence[Any]) -> list[ToolUse]:
    """The reply's tool uses that call a recall tool."""
    return [b for b in blocks if isinstance(b, ToolUse) and b.name in NAMES]
