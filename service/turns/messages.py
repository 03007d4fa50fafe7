"""The rendered node list in the Messages API's shape: the prompt every provider sends.

Provider-neutral, so it lives with the turns that send prompts and replay them:
service/llm (the Anthropic adapter) imports it from here, never the reverse.
"""
from __future__ import annotations

from typing import Sequence

from ..store import Node, Role

SUMMARY_OPEN = "<summary of the earlier conversation>"
SUMMARY_CLOSE = "</summary>"
TOOL_PREFIX = "[tool result]"
CONTINUES = "(conversation continues)"


def to_messages(nodes: Sequence[Node]) -> tuple[str, list[dict]]:
    """A rendered node list (prompt order, ROOT first) as (system text, API messages).

    A pure function. Every node's content enters the prompt, unchanged apart from the
    framing below; provenance (which nodes the model read) depends on that.

    - system nodes (ROOT) → the system string (several are joined with a blank line);
    - summary → a user message "<summary of the earlier conversation>\\n…\\n</summary>";
    - user → user; assistant → assistant;
    - tool → a user message whose text is prefixed "[tool result]";
    - consecutive messages of one role are merged, their texts joined with a blank line,
      because the API requires user and assistant to alternate;
    - if the first message is an assistant's, a user message "(conversation continues)"
      is put before it (the API requires the first message to be the user's).

    Message content is a plain string. The last message may be an assistant's; the
    API treats that as a prefill to continue.
    """
    system_parts: list[str] = []
    messages: list[dict] = []
    for node in nodes:
        if node.role is Role.SYSTEM:
            system_parts.append(node.content)
            continue
        if node.role is Role.SUMMARY:
            role, text = "user", f"{SUMMARY_OPEN}\n{node.content}\n{SUMMARY_CLOSE}"
        elif node.role is Role.TOOL:
            role, text = "user", f"{TOOL_PREFIX}\n{node.content}"
        elif node.role is Role.ASSISTANT:
            role, text = "assistant", node.content
        else:
            role, text = "user", node.content
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"] += "\n\n" + text
        else:
            messages.append({"role": role, "content": text})
    if messages and messages[0]["role"] == "assistant":
        messages.insert(0, {"role": "user", "content": CONTINUES})
    return "\n\n".join(part for part in system_parts if part), messages
