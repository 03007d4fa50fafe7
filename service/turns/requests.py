"""A render as a provider's request body: one pure function per provider format.

`anthropic_messages` and `openai_chat` turn a rendered node list (prompt order, ROOT
first) into exactly the body a runtime sends: our own providers call them too, so what
the service sends and what `RenderedContext.request` gives a client are the same bytes.
Every cross-provider difference — how a summary stand-in is framed, tool calls and
their results, thinking, images and documents — is decided here and nowhere else.

Both are projections, never repairs. The ledger refuses the writes that would break a
tool pair (docs/concepts/content-blocks.md), so a render holds every `tool_use` answered in the
message right after it; the one render that is not a request is a head whose tool uses
are still open (the runtime answers them first), refused with `BAD_INPUT`.

Framing, the same in both formats:
- ROOT (system) → the system prompt;
- a summary → a user message "<summary of the earlier conversation>\\n…\\n</summary>";
  with the recall tools offered (Options.recall), a note naming its id follows (RECALL_NOTE);
- a carry node (a branch summary) → a user message "<summary of another branch of this
  conversation, left for this one>\\n…\\n</summary>";
- a tool message without tool_result blocks (a plain tool output, as stored before
  blocks existed) → a user message "[tool result]\\n…";
- blocks as the format has them (below); media data comes from `media`, by hash.

Prompt caching (docs/concepts/provenance.md): the Anthropic request marks `cache_control`
breakpoints (`cache_breakpoints`), the OpenAI request names the session as its
`prompt_cache_key`; both are decided here and nowhere else.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import AbstractSet, Any, Mapping, Sequence

from ..config import DEFAULT_CACHE_TTL
from ..errors import BadInput
from ..store import Node, Role
from ..model.blocks import (
    Block, Document, Image, MediaRef, RedactedThinking, Text, Thinking, ToolResult, ToolUse,
    UrlSource, block_json, text_of, tool_use_ids,
)
from ..model import validate
from ..model.blocks import TOOL_NAME
from ..model.validate import some

SUMMARY_OPEN = "<summary of the earlier conversation>"
SUMMARY_CLOSE = "</summary>"
CARRY_OPEN = "<summary of another branch of this conversation, left for this one>"
CARRY_CLOSE = "</summary>"
TOOL_PREFIX = "[tool result]"
CONTINUES = "(conversation continues)"
ERROR_PREFIX = "[error] "  # OpenAI's tool messages have no error flag
# After a summary stand-in when the recall tools are offered (docs/guides/recall.md).
RECALL_NOTE = ("(This summary is {id}. history_expand with summary_id \"{id}\" returns the "
               "turns it stands in for verbatim; history_search finds words in them.)")


@dataclass(frozen=True)
class Tool:
    """A tool offered to the model: the provider-neutral definition."""

    name: str
    description: str | None
    input_schema: Mapping[str, Any]


@dataclass(frozen=True)
class ToolChoice:
    """auto (the model decides), any (it must call one), none, or tool (`name`)."""

    mode: str = "auto"
    name: str | None = None


@dataclass(frozen=True)
class Options:
    model: str | None = None
    max_tokens: int | None = None
    tools: tuple[Tool, ...] = ()
    tool_choice: ToolChoice | None = None
    cache_ttl: str = DEFAULT_CACHE_TTL  # the breakpoints' lifetime (CTXDAG_CACHE_TTL)
    # The recall tools (docs/guides/recall.md): None follows the session's setting; once a turn
    # resolved it (service/recall/tools.py), `tools` hold them and stand-ins name their ids.
    recall: bool | None = None
    # The call names its tools itself (an override), or the session's tool set in force
    # applies (docs/guides/tool-sets.md, `in_force`); None: it names them when it holds any.
    tools_given: bool | None = None

    @property
    def names_tools(self) -> bool:
        return bool(self.tools) if self.tools_given is None else self.tools_given


MAX_TOOLS = 128
MAX_TOOL_DESCRIPTION = 10_000  # characters
MAX_TOOL_SCHEMA_BYTES = 64 * 1024
MAX_OUTPUT_TOKENS = 1_000_000
TOOL_CHOICE_MODES = ("auto", "any", "none", "tool")


def options(*, model: object = None, max_tokens: object = None, tools: object = None,
            tool_choice: object = None, recall: object = None) -> Options:
    """Request options as a client gives them, checked (BAD_INPUT naming the field)."""
    validate.optional_name(model, "model")
    if recall is not None:
        validate.flag(recall, "recall")
    if max_tokens is not None:
        validate.count(max_tokens, "maxTokens", minimum=1)
        if max_tokens > MAX_OUTPUT_TOKENS:
            raise BadInput(f"maxTokens is {max_tokens}; at most {MAX_OUTPUT_TOKENS}")
    offered = tool_definitions(tools or ())
    # Without tools, a toolChoice is checked against the tool set in force (in_force).
    names = None if tools is None else [t.name for t in offered]
    return Options(model, max_tokens, offered, _choice(tool_choice, names), recall=recall,
                   tools_given=tools is not None)


def tool_definitions(tools: Sequence[object]) -> tuple[Tool, ...]:
    """Tool definitions as a client gives them, checked (their input schemas against the
    JSON Schema meta-schema), BAD_INPUT naming the first fault."""
    if not isinstance(tools, Sequence) or isinstance(tools, (str, bytes)):
        raise BadInput("tools must be a list of tool definitions")
    offered = tuple(_tool(t, f"tools[{i}]") for i, t in enumerate(tools))
    if len(offered) > MAX_TOOLS:
        raise BadInput(f"{len(offered)} tools are offered; at most {MAX_TOOLS}")
    names = [t.name for t in offered]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise BadInput(f"tools are named once each; repeated: {some(repeated)}")
    return offered


def tool_choice(value: object, tools: Sequence[Tool]) -> ToolChoice | None:
    """A client's toolChoice, checked against the tools it goes with."""
    return _choice(value, [t.name for t in tools])


