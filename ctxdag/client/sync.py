"""The synchronous client: ctxdag's API as methods, over the generated one."""
from __future__ import annotations

from typing import Any, Iterable

import httpx

from . import inputs as shape
from .errors import CtxdagError, TurnFailed, translated
from .generated.sync import enums, input_types
from .generated.sync.client import GeneratedClient
from .generated.sync.begin_turn import BeginTurnBeginTurn as Draft
from .generated.sync.fragments import MessageFields as Message
from .generated.sync.fragments import SessionFields as Session
from .generated.sync.fragments import TurnFields as Turn
from .generated.sync.import_transcript import ImportTranscriptImportTranscript as TranscriptImport
from .generated.sync.list_sessions import ListSessionsSessions as SessionPage
from .generated.sync.render import RenderSessionRender as Render
from .generated.sync.search import SearchSearch as SearchPage
from .generated.sync.search import SearchSearchNodes as SearchHit
from .generated.sync.trace import TraceCall as Call
from .tools import Tool, ToolResult, as_text, call_tool, tool_uses

__all__ = ["Draft", "Client", "Call", "Message", "Render", "SearchHit", "SearchPage", "Session",
           "SessionPage", "TranscriptImport", "Turn"]

DEFAULT_TIMEOUT = 300.0  # a turn waits for the model


class Client:
    """`Client(url, token)`: url is the service's address (or its /graphql endpoint), token
    one of its API tokens (none in loopback mode). Use it as a context manager, or close()."""

    def __init__(self, url: str, token: str | None = None, *,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        self._http = httpx.Client(headers=shape.auth_headers(token), timeout=timeout)
        self.api = GeneratedClient(url=shape.endpoint(url), http_client=self._http)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- sessions

    def create_session(self, title: str | None = None, system_prompt: str | None = None, *,
                       project: str | None = None, extra_meta: dict | None = None) -> Session:
        with translated():
            return self.api.create_session(title=title, system_prompt=system_prompt,
                                           project=project, extra_meta=extra_meta).create_session

    def get_session(self, session_id: str) -> Session:
        with translated():
            return self.api.get_session(id=session_id).session

    def list_sessions(self, *, tool: str | None = None, project: str | None = None,
                      text: str | None = None, since: str | None = None,
                      until: str | None = None, order_by: str = "CREATED",
                      first: int | None = None, after: str | None = None) -> SessionPage:
        """One page (`nodes`, `page_info`, `total_count`), newest first by CREATED or
        LAST_ACTIVITY; pass page_info.end_cursor as `after` for the next."""
        where = shape.session_filter(input_types, tool=tool, project=project, text=text,
                                     since=since, until=until)
        with translated():
            return self.api.list_sessions(filter_=where, order_by=enums.SessionOrder(order_by),
                                          first=first, after=after).sessions

    # -- turns

    def send_message(self, session_id: str, content: str, *,
                     tools: Iterable[Tool] | None = None, tool_choice: str | None = None) -> Turn:
        with translated():
            return self.api.send_message(
                session_id, content=content, tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice)).send_message

    def submit_tool_results(self, session_id: str, results: Iterable[ToolResult], *,
                            tools: Iterable[Tool] | None = None,
                            tool_choice: str | None = None) -> Turn:
        with translated():
            return self.api.submit_tool_results(
                session_id, shape.result_inputs(input_types, results),
                tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice),
            ).submit_tool_results

    def retry(self, node_id: str, *, tools: Iterable[Tool] | None = None,
              tool_choice: str | None = None) -> Turn:
        with translated():
            return self.api.retry(
                node_id, tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice)).retry

    def edit_message(self, node_id: str, content: str, *, tools: Iterable[Tool] | None = None,
                     tool_choice: str | None = None) -> Turn:
        with translated():
            return self.api.edit_message(
                node_id, content=content, tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice)).edit_message

    def begin_turn(self, session_id: str, content: str | None = None, *,
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
            return self.api.begin_turn(
                session_id, enums.RequestFormat(format), content=content,
                tool_results=None if results is None else shape.result_inputs(input_types,
                                                                              results),
                tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice),
                ttl_seconds=ttl_seconds, model=model, max_tokens=max_tokens).begin_turn

    def complete_turn(self, draft_id: str, client_key: str, model: str, *,
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
            return self.api.complete_turn(
                draft_id, client_key, model, content=content,
                blocks=shape.reply_blocks(input_types, blocks),
                usage=shape.usage_input(input_types, usage), stop_reason=stop_reason,
                provider=provider,
                error=shape.failure_input(input_types, enums, error, error_code)).complete_turn

    def run_agent(self, session_id: str, content: str, tools: Iterable[Tool], *,
                  tool_choice: str | None = None, max_steps: int = 25) -> Turn:
        """Sends the message, then answers every tool use of each reply with the tools'
        functions and submits the results, until a reply calls no tool; returns that Turn.
        TurnFailed when a turn gets no reply; CtxdagError TOO_MANY_STEPS after max_steps."""
        tools = list(tools)
        by_name = {t.name: t for t in tools}
        turn = self.send_message(session_id, content, tools=tools, tool_choice=tool_choice)
        for _ in range(max_steps):
            if turn.error_code or turn.reply is None:
                raise TurnFailed(turn)
            if not turn.open_tool_use_ids:
                return turn
            results = []
            for use in tool_uses(turn.reply):
                value, failure = call_tool(by_name, use)
                results.append(ToolResult(use.id, failure or as_text(value), failure is not None))
            turn = self.submit_tool_results(session_id, results, tools=tools,
                                            tool_choice=tool_choice)
        raise CtxdagError("TOO_MANY_STEPS", f"the agent loop stopped after {max_steps} steps")

    # -- what a call read

    def render(self, session_id: str, head_id: str | None = None) -> Render:
        with translated():
            return self.api.render(session_id, head_id=head_id).session.render

    def request(self, session_id: str, format: str = "ANTHROPIC_MESSAGES", *,
                head_id: str | None = None, model: str | None = None,
                max_tokens: int | None = None, tools: Iterable[Tool] | None = None,
                tool_choice: str | None = None) -> dict[str, Any]:
        """The exact provider request body of the render (ANTHROPIC_MESSAGES, OPENAI_CHAT)."""
        with translated():
            return self.api.render_request(
                session_id, enums.RequestFormat(format), head_id=head_id, model=model,
                max_tokens=max_tokens, tools=shape.tool_inputs(input_types, tools),
                tool_choice=shape.tool_choice(input_types, enums, tool_choice),
            ).session.render.request

    def trace(self, call_id: str) -> Call:
        """A model call: what it read (reads, in prompt order), its tools, its replay."""
        with translated():
            return self.api.trace(call_id).call

    # -- search and import

    def search(self, query: str, *, session_id: str | None = None,
               roles: Iterable[str] | None = None, kinds: Iterable[str] | None = None,
               first: int | None = None, after: str | None = None) -> SearchPage:
        with translated():
            return self.api.search(
                query, session_id=session_id,
                roles=None if roles is None else [enums.Role(r) for r in roles],
                kinds=None if kinds is None else [enums.SearchKind(k) for k in kinds],
                first=first, after=after).search

    def import_transcript(self, content: str, *, format: str | None = None,
                          file_name: str | None = None, strict: bool = False) -> TranscriptImport:
        with translated():
            return self.api.import_transcript(
                content, strict, format=None if format is None else enums.TranscriptFormat(format),
                file_name=file_name).import_transcript
