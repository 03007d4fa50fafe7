"""The MCP server (the official SDK's MCPServer): the four tools, each over the ledger of
the tenant the request speaks for.

A tool's result is its JSON, as structured content and as the text of its one content
block; a ctxdag error is a tool error (isError) whose text is its code and message
(`NOT_FOUND: session 'x' does not exist`), and whose structured content is
`{"error": {"code", "message"}}`.
"""
from __future__ import annotations

from typing import Annotated, Any, Awaitable, Callable

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from ..errors import CtxdagError
from ..store import Ledger
from . import tools

# The tenant's ledger for one tool call (stdio: the configured tenant's; HTTP: the
# tenant of the call's bearer token).
LedgerFor = Callable[[Context], Ledger]

TOOL_NAMES = ("search", "expand", "render", "trace")
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False,
                             idempotent_hint=True, open_world_hint=False)
INSTRUCTIONS = (
    "ctxdag keeps every turn of the agent sessions it stores, including those a compaction "
    "replaced with a summary. `search` finds text across sessions and says whether the model "
    "still reads each hit (state in_context, pinned, summarized by which summary, "
    "not_rendered, other_branch, deleted); `expand` returns the turns a summary covers, "
    "verbatim, a page at a time; `render` shows what the model reads at a head; `trace` "
    "shows what a recorded model call read.")


def mcp_server(ledger_for: LedgerFor) -> MCPServer:
    # The SDK configures the root logger when it builds a server (basicConfig, which does
    # nothing once logging is configured); WARNING keeps the level Python's default, so
    # neither `ctxdag serve` nor an MCP client's stderr hears of every tool call.
    server = MCPServer("ctxdag", instructions=INSTRUCTIONS, log_level="WARNING")

    async def answer(ctx: Context, operation: Callable[[Ledger], Awaitable[dict[str, Any]]]
                     ) -> dict[str, Any] | CallToolResult:
        try:
            return await operation(ledger_for(ctx))
        except CtxdagError as e:
            return CallToolResult(is_error=True, content=[TextContent(type="text", text=str(e))],
                                  structured_content={"error": {"code": e.code,
                                                                "message": e.message}})

    @server.tool(annotations=_READ_ONLY)
    async def search(
            ctx: Context,
            query: Annotated[str, Field(description='words (all must match), "a phrase", '
                                                    '-excluded, prefix*')],
            session_id: Annotated[str | None, Field(description="only this session's "
                                                                "nodes")] = None,
            head_id: Annotated[str | None, Field(description="with session_id: the state "
                                                             "at this head, not HEAD")] = None,
            roles: Annotated[list[str] | None, Field(
                description="only nodes of these roles: system, user, assistant, tool, "
                            "summary, carry")] = None,
            first: Annotated[int | None, Field(description="hits per page, 1 to 100 "
                                                           "(default 20)")] = None,
            after: Annotated[str | None, Field(description="next_cursor of the previous "
                                                           "page")] = None,
    ) -> dict[str, Any]:
        """Full-text search of the stored sessions' messages, tool calls and results,
        thinking, summaries, labels and titles. Each hit has a snippet and its state in the
        model's context at the session's HEAD (or head_id): in_context, pinned, summarized
        (summary_id names the summary standing in for it: `expand` it), not_rendered,
        other_branch or deleted."""
        return await answer(ctx, lambda ledger: tools.search_hits(
            ledger, query, session_id, head_id, roles, first, after))

    @server.tool(annotations=_READ_ONLY)
    async def expand(
            ctx: Context,
            summary_id: Annotated[str, Field(description="a summary the head's render "
                                                         "shows")],
            cursor: Annotated[str | None, Field(description="next_cursor of the previous "
                                                            "page")] = None,
            head_id: Annotated[str | None, Field(description="the head whose render shows "
                                                             "the summary (default: the "
                                                             "session's HEAD)")] = None,
            budget_tokens: Annotated[int | None, Field(
                description=f"tokens per page (default {tools.DEFAULT_BUDGET_TOKENS})")] = None,
    ) -> dict[str, Any]:
        """The turns a summary covers, verbatim and in order, a page within a token budget
        at a time (a tool call and its result are never split). Follow next_cursor until
        it is null to read them all."""
        return await answer(ctx, lambda ledger: tools.expanded_summary(
            ledger, summary_id, cursor, head_id, budget_tokens))

    @server.tool(annotations=_READ_ONLY)
    async def render(
            ctx: Context,
            session_id: str,
            head_id: Annotated[str | None, Field(description="a node id (default: the "
                                                             "session's HEAD)")] = None,
    ) -> dict[str, Any]:
        """What the model reads at a head, in prompt order: each node's id, role and text
        (summaries standing in for what they cover, pinned turns, the retained tail)."""
        return await answer(ctx, lambda ledger: tools.rendered_nodes(ledger, session_id,
                                                                    head_id))

    @server.tool(annotations=_READ_ONLY)
    async def trace(ctx: Context, call_id: str) -> dict[str, Any]:
        """What a recorded model call read, in prompt order, and whether today's render of
        its head is still that prompt (what was added and dropped since)."""
        return await answer(ctx, lambda ledger: tools.traced_call(ledger, call_id))

    return server