def in_force(options: Options, tools: Sequence[Mapping[str, Any]],
             choice: Mapping[str, Any] | None) -> Options:
    """The options a call is sent with: its own tools when it gave them (the override),
    else the tool set in force (`tools`, `choice`: a stored version's, checked when it was
    set; none: no tools), with the call's toolChoice, if it gave one, checked against them."""
    if options.names_tools:
        return options
    offered = tuple(Tool(t["name"], t.get("description"), dict(t["input_schema"]))
                    for t in tools)
    names = [t.name for t in offered]
    given = options.tool_choice
    if given is not None:
        chosen = _choice({"mode": given.mode, "name": given.name}, names)
    else:
        chosen = None if choice is None else ToolChoice(choice["mode"], choice.get("name"))
    return replace(options, tools=offered, tool_choice=chosen, tools_given=True)


def _tool(value: object, what: str) -> Tool:
    if not isinstance(value, Mapping):
        raise BadInput(f"{what} must be an object with name and input_schema")
    name = value.get("name")
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise BadInput(f"{what}.name must be 1 to 64 letters, digits, '_' or '-', "
                       f"not {validate.shown(name)}")
    description = value.get("description")
    if description is not None:
        if not isinstance(description, str) or len(description) > MAX_TOOL_DESCRIPTION:
            raise BadInput(f"{what}.description must be text of at most "
                           f"{MAX_TOOL_DESCRIPTION} characters")
        validate.utf8_size(description, f"{what}.description")
    schema = value.get("input_schema")
    if not isinstance(schema, Mapping) or schema.get("type") != "object":
        raise BadInput(f"{what}.input_schema must be a JSON Schema object whose type is "
                       "\"object\"")
    validate.json_object(schema, _SchemaLimit(MAX_TOOL_SCHEMA_BYTES), f"{what}.input_schema")
    validate.json_schema(schema, f"{what}.input_schema")
    return Tool(name, description or None, dict(schema))


@dataclass(frozen=True)
class _SchemaLimit:
    max_metadata_bytes: int


