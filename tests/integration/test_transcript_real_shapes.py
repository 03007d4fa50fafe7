"""Shapes found in real, public session files that the fixtures written from documentation
lacked (each fixture here is of that shape, its content invented): imported, rendered and
sent as a provider request the SDKs' own types take."""
import json
from pathlib import Path

from service.context.render import render_context
from service.transcripts import model
from service.transcripts.batch import import_text
from service.transcripts.model import Mode
from service.turns.requests import Options, anthropic_messages
from tests.integration.helpers import assert_sound
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
CODEX_INSTRUCTIONS = FIXTURES / "codex" / "rollout-2026-06-10T07-30-00-019ea1c4-instructions.jsonl"

IMPORT = """
mutation ($content: String!, $format: TranscriptFormat, $file: String) {
  importTranscript(content: $content, format: $format, fileName: $file) { session { id } }
}"""
VIEW = """query ($s: ID!) { session(id: $s) {
  render { nodes { role content metadata }
           anthropic: request(format: ANTHROPIC_MESSAGES)
           openai: request(format: OPENAI_CHAT) }
} }"""


def system_text(body: dict) -> str:
    """An Anthropic body's system prompt as text (a string, or text blocks)."""
    system = body.get("system", "")
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


async def test_codex_base_instructions_are_the_system_prompt(api):
    # Codex (0.13x) writes the system prompt it sends (the Responses API `instructions`)
    # into session_meta.base_instructions: ROOT holds it, so the render and the requests
    # built from it carry what Codex's model read.
    text = CODEX_INSTRUCTIONS.read_text()
    instructions = json.loads(text.splitlines()[0])["payload"]["base_instructions"]["text"]
    imported = await api.client(IMPORT, content=text, format="CODEX",
                                file=CODEX_INSTRUCTIONS.name)
    view = (await api.client(VIEW, s=imported["importTranscript"]["session"]["id"]))["session"]
    root = view["render"]["nodes"][0]
    assert (root["role"], root["content"]) == ("SYSTEM", instructions)
    assert root["metadata"]["source"]["line"] == 1
    anthropic, openai = view["render"]["anthropic"], view["render"]["openai"]
    assert_valid_anthropic(anthropic)
    assert_valid_openai(openai)
    assert system_text(anthropic) == instructions
    assert openai["messages"][0] == {"role": "system", "content": instructions}



async def test_a_codex_session_imported_before_its_instructions_were_read_keeps_its_turns(
        ledger, monkeypatch):
    # A session an earlier release imported, with an empty ROOT, grows: its stored ROOT
    # stays as the calls that read it saw it, and only what the file gained is written (a
    # ROOT taken for remapped would have replaced every turn below it).
    from service.transcripts import codex

    lines = CODEX_INSTRUCTIONS.read_text().splitlines(keepends=True)
    with monkeypatch.context() as earlier:
        earlier.setattr(codex, "_system_prompt", lambda instructions, line: None)
        first = await import_text(ledger, "".join(lines[:-3]), CODEX_INSTRUCTIONS.name, None)
    before = await render_context(ledger, first.session_id)
    grown = await import_text(ledger, "".join(lines), CODEX_INSTRUCTIONS.name, None)
    after = await render_context(ledger, first.session_id)
    assert grown.session_id == first.session_id and grown.written == 1
    assert after.nodes[0].content == "" and after.nodes[0].id == before.nodes[0].id
    assert list(after.node_ids[:len(before.node_ids)]) == list(before.node_ids)
    await assert_sound(ledger, first.session_id)

async def test_codex_instructions_stay_on_root_as_the_file_grows(ledger):
    text = CODEX_INSTRUCTIONS.read_text()
    lines = text.splitlines(keepends=True)
    first = await import_text(ledger, "".join(lines[:6]), CODEX_INSTRUCTIONS.name, None)
    mode = Mode()
    grown = await import_text(ledger, text, CODEX_INSTRUCTIONS.name, None, mode)
    assert mode.degraded == [] and grown.session_id == first.session_id and grown.changed
    await assert_sound(ledger, grown.session_id)
    rendered = await render_context(ledger, grown.session_id)
    root, = await ledger.nodes.get_many([rendered.node_ids[0]])
    assert root.id == model.node_id(ledger.tenant, "codex", "019ea1c4-5d2e-7b10-9c3a-44f1e0d2b7a8",
                                    model.ROOT_KEY)
    assert root.content.startswith("You are a careful coding agent")


CC_INLINE = FIXTURES / "claude_code" / "inline_sidechains.jsonl"


async def source_labels(ledger, node_ids) -> list[str]:
    nodes = {n.id: n for n in await ledger.nodes.get_many(list(node_ids))}
    return ["+".join(nodes[i].metadata.get("source", {}).get("entries", [])) or "ROOT"
            for i in node_ids]


