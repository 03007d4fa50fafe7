"""The asynchronous client: the same methods as Client (ctxdag.client.sync), awaited."""
from __future__ import annotations

from typing import Any, Iterable

import httpx

from . import inputs as shape
from .errors import CtxdagError, TurnFailed, translated
from .generated.aio import enums, input_types
from .generated.aio.client import GeneratedClient
from .generated.aio.begin_turn import BeginTurnBeginTurn as Draft
from .generated.aio.fragments import MessageFields as Message
from .generated.aio.fragments import SessionFields as Session
from .generated.aio.fragments import TurnFields as Turn
from .generated.aio.import_transcript import ImportTranscriptImportTranscript as TranscriptImport
from .generated.aio.list_sessions import ListSessionsSessions as SessionPage
from .generated.aio.render import RenderSessionRender as Render
from .generated.aio.search import SearchSearch as SearchPage
from .generated.aio.search import SearchSearchNodes as SearchHit
from .generated.aio.trace import TraceCall as Call
from .tools import Tool, ToolResult, as_text, call_tool, settled, tool_uses

__all__ = ["Draft", "AsyncClient", "Call", "Message", "Render", "SearchHit", "SearchPage", "Session",
           "SessionPage", "TranscriptImport", "Turn"]

DEFAULT_TIMEOUT = 300.0  # a turn waits for the model