def _choice(value: object, names: list[str] | None) -> ToolChoice | None:
    """`names`: the tools it goes with; None: not known yet (checked again by in_force)."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or value.get("mode") not in TOOL_CHOICE_MODES:
        raise BadInput(f"toolChoice.mode must be one of: {', '.join(TOOL_CHOICE_MODES)}")
    mode, name = value["mode"], value.get("name")
    if mode in ("any", "tool") and names is not None and not names:
        raise BadInput(f"toolChoice {mode} needs tools to choose from")
    if (mode == "tool") != (name is not None):
        raise BadInput("toolChoice names a tool with mode tool, and only then")
    if name is not None and names is not None and name not in names:
        raise BadInput(f"toolChoice names {validate.shown(name)}, which is not an offered tool")
    return ToolChoice(mode, name)


def open_tool_uses(nodes: Sequence[Node]) -> list[str]:
    """The tool uses the render's last message leaves unanswered (none for a request)."""
    if not nodes or nodes[-1].role is not Role.ASSISTANT:
        return []
    return tool_use_ids(nodes[-1].blocks)


def _refuse_open(nodes: Sequence[Node]) -> None:
    open_ids = open_tool_uses(nodes)
    if open_ids:
        raise BadInput(f"head {nodes[-1].id} has {len(open_ids)} open tool uses "
                       f"({some(open_ids)}): append their results before asking the model",
                       open_tool_use_ids=open_ids)


def _framed(node: Node, recall: bool | None = None) -> tuple[str, tuple[Block, ...]]:
    """(the role it is sent as, its blocks) for a non-system node."""
    if node.role is Role.SUMMARY:
        note = f"\n{RECALL_NOTE.format(id=node.id)}" if recall else ""
        return "user", (Text(f"{SUMMARY_OPEN}\n{node.content}\n{SUMMARY_CLOSE}{note}"),)
    if node.role is Role.CARRY:
        return "user", (Text(f"{CARRY_OPEN}\n{node.content}\n{CARRY_CLOSE}"),)
    if node.role is Role.ASSISTANT:
        return "assistant", node.blocks
    if node.role is Role.TOOL and not any(isinstance(b, ToolResult) for b in node.blocks):
        return "user", (Text(f"{TOOL_PREFIX}\n{node.content}"),)
    return "user", node.blocks


def _system(nodes: Sequence[Node]) -> str:
    return "\n\n".join(n.content for n in nodes if n.role is Role.SYSTEM and n.content)


def _data(source: MediaRef, media: Mapping[str, str]) -> str:
    try:
        return media[source.sha256]
    except KeyError:
        raise BadInput(f"media {source.sha256} named by the render is not stored") from None


# --------------------------------------------------------------------------- Anthropic