async def test_claude_code_sidechains_inside_the_session_file_are_its_sub_agents(ledger):
    # Claude Code 1.0 wrote a Task's sub-agent run into the session file itself
    # (isSidechain, its first entry the Task's prompt, parentUuid null), not beside it: it
    # is a spawned side branch of the message holding that Task use, as subagents/ files
    # are, never a conversation of the user's, a branch tip or the session's title.
    stored = await import_text(ledger, CC_INLINE.read_text(), CC_INLINE.name, None)
    sid = stored.session_id
    await assert_sound(ledger, sid)
    branches = await ledger.branches.list(sid)
    assert await source_labels(ledger, [b.tip.id for b in branches]) == ["m9"]
    assert await source_labels(ledger, (await render_context(ledger, sid)).node_ids) == [
        "ROOT", "m1", "m2", "m3+m4+m5", "m6+m7", "m8", "m9"]
    spawner = model.node_id(ledger.tenant, "claude-code", CC_INLINE.stem, "m5")
    for tip, expected, use in (("s4", ["ROOT", "s1", "s2", "s3", "s4"], "toolu_task_a"),
                               ("t2", ["ROOT", "t1", "t2"], "toolu_task_b")):
        tip_id = model.node_id(ledger.tenant, "claude-code", CC_INLINE.stem, tip)
        chain = (await render_context(ledger, sid, tip_id)).node_ids
        assert await source_labels(ledger, chain) == expected
        nodes = await ledger.nodes.get_many(list(chain[1:]))
        assert all(n.side_branch and n.caller_id == spawner for n in nodes)
        assert nodes[0].metadata["spawned_from"] == spawner
        assert nodes[0].metadata["agent"] == {"tool_use_id": use, "linked": True,
                                              "inline": True}
    session = await ledger.sessions.get(sid)
    assert session.title == "Thanks."


CODEX_FORK = FIXTURES / "codex" / "rollout-2026-06-12T15-20-00-019eb2d0-fork.jsonl"


async def test_a_forked_codex_rollout_is_its_own_session_not_its_parents(ledger):
    # A forked thread's rollout opens with its own session_meta (forked_from_id), then
    # holds the parent's history as Codex copied it, the parent's session_meta first: the
    # first names the session, so the fork and its parent are two sessions.
    text = CODEX_FORK.read_text()
    lines = text.splitlines(keepends=True)
    child_key = json.loads(lines[0])["payload"]["id"]
    parent_key = json.loads(lines[1])["payload"]["id"]
    parent = await import_text(ledger, "".join(lines[1:6]), f"rollout-{parent_key}.jsonl", None)
    fork = await import_text(ledger, text, CODEX_FORK.name, None)
    assert parent.session_id == model.session_id(ledger.tenant, "codex", parent_key)
    assert fork.session_id == model.session_id(ledger.tenant, "codex", child_key)
    assert fork.created and fork.session_id != parent.session_id
    for sid in (parent.session_id, fork.session_id):
        await assert_sound(ledger, sid)
    rendered = await render_context(ledger, fork.session_id)
    nodes = await ledger.nodes.get_many(list(rendered.node_ids))
    assert [n.content for n in nodes[1:]] == [
        "Which file sets the kite's string length?",
        "config/kite.toml sets it: string_length = 30.",
        "Make it 45 instead.", "Set string_length = 45 in config/kite.toml."]
    assert len((await render_context(ledger, parent.session_id)).node_ids) == 3


async def test_a_forked_codex_rollout_is_described_by_its_own_session_meta(ledger):
    # The fork was made later, by a newer Codex on another branch: the session lists the
    # fork's facts, not those of its parent's session_meta copied after its own.
    lines = CODEX_FORK.read_text().splitlines(keepends=True)
    own, parent = json.loads(lines[0]), json.loads(lines[1])
    own["payload"].update(cli_version="0.137.0", cwd="/home/dev/kite-fork",
                          git={"branch": "longer-string"})
    parent["payload"].update(cli_version="0.136.0", cwd="/home/dev/kite", git={"branch": "main"})
    text = "".join([json.dumps(own) + "\n", json.dumps(parent) + "\n", *lines[2:]])
    fork = await import_text(ledger, text, CODEX_FORK.name, None)
    session = await ledger.sessions.get(fork.session_id)
    assert (session.tool_version, session.project, session.git_branch) == (
        "0.137.0", "/home/dev/kite-fork", "longer-string")
    # The fork's own thread described again later (a newer Codex went on with it): that.
    own["payload"].update(cli_version="0.138.0", git={"branch": "release"})
    grown = await import_text(ledger, text + json.dumps(own) + "\n", CODEX_FORK.name, None)
    session = await ledger.sessions.get(grown.session_id)
    assert grown.session_id == fork.session_id
    assert (session.tool_version, session.git_branch) == ("0.138.0", "release")