class AsyncClient:
    """`AsyncClient(url, token)`: url is the service's address (or its /graphql endpoint),
    token one of its API tokens (none in loopback mode). Use it as an async context manager,
    or aclose()."""

    def __init__(self, url: str, token: str | None = None, *,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self._http = httpx.AsyncClient(headers=shape.auth_headers(token), timeout=timeout)
        self.api = GeneratedClient(url=shape.endpoint(url), http_client=self._http)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- sessions

    async def create_session(self, title: str | None = None,
                             system_prompt: str | None = None, *, project: str | None = None,
                             extra_meta: dict | None = None) -> Session:
        with translated():
            return (await self.api.create_session(
                title=title, system_prompt=system_prompt, project=project,
                extra_meta=extra_meta)).create_session

    async def get_session(self, session_id: str) -> Session:
        with translated():
            return (await self.api.get_session(id=session_id)).session

    async def list_sessions(self, *, tool: str | None = None, project: str | None = None,
                            text: str | None = None, since: str | None = None,
                            until: str | None = None, order_by: str = "CREATED",
                            first: int | None = None, after: str | None = None) -> SessionPage:
        """One page (`nodes`, `page_info`, `total_count`), newest first by CREATED or
        LAST_ACTIVITY; pass page_info.end_cursor as `after` for the next."""
        where = shape.session_filter(input_types, tool=tool, project=project, text=text,
                                     since=since, until=until)
        with translated():
            return (await self.api.list_sessions(
                filter_=where, order_by=enums.SessionOrder(order_by), first=first,
                after=after)).sessions

    # -- turns

    async def send_message(self, session_id: str, content: str, *,
                           tools: Iterable[Tool] | None = None,
                           tool_choice: str | None = None) -> Turn:
        with translated():
            return (await self.api.send_message(
                session_id, content=content, tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice))).send_message

    async def submit_tool_results(self, session_id: str, results: Iterable[ToolResult], *,
                                  tools: Iterable[Tool] | None = None,
                                  tool_choice: str | None = None) -> Turn:
        with translated():
            return (await self.api.submit_tool_results(
                session_id, shape.result_inputs(input_types, results),
                tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice),
            )).submit_tool_results

    async def retry(self, node_id: str, *, tools: Iterable[Tool] | None = None,
                    tool_choice: str | None = None) -> Turn:
        with translated():
            return (await self.api.retry(
                node_id, tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice))).retry

    async def edit_message(self, node_id: str, content: str, *, tools: Iterable[Tool] | None = None,
                           tool_choice: str | None = None) -> Turn:
        with translated():
            return (await self.api.edit_message(
                node_id, content=content, tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice))).edit_message

    async def begin_turn(self, session_id: str, content: str | None = None, *,
                         results: Iterable[ToolResult] | None = None,
                         tools: Iterable[Tool] | None = None, tool_choice: str | None = None,
                         format: str = "ANTHROPIC_MESSAGES", model: str | None = None,
                         max_tokens: int | None = None,
                         ttl_seconds: int | None = None) -> Draft:
        """Bring your own model, first step: the message (or the tool `results`; neither:
        HEAD as it stands) is written and the turn's render drafted. `draft.request` is the
        body to send your model (`format`: ANTHROPIC_MESSAGES or OPENAI_CHAT, with `model`
        and `max_tokens`); answer with complete_turn(draft.id, …) before draft.expires_at."""
        with translated():
            return (await self.api.begin_turn(
                session_id, enums.RequestFormat(format), content=content,
                tool_results=None if results is None else shape.result_inputs(input_types,
                                                                              results),
                tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice),
                ttl_seconds=ttl_seconds, model=model, max_tokens=max_tokens)).begin_turn

    async def complete_turn(self, draft_id: str, client_key: str, model: str, *,
                            content: str | None = None, blocks: Iterable[Any] | None = None,
                            usage: Any = None, stop_reason: str | None = None,
                            provider: str | None = None, error: str | None = None,
                            error_code: str = "MODEL_ERROR") -> Turn:
        """Bring your own model, second step: the reply (`content`, or `blocks` as the
        Anthropic API returns them, SDK objects or dicts) with its `usage` (a dict or the
        SDK's Usage) and `stop_reason`; or `error` (with `error_code`: MODEL_ERROR,
        MODEL_UNAVAILABLE, CONTEXT_OVERFLOW) when the call failed. `client_key` names the
        attempt: the same key again returns what the first completion stored."""
        with translated():
            return (await self.api.complete_turn(
                draft_id, client_key, model, content=content,
                blocks=shape.reply_blocks(input_types, blocks),
                usage=shape.usage_input(input_types, usage), stop_reason=stop_reason,
                provider=provider,
                error=shape.failure_input(input_types, enums, error, error_code))).complete_turn

    async def run_agent(self, session_id: str, content: str, tools: Iterable[Tool], *,
                        tool_choice: str | None = None, max_steps: int = 25) -> Turn:
        """Sends the message, then answers every tool use of each reply with the tools'
        functions and submits the results, until a reply calls no tool; returns that Turn.
        TurnFailed when a turn gets no reply; CtxdagError TOO_MANY_STEPS after max_steps."""
        tools = list(tools)
        by_name = {t.name: t for t in tools}
        turn = await self.send_message(session_id, content, tools=tools, tool_choice=tool_choice)
        for _ in range(max_steps):
            if turn.error_code or turn.reply is None:
                raise TurnFailed(turn)
            if not turn.open_tool_use_ids:
                return turn
            results = []
            for use in tool_uses(turn.reply):
                value, failure = call_tool(by_name, use)
                if failure is None:
                    value, failure = await settled(value)
                results.append(ToolResult(use.id, failure or as_text(value), failure is not None))
            turn = await self.submit_tool_results(session_id, results, tools=tools,
                                                  tool_choice=tool_choice)
        raise CtxdagError("TOO_MANY_STEPS", f"the agent loop stopped after {max_steps} steps")

    # -- what a call read

    async def render(self, session_id: str, head_id: str | None = None) -> Render:
        with translated():
            return (await self.api.render(session_id, head_id=head_id)).session.render

    async def request(self, session_id: str, format: str = "ANTHROPIC_MESSAGES", *,
                      head_id: str | None = None, model: str | None = None,
                      max_tokens: int | None = None, tools: Iterable[Tool] | None = None,
                      tool_choice: str | None = None) -> dict[str, Any]:
        """The exact provider request body of the render (ANTHROPIC_MESSAGES, OPENAI_CHAT)."""
        with translated():
            return (await self.api.render_request(
                session_id, enums.RequestFormat(format), head_id=head_id, model=model,
                max_tokens=max_tokens, tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice),
            )).session.render.request

    async def trace(self, call_id: str) -> Call:
        """A model call: what it read (reads, in prompt order), its tools, its replay."""
        with translated():
            return (await self.api.trace(call_id)).call

    # -- search and import

    async def search(self, query: str, *, session_id: str | None = None,
                     roles: Iterable[str] | None = None, kinds: Iterable[str] | None = None,
                     first: int | None = None, after: str | None = None) -> SearchPage:
        with translated():
            return (await self.api.search(
                query, session_id=session_id,
                roles=None if roles is None else [enums.Role(r) for r in roles],
                kinds=None if kinds is None else [enums.SearchKind(k) for k in kinds],
                first=first, after=after)).search

    async def import_transcript(self, content: str, *, format: str | None = None,
                                file_name: str | None = None,
                                strict: bool = False) -> TranscriptImport:
        with translated():
            return (await self.api.import_transcript(
                content, strict,
                format=None if format is None else enums.TranscriptFormat(format),
                file_name=file_name)).import_transcript