def anthropic_messages(nodes: Sequence[Node], media: Mapping[str, str],
                       options: Options = Options(), *, allow_open: bool = False,
                       appended: str | None = None, cache: bool = True) -> dict[str, Any]:
    """The body of `POST /v1/messages` (the SDK's `messages.create(**body)`).

    Consecutive messages of one role are merged (user and assistant must alternate);
    a message made only of text is sent as one string, its texts joined with a blank
    line, so a text conversation's request is what it was before blocks existed. The
    first message is the user's ("(conversation continues)" is put before an
    assistant's). Thinking blocks go back verbatim, signatures included. `allow_open`
    shapes a prompt that ends in open tool uses too (a replay of a recorded call, a token
    count), which no provider would answer. `appended`: a user text after the whole
    conversation (the summarizer's instruction), so the request up to it is the
    conversation's own and reads its cache; the tool uses the conversation leaves open
    (a branch left mid-call) are then sent as text (`tool_use_text`), as the message after
    a `tool_use` block must answer it and the instruction answers nothing. The
    breakpoints: `cache_breakpoints` (none with `cache=False`: a token count, a replay).
    """
    unanswered = set(open_tool_uses(nodes)) if appended is not None else set()
    if not allow_open and not unanswered:
        _refuse_open(nodes)
    messages: list[dict[str, Any]] = []
    summary_block: dict[str, Any] | None = None  # the last summary stand-in's block
    offered, kept = {t.name for t in options.tools}, set[str]()
    for node in nodes:
        if node.role is Role.SYSTEM:
            continue
        role, blocks = _framed(node, options.recall)
        content = _anthropic_content(blocks, media, offered, kept, unanswered)
        if node.role is Role.SUMMARY:
            summary_block = content[-1]
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(content)
        else:
            messages.append({"role": role, "content": content})
    # What the conversation's own request ended with: the prefix an appended text reads.
    conversation_end = _last_markable(messages, len(messages)) if appended is not None else None
    if appended is not None:
        text = {"type": "text", "text": appended}
        if messages and messages[-1]["role"] == "user":
            messages[-1]["content"].append(text)
        else:
            messages.append({"role": "user", "content": [text]})
    if not messages and not allow_open:
        raise BadInput("the render holds only the system prompt: the Messages API needs at "
                       "least one message (append the user's first)")
    if messages and messages[0]["role"] == "assistant":
        messages.insert(0, {"role": "user", "content": [{"type": "text", "text": CONTINUES}]})
    if messages and messages[-1]["role"] == "assistant":
        _end_prefill(messages)
    system = _system(nodes)
    system_blocks = [{"type": "text", "text": system}] if system else []
    tools = [{"name": t.name, "input_schema": dict(t.input_schema),
              **({"description": t.description} if t.description else {})}
             for t in options.tools]
    marks = cache_breakpoints(tools, system_blocks, messages, summary_block,
                              previous=conversation_end) if cache else []
    marker = {"type": "ephemeral", **({} if options.cache_ttl == DEFAULT_CACHE_TTL
                                      else {"ttl": options.cache_ttl})}
    for marked in marks:
        marked["cache_control"] = dict(marker)
    for message in messages:
        if all(part["type"] == "text" and "cache_control" not in part
               for part in message["content"]):
            message["content"] = "\n\n".join(part["text"] for part in message["content"])
    body: dict[str, Any] = {}
    if options.model is not None:
        body["model"] = options.model
    if options.max_tokens is not None:
        body["max_tokens"] = options.max_tokens
    if system:
        body["system"] = system_blocks if marks and system_blocks[0] is marks[0] else system
    body["messages"] = messages
    if tools:
        body["tools"] = tools
    if options.tool_choice is not None and tools:  # the API refuses a choice of no tools
        choice = options.tool_choice
        body["tool_choice"] = ({"type": "tool", "name": choice.name} if choice.mode == "tool"
                               else {"type": choice.mode})
    return body


MAX_BREAKPOINTS = 4  # Anthropic's limit per request
# Blocks the API refuses a cache_control on (thinking is cached with its turn, unmarked).
_UNMARKABLE = ("thinking", "redacted_thinking")


