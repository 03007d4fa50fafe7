"""A tool use a file holds no result of gets a stored result whose text is what the tool
itself sends its model in that place (without a database)."""
import json

import pytest

from service import transcripts
from service.model.validate import Limits
from service.transcripts.model import CANCELLED


def _lines(*entries) -> str:
    return "".join(json.dumps(entry) + "\n" for entry in entries)


def claude_code() -> str:
    base = {"sessionId": "s", "timestamp": "2025-07-01T09:00:01Z", "isSidechain": False}
    return _lines(
        {**base, "type": "user", "uuid": "u1", "parentUuid": None,
         "message": {"role": "user", "content": "Build it."}},
        {**base, "type": "assistant", "uuid": "a1", "parentUuid": "u1",
         "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                     "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                  "input": {"command": "make"}}]}},
        {**base, "type": "user", "uuid": "u2", "parentUuid": "a1",
         "message": {"role": "user", "content": "Never mind."}})


def pi() -> str:
    at = "2025-07-01T09:00:01Z"
    return _lines(
        {"type": "session", "version": 3, "id": "p", "timestamp": at, "cwd": "/work"},
        {"type": "message", "id": "e1", "parentId": None, "timestamp": at,
         "message": {"role": "user", "content": "Build it.", "timestamp": 1}},
        {"type": "message", "id": "e2", "parentId": "e1", "timestamp": at,
         "message": {"role": "assistant", "stopReason": "toolUse", "timestamp": 2,
                     "content": [{"type": "toolCall", "id": "call_1", "name": "bash",
                                  "arguments": {"command": "make"}}]}},
        {"type": "message", "id": "e3", "parentId": "e2", "timestamp": at,
         "message": {"role": "user", "content": "Never mind.", "timestamp": 3}})


def codex() -> str:
    def item(payload):
        return {"timestamp": "2025-09-14T08:00:02.000Z", "type": "response_item",
                "payload": payload}

    return _lines(
        {"timestamp": "2025-09-14T08:00:01.000Z", "type": "session_meta",
         "payload": {"id": "c", "timestamp": "2025-09-14T08:00:00.000Z", "cwd": "/work"}},
        item({"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "Build it."}]}),
        item({"type": "function_call", "name": "shell", "call_id": "call_1",
              "arguments": "{\"command\": [\"make\"]}"}),
        item({"type": "message", "role": "user",
              "content": [{"type": "input_text", "text": "Never mind."}]}))


@pytest.mark.parametrize("text, said", [
    (claude_code, CANCELLED), (pi, "No result provided"), (codex, "aborted")],
    ids=["claude-code", "pi", "codex"])
def test_an_unanswered_tool_use_gets_the_result_its_tool_sends(text, said):
    document = transcripts.read(text(), "session.jsonl", None, "t", Limits())
    results = [block for row in document["nodes"]
               for block in json.loads(row["properties"].get("blocks") or "[]")
               if block["type"] == "tool_result"]
    assert [(r["content"], r["is_error"]) for r in results] == [
        ([{"type": "text", "text": said}], True)]