def codex_rollout_thinking_at_length(encrypted_chars: int) -> str:
    """A rollout whose model reasoned at length before calling a tool: Codex records the
    reasoning item's encrypted content whole (70 KB in a real file of Codex 0.58), then a
    short one before the reply."""
    def line(second: int, kind: str, payload: dict) -> str:
        return json.dumps({"timestamp": f"2026-07-01T09:00:{second:02d}.000Z", "type": kind,
                           "payload": payload}) + "\n"

    def reasoning(summary: str, encrypted: str) -> dict:
        return {"type": "reasoning", "content": None, "encrypted_content": encrypted,
                "summary": [{"type": "summary_text", "text": summary}]}

    return "".join([
        line(0, "session_meta", {"id": "019f0a11-7c3e-7d20-8b41-5e2c9a0f3d17",
                                 "cwd": "/home/dev/greenhouse", "cli_version": "0.58.0",
                                 "originator": "codex_cli_rs", "git": {"branch": "main"}}),
        line(1, "response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "Why does the humidity sensor read 0 at night?"}]}),
        line(2, "turn_context", {"cwd": "/home/dev/greenhouse", "model": "gpt-5.1-codex"}),
        line(3, "response_item", reasoning("**Tracing the sensor's night readings**",
                                           "gAAAAB" + "q" * encrypted_chars)),
        line(3, "response_item", {"type": "function_call", "name": "shell",
                                  "arguments": json.dumps({"command": ["cat", "sensor.cfg"]}),
                                  "call_id": "call_hum1"}),
        line(4, "response_item", {"type": "function_call_output", "call_id": "call_hum1",
                                  "output": "poll_interval = 0 after 20:00"}),
        line(5, "response_item", reasoning("**Reading the poll interval**", "gAAAAB-short")),
        line(5, "response_item", {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "Polling stops after 20:00: poll_interval is 0."}]}),
    ])


async def test_a_codex_reasoning_item_longer_than_a_nodes_metadata_holds_is_noted_by_size(
        ledger):
    # An encrypted reasoning item larger than a node's metadata may be (64 KiB by default)
    # kept verbatim refused the whole file. Its encrypted content is OpenAI's, which no
    # render sends: the message keeps its summary and its size; a short one stays whole.
    text = codex_rollout_thinking_at_length(70_000)
    mode = Mode()
    stored = await import_text(ledger, text, "rollout-2026-07-01T09-00-00-019f0a11.jsonl",
                               None, mode)
    assert mode.degraded == []
    await assert_sound(ledger, stored.session_id)
    rendered = await render_context(ledger, stored.session_id)
    calling, _, answering = rendered.nodes[2:]
    assert calling.metadata["reasoning"] == [{
        "summary": ["**Tracing the sensor's night readings**"], "encrypted_content_chars": 70_006}]
    assert answering.metadata["reasoning"] == [{"summary": ["**Reading the poll interval**"],
                                                "encrypted_content": "gAAAAB-short"}]
    assert_valid_anthropic(anthropic_messages(rendered.nodes, {}, Options()))
    again = await import_text(ledger, text, "rollout-2026-07-01T09-00-00-019f0a11.jsonl", None)
    assert again.session_id == stored.session_id and not again.changed


async def test_a_codex_ide_prompt_is_titled_by_the_request_after_the_editors_context(ledger):
    # Codex's IDE extension sends the editor's context (the active file, the open tabs)
    # before what the user typed, under "## My request for Codex:"; Codex titles the thread
    # by the request, and so does the import: the context is the tool's, not the user's.
    lines = [
        {"type": "session_meta", "payload": {"id": "019f1b22-8d4f-7e31-9c52-6f3dab1e4e28",
                                             "cwd": "/home/dev/orchard", "cli_version": "0.40.0"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "<environment_context>\n  <cwd>/home/dev/orchard</cwd>"
                                           "\n</environment_context>"}]}},
        {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": "# Context from my IDE setup:\n\n## Active file: "
                                           "src/picker.ts\n\n## Open tabs:\n- picker.ts: "
                                           "src/picker.ts\n\n## My request for Codex:\nWhy are "
                                           "pears picked before apples?\n"}]}},
        {"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [
            {"type": "output_text", "text": "The queue sorts by name."}]}},
    ]
    text = "".join(json.dumps({"timestamp": f"2026-07-02T10:00:0{i}.000Z", **line}) + "\n"
                   for i, line in enumerate(lines))
    stored = await import_text(ledger, text, "rollout-2026-07-02T10-00-00-019f1b22.jsonl", None)
    session = await ledger.sessions.get(stored.session_id)
    assert session.title == "Why are pears picked before apples?"