def cache_breakpoints(tools: list[dict[str, Any]], system: list[dict[str, Any]],
                      messages: list[dict[str, Any]], summary_block: dict[str, Any] | None,
                      previous: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The blocks of an Anthropic request that carry `cache_control`, in request order.

    At most the API's four, each a prefix a later call reads back:
    1. the end of tools/system (the prefix runs tools, system, messages, so one mark on
       the system block covers both; the last tool when there is no system prompt);
    2. the last summary stand-in (with several summaries in a render, the last one: the
       prefix through it outlives the tail's changes);
    3. the newest message the previous call ended with (the last one before the newest
       assistant reply), so a turn reads its predecessor's prefix back even past the
       API's ~20-block look-back (a long run of tool blocks); `previous` names it
       instead when the request is a conversation with a text appended (the summarizer's);
    4. the newest message, the prefix the next call reads.
    A mark goes on a message's last block that takes one: never a thinking block or an
    empty text (the API refuses both). A prefix below the model's minimum (1,024 to
    4,096 tokens) is not cached by the API, which is no error, so it is marked all the same.
    """
    marks: list[dict[str, Any]] = []
    if system or tools:
        marks.append((system or tools)[-1])
    replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if previous is None and replies:
        previous = _last_markable(messages, replies[-1])
    for block in (summary_block, previous, _last_markable(messages, len(messages))):
        if block is not None and all(block is not m for m in marks):
            marks.append(block)
    return marks[:MAX_BREAKPOINTS]


def _last_markable(messages: list[dict[str, Any]], end: int) -> dict[str, Any] | None:
    """The last block before message `end` that may carry a cache_control."""
    for message in reversed(messages[:end]):
        for block in reversed(message["content"]):
            if block["type"] not in _UNMARKABLE and (block["type"] != "text" or block["text"]):
                return block
    return None


def _anthropic_content(blocks: Sequence[Block], media: Mapping[str, str], offered: set[str],
                       kept: set[str], unanswered: AbstractSet[str] = frozenset()
                       ) -> list[dict[str, Any]]:
    """A message's blocks in the Messages API's shape. The API refuses tool blocks whose
    tool the request does not define, so a tool use of a tool not `offered` is sent as text
    (`tool_use_text`), and so is one left `unanswered` (ids) and a result of a tool use not
    `kept` as a block (which adds the ids it keeps); kept results stay first."""
    results: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, ToolUse) and block.name in offered and block.id not in unanswered:
            kept.add(block.id)
            rest.append(_anthropic_block(block, media))
        elif isinstance(block, ToolUse):
            rest.append({"type": "text", "text": tool_use_text(block)})
        elif isinstance(block, ToolResult) and block.tool_use_id in kept:
            results.append(_anthropic_block(block, media))
        elif isinstance(block, ToolResult):
            body = "\n\n".join(p.text for p in block.content if isinstance(p, Text))
            rest.append({"type": "text", "text": tool_result_text(block, body)})
            rest.extend(_anthropic_block(p, media) for p in block.content
                        if isinstance(p, Image))
        else:
            rest.append(_anthropic_block(block, media))
    return results + rest


def tool_use_text(block: ToolUse) -> str:
    """A tool use as text (a request that does not define its tool, a summary prompt)."""
    return (f'<tool_use id="{block.id}" name="{block.name}">'
            f"{json.dumps(dict(block.input), ensure_ascii=False)}</tool_use>")


def tool_result_text(block: ToolResult, body: str) -> str:
    """A tool result as text, `body` its content as text (a request sends the images of a
    result after it as blocks; a summary prompt mentions them)."""
    error = ' error="true"' if block.is_error else ""
    return f'<tool_result for="{block.tool_use_id}"{error}>{body}</tool_result>'


def _end_prefill(messages: list[dict[str, Any]]) -> None:
    """A final assistant message (a prefill) without the trailing whitespace the API
    refuses there: its last text loses it, and goes if nothing else is left."""
    content = messages[-1]["content"]
    last = content[-1] if content else None
    if last is None or last["type"] != "text":
        return
    last["text"] = last["text"].rstrip()
    if not last["text"]:
        content.pop()
        if not content:
            messages.pop()
            if messages and messages[-1]["role"] == "assistant":
                _end_prefill(messages)


def _anthropic_block(block: Block, media: Mapping[str, str]) -> dict[str, Any]:
    if isinstance(block, (Text, Thinking, RedactedThinking, ToolUse)):
        return block_json(block)  # stored in the Messages API's own shape
    if isinstance(block, ToolResult):
        shaped: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.tool_use_id}
        if block.content:
            shaped["content"] = [_anthropic_block(p, media) for p in block.content]
        if block.is_error:
            shaped["is_error"] = True
        return shaped
    shaped = {"type": block.kind, "source": _anthropic_source(block.source, media)}
    if isinstance(block, Document) and block.title:
        shaped["title"] = block.title
    return shaped


def _anthropic_source(source: MediaRef | UrlSource, media: Mapping[str, str]) -> dict[str, Any]:
    if isinstance(source, UrlSource):
        return {"type": "url", "url": source.url}
    if source.media_type == "text/plain":
        text = _decoded_text(source, media)
        return {"type": "text", "media_type": "text/plain", "data": text}
    return {"type": "base64", "media_type": source.media_type, "data": _data(source, media)}


def _decoded_text(source: MediaRef, media: Mapping[str, str]) -> str:
    import base64

    return base64.b64decode(_data(source, media)).decode("utf-8", errors="replace")


# --------------------------------------------------------------------------- OpenAI


def openai_chat(nodes: Sequence[Node], media: Mapping[str, str],
                options: Options = Options()) -> dict[str, Any]:
    """The body of `POST /v1/chat/completions` (the SDK's `chat.completions.create(**body)`).

    - an assistant message's tool uses are its `tool_calls` (`arguments` the input as a
      JSON string); its text is `content`; thinking is left out (Chat Completions takes
      no other provider's reasoning back);
    - each tool_result is a `{"role": "tool", "tool_call_id", "content"}` message, its
      text prefixed "[error] " when it reports an error (the format has no flag); images
      in a result, and any other blocks of the tool message, follow in one user message;
    - images are `image_url` parts (a data URL for stored data), a PDF a `file` part, a
      text document a text part;
    - a message of text alone is sent as one string;
    - `prompt_cache_key` is the session's id, the same for every request of the session
      (OpenAI caches prefixes of 1,024+ tokens by itself; the key routes a session's
      requests to the same cache).
    """
    _refuse_open(nodes)
    messages: list[dict[str, Any]] = []
    system = _system(nodes)
    if system:
        messages.append({"role": "system", "content": system})
    for node in nodes:
        if node.role is Role.SYSTEM:
            continue
        role, blocks = _framed(node, options.recall)
        if role == "assistant":
            messages.append(_openai_assistant(blocks))
            continue
        follow: list[dict[str, Any]] = []
        for block in blocks:
            if isinstance(block, ToolResult):
                messages.append(_openai_tool(block))
                follow.extend(_openai_part(p, media) for p in block.content
                              if isinstance(p, Image))
            else:
                follow.append(_openai_part(block, media))
        if follow:
            messages.append({"role": "user", "content": _openai_content(follow)})
    body: dict[str, Any] = {}
    if options.model is not None:
        body["model"] = options.model
    if options.max_tokens is not None:
        body["max_completion_tokens"] = options.max_tokens
    body["messages"] = messages
    if nodes:
        body["prompt_cache_key"] = nodes[0].session_id
    if options.tools:
        body["tools"] = [{"type": "function", "function": {
            "name": t.name, "parameters": dict(t.input_schema),
            **({"description": t.description} if t.description else {})}}
            for t in options.tools]
    if options.tool_choice is not None and options.tools:  # refused without tools
        choice = options.tool_choice
        body["tool_choice"] = (
            {"type": "function", "function": {"name": choice.name}} if choice.mode == "tool"
            else {"any": "required"}.get(choice.mode, choice.mode))
    return body


def _openai_assistant(blocks: Sequence[Block]) -> dict[str, Any]:
    text = "\n\n".join(b.text for b in blocks if isinstance(b, Text))
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    calls = [{"id": b.id, "type": "function",
              "function": {"name": b.name,
                           "arguments": json.dumps(dict(b.input), ensure_ascii=False)}}
             for b in blocks if isinstance(b, ToolUse)]
    if calls:
        message["tool_calls"] = calls
    elif message["content"] is None:
        message["content"] = text_of(blocks)  # thinking alone: say so rather than send nothing
    return message


def _openai_tool(block: ToolResult) -> dict[str, Any]:
    text = "\n".join(p.text for p in block.content if isinstance(p, Text))
    if any(isinstance(p, Image) for p in block.content):
        text = (text + "\n" if text else "") + "(images follow in the next message)"
    return {"role": "tool", "tool_call_id": block.tool_use_id,
            "content": (ERROR_PREFIX if block.is_error else "") + text}


def _openai_part(block: Block, media: Mapping[str, str]) -> dict[str, Any]:
    if isinstance(block, Text):
        return {"type": "text", "text": block.text}
    if isinstance(block, Image):
        source = block.source
        url = (source.url if isinstance(source, UrlSource)
               else f"data:{source.media_type};base64,{_data(source, media)}")
        return {"type": "image_url", "image_url": {"url": url}}
    if isinstance(block, Document):
        source = block.source
        if isinstance(source, UrlSource):
            return {"type": "text", "text": text_of([block])}
        if source.media_type == "text/plain":
            return {"type": "text", "text": _decoded_text(source, media)}
        return {"type": "file", "file": {
            "filename": block.title or "document.pdf",
            "file_data": f"data:{source.media_type};base64,{_data(source, media)}"}}
    return {"type": "text", "text": text_of([block])}


def _openai_content(parts: list[dict[str, Any]]) -> str | list[dict[str, Any]]:
    if all(part["type"] == "text" for part in parts):
        return "\n\n".join(part["text"] for part in parts)
    return parts
