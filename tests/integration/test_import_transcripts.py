"""Agent transcripts imported through `ctxdag import-transcript`, on the real Neo4j.

Each fixture (tests/fixtures/transcripts/, written for these tests from the formats'
documented facts) is imported, then checked against what its tool would have shown:
HEAD, the branch tips, each tip's render and the summaries' coverage; the stored session
keeps the ledger's invariants and goes on like a native one.
"""
import json
from pathlib import Path

import pytest

from service.context.render import render_context
from service.errors import NotFound
from service.transcripts import model
from tests.integration.helpers import assert_sound, run_command, runtime_for, session_calls

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
CC_SESSION = FIXTURES / "claude_code" / "session.jsonl"
CC_PRESERVED = FIXTURES / "claude_code" / "preserved.jsonl"
CC_STREAMED = FIXTURES / "claude_code" / "streamed.jsonl"
CC_LOST_PARENT = FIXTURES / "claude_code" / "lost_parent.jsonl"
CC_KEPT_AFTER = FIXTURES / "claude_code" / "kept_after.jsonl"


async def import_files(ledger, capsys, *files, fmt=None) -> str:
    runtime = runtime_for(ledger.db, ledger.tenant)
    argv = ["import-transcript", *map(str, files)] + (["--format", fmt] if fmt else [])
    assert await run_command(runtime, *argv) == 0
    return capsys.readouterr().out


async def refused(ledger, capsys, *argv: str) -> str:
    """The error `ctxdag ARGV` reports for the one file it fails on (exit status 1), with its
    code: what comes after `error: BAD_INPUT: `."""
    capsys.readouterr()
    assert await run_command(runtime_for(ledger.db, ledger.tenant), *argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: BAD_INPUT: "), err
    return err[len("error: BAD_INPUT: "):]


def cc_session_id(ledger, file: Path) -> str:
    return model.session_id(ledger.tenant, "claude-code", file.stem)


async def labels(ledger, node_ids) -> list[str]:
    """Each node named by its source entries ('a1+a2'), ROOT, or 'synthetic'."""
    nodes = {n.id: n for n in await ledger.nodes.get_many(list(node_ids))}

    def label(node) -> str:
        source = node.metadata.get("source", {})
        if node.metadata.get("synthetic"):
            return "synthetic"
        return "+".join(source.get("entries", [])) or "ROOT"

    return [label(nodes[i]) for i in node_ids]


async def render_labels(ledger, session_id, head=None) -> list[str]:
    return await labels(ledger, (await render_context(ledger, session_id, head)).node_ids)


async def tips(ledger, session_id) -> dict[str, bool]:
    branches = await ledger.branches.list(session_id)
    named = await labels(ledger, [b.tip.id for b in branches])
    return {name: b.is_head for name, b in zip(named, branches)}


async def test_claude_code_session(ledger, turns, capsys):
    out = await import_files(ledger, capsys, CC_SESSION)
    sid = cc_session_id(ledger, CC_SESSION)
    assert f"imported as session {sid}" in out
    await assert_sound(ledger, sid)
    # The rewind (u2b beside u2) is a branch; the progress record beside a tool result
    # and the parallel tool calls' recording are not.
    assert await tips(ledger, sid) == {"a6": False, "synthetic": True}
    # After the compaction the model read its summary and what followed; the tool use the
    # file leaves unanswered has a stored cancelled result, where HEAD is.
    assert await render_labels(ledger, sid) == [
        "ROOT", "cb1+s1", "u4", "a9", "u5", "a10", "synthetic"]
    session = await ledger.sessions.get(sid)
    head = (await ledger.nodes.get_many([session.head_id]))[0]
    assert head.role.value == "tool" and '"is_error":true' in head.blocks_json
    # The older branch's tip renders without the summary (its segment is not on it).
    assert await render_labels(ledger, sid, (await branch_tip(ledger, sid, "a6"))) == [
        "ROOT", "u1", "a1+a2+a3+a4", "r1+r2", "a5", "u2", "a6"]
    summary = await ledger.summaries.get(session.active_summary_id)
    assert await labels(ledger, summary.covers_ids) == [
        "u1", "a1+a2+a3+a4", "r1+r2", "a5", "u2b", "a7", "u3", "a8"]
    merged = (await ledger.nodes.get_many([summary.covers_ids[1]]))[0]
    kinds = [b["type"] for b in json.loads(merged.blocks_json)]
    assert kinds == ["thinking", "text", "tool_use", "tool_use"]
    # It goes on like a native session.
    result = await turns.send_message(sid, "And now?")
    assert result.reply is not None and result.user_node.predecessor_id == head.id
    await assert_sound(ledger, sid)


async def branch_tip(ledger, session_id, name) -> str:
    for branch in await ledger.branches.list(session_id):
        if (await labels(ledger, [branch.tip.id])) == [name]:
            return branch.tip.id
    raise AssertionError(f"no branch tip {name}")


async def test_claude_code_preserved_segment_and_relayed_summary(ledger, capsys):
    await import_files(ledger, capsys, CC_PRESERVED, fmt="claude-code")
    sid = cc_session_id(ledger, CC_PRESERVED)
    await assert_sound(ledger, sid)
    assert await render_labels(ledger, sid) == ["ROOT", "cb2+s2", "u5", "a5"]
    session = await ledger.sessions.get(sid)
    second = await ledger.summaries.get(session.active_summary_id)
    first = await ledger.summaries.get(second.absorbed_id)
    # The first compaction kept u3, a3 verbatim after its summary; the second relays it.
    assert await labels(ledger, first.covers_ids) == ["u1", "a1", "u2", "a2"]
    assert await labels(ledger, first.retained_ids) == ["u3", "a3"]
    assert await labels(ledger, second.covers_ids) == [
        "u1", "a1", "u2", "a2", "u3", "a3", "u4", "a4"]


async def test_claude_code_response_streamed_around_its_tool_results_is_one_message(
        ledger, capsys):
    # Tools ran while the response streamed: each result was written between the entries
    # of the response that called it, and the next part of the response follows it.
    await import_files(ledger, capsys, CC_STREAMED)
    sid = cc_session_id(ledger, CC_STREAMED)
    await assert_sound(ledger, sid)
    assert await tips(ledger, sid) == {"a6": False, "r3": True}
    assert await render_labels(ledger, sid, await branch_tip(ledger, sid, "a6")) == [
        "ROOT", "u1", "a1+a2+a3+a4", "r1+r2", "a5", "u2", "a6"]
    # The rewind's response was cut before its second tool ran: its tool message has
    # the first result and a cancelled one, and HEAD is there.
    assert await render_labels(ledger, sid) == ["ROOT", "u1", "a1+a2+a3+a4", "r1+r2", "a5",
                                                "u2b", "a7+a8", "r3"]
    key = lambda k: model.node_id(ledger.tenant, "claude-code", CC_STREAMED.stem, k)
    response, results, cut = await ledger.nodes.get_many([key("a4"), key("r2"), key("r3")])
    assert [(b["type"], b.get("id")) for b in json.loads(response.blocks_json)] == [
        ("thinking", None), ("tool_use", "toolu_s1"), ("text", None), ("tool_use", "toolu_s2")]
    assert [b["tool_use_id"] for b in json.loads(results.blocks_json)] == [
        "toolu_s1", "toolu_s2"]
    assert [(b["tool_use_id"], b["is_error"]) for b in json.loads(cut.blocks_json)] == [
        ("toolu_s3", False), ("toolu_s4", True)]
    assert "holds it already" in await import_files(ledger, capsys, CC_STREAMED)


async def test_claude_code_compaction_whose_logical_parent_the_file_lacks(ledger, capsys):
    # The boundary's logicalParentUuid names no entry: the summary covers the chain up
    # to the last entry before the boundary, and the conversation goes on below it.
    await import_files(ledger, capsys, CC_LOST_PARENT)
    sid = cc_session_id(ledger, CC_LOST_PARENT)
    await assert_sound(ledger, sid)
    assert await tips(ledger, sid) == {"a4": True}
    assert await render_labels(ledger, sid) == ["ROOT", "cb1+s1", "u3", "a4"]
    session = await ledger.sessions.get(sid)
    summary = await ledger.summaries.get(session.active_summary_id)
    assert await labels(ledger, summary.covers_ids) == ["u1", "a1", "r1", "a2", "u2", "a3"]
    assert summary.node.content.endswith("b.txt says beta.")
    assert "holds it already" in await import_files(ledger, capsys, CC_LOST_PARENT)


async def test_claude_code_preserved_segment_written_after_its_summary(ledger, capsys):
    # The entries the compaction kept were first written after the summary, re-parented
    # under it (the anchor); the boundary's logical parent is the kept tail.
    await import_files(ledger, capsys, CC_KEPT_AFTER)
    sid = cc_session_id(ledger, CC_KEPT_AFTER)
    await assert_sound(ledger, sid)
    assert await tips(ledger, sid) == {"a4": True}
    assert await render_labels(ledger, sid) == [
        "ROOT", "cb1+s1", "u3", "a3", "r3", "a3b", "u4", "a4"]
    session = await ledger.sessions.get(sid)
    summary = await ledger.summaries.get(session.active_summary_id)
    assert await labels(ledger, summary.covers_ids) == ["u1", "a1", "u2", "a2"]
    assert await labels(ledger, summary.retained_ids) == ["u3", "a3", "r3", "a3b"]
    assert "holds it already" in await import_files(ledger, capsys, CC_KEPT_AFTER)


async def test_reimport_writes_nothing_and_a_grown_file_only_what_it_gained(
        ledger, capsys, tmp_path):
    lines = CC_SESSION.read_text().splitlines(keepends=True)
    grown = tmp_path / CC_SESSION.name
    grown.write_text("".join(lines[:-2]))  # up to the resumed copy of u1
    await import_files(ledger, capsys, grown)
    sid = cc_session_id(ledger, grown)
    before = (await ledger.sessions.get(sid))
    assert "holds it already; nothing written" in await import_files(ledger, capsys, grown)
    assert (await ledger.sessions.get(sid)).updated_at == before.updated_at
    grown.write_text("".join(lines))
    out = await import_files(ledger, capsys, grown)
    assert f"session {sid} gained 3 nodes" in out  # u5, a10 and its cancelled result
    await assert_sound(ledger, sid)
    assert await render_labels(ledger, sid) == [
        "ROOT", "cb1+s1", "u4", "a9", "u5", "a10", "synthetic"]


USER = ('{"type": "user", "uuid": "u1", "parentUuid": %s, "sessionId": "s", "timestamp": '
        '"2025-06-01T10:00:00Z", "message": {"role": "user", "content": "hi"}}\n')
BAD = [
    (USER % "null" + '{not json\n', 2, "the line is not valid JSON"),
    (USER % "null" + '{"type": "teleport", "uuid": "x"}\n', 2, "unknown entry type 'teleport'"),
    (USER % '"gone"', 1, "parentUuid 'gone' names no earlier entry"),
]


@pytest.mark.parametrize("text, line, reason", BAD)
async def test_bad_input_names_file_line_and_reason_and_writes_nothing(
        ledger, capsys, tmp_path, text, line, reason):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(text)
    said = await refused(ledger, capsys, "import-transcript", "--strict", "--format",
                         "claude-code", str(bad))
    assert said.startswith(f"{bad}:{line}: {reason}")
    with pytest.raises(NotFound):
        await ledger.sessions.get(cc_session_id(ledger, bad))


PI_TREE = FIXTURES / "pi" / "tree.jsonl"
PI_V1 = FIXTURES / "pi" / "v1.jsonl"


async def test_pi_tree_with_two_compactions_and_a_branch_summary(ledger, capsys):
    await import_files(ledger, capsys, PI_TREE)  # detected from the header
    sid = model.session_id(ledger.tenant, "pi", "7d3f0c2a-pi")
    await assert_sound(ledger, sid)
    # What Pi sends after its last compaction: the summary, the kept entries, the rest.
    assert await render_labels(ledger, sid) == ["ROOT", "c2", "e10", "e11", "e12", "e13"]
    assert await tips(ledger, sid) == {"e8": False, "e13": True}
    session = await ledger.sessions.get(sid)
    second = await ledger.summaries.get(session.active_summary_id)
    first = await ledger.summaries.get(second.absorbed_id)
    assert await labels(ledger, first.covers_ids) == ["e1", "e2"]
    assert await labels(ledger, first.retained_ids) == ["e3", "e4", "e5", "e6"]
    assert await labels(ledger, second.covers_ids) == [
        "e1", "e2", "e3", "e4", "e5", "e6", "e7", "b1", "e9"]


async def test_pi_v1_file_without_ids(ledger, capsys):
    await import_files(ledger, capsys, PI_V1, fmt="pi")
    sid = model.session_id(ledger.tenant, "pi", "0a1b-legacy")
    await assert_sound(ledger, sid)
    assert await render_labels(ledger, sid) == ["ROOT", "line6", "line4", "line5", "line7",
                                                "line8"]


CODEX = FIXTURES / "codex" / "rollout-2025-09-14T08-00-00-0199a1b2-codex.jsonl"


async def test_codex_rollout_with_parallel_calls_rollback_and_two_compactions(ledger, capsys):
    await import_files(ledger, capsys, CODEX)  # detected from session_meta
    sid = model.session_id(ledger.tenant, "codex", "0199a1b2-codex")
    await assert_sound(ledger, sid)
    # The rollback left line17..line20 as a branch; HEAD goes on from line13.
    assert await tips(ledger, sid) == {"line20": False, "line35": True}
    # After the remote compaction Codex's model read its (encrypted) summary and the rest.
    assert await render_labels(ledger, sid) == ["ROOT", "line32", "line34", "line35"]
    before_rollback = ["ROOT", "line2", "line3", "line6", "line8+line9+line10",
                       "line11+line12", "line13"]
    assert await render_labels(ledger, sid, await branch_tip(ledger, sid, "line20")) == [
        *before_rollback, "line17", "line18", "line19", "line20"]
    session = await ledger.sessions.get(sid)
    remote = await ledger.summaries.get(session.active_summary_id)
    local = await ledger.summaries.get(remote.absorbed_id)
    local_segment = [*before_rollback[1:], "line22", "line23", "line24", "line25"]
    assert await labels(ledger, local.covers_ids) == local_segment
    # The local summary holds its replacement history's first item (the developer
    # message); the others follow it as turns, so the render is that history item by item.
    replayed = ["line26.2", "line26.3", "line26.4", "line26.5"]
    assert await labels(ledger, local.retained_ids) == replayed
    assert local.node.content.startswith("<permissions instructions>")
    assert local.node.metadata["role"] == "developer"
    assert remote.absorbed_id == local.node.id
    assert await labels(ledger, remote.covers_ids) == [
        *local_segment, *replayed, "line28", "line29", "line30", "line31"]
    # The remote one holds the encrypted compaction item, named, its content kept.
    assert remote.node.content.startswith("[Codex compaction item (compaction):")
    assert remote.node.metadata["compaction_item"]["encrypted_content"] == \
        "gAAAAB-remote-compaction-summary"
    assert remote.node.metadata["compaction"]["not_rendered"] == ["ghost_snapshot"]
    # Parallel calls: one assistant message, one tool message; arguments parsed, the
    # reasoning kept in metadata.
    calls, results, patch = await ledger.nodes.get_many(
        [model.node_id(ledger.tenant, "codex", "0199a1b2-codex", k)
         for k in ("line10", "line12", "line18")])
    assert [(b["id"], b["input"]) for b in json.loads(calls.blocks_json)] == [
        ("call_A", {"command": ["ls"]}), ("call_B", {"command": ["wc", "-l", "a.txt"]})]
    assert calls.metadata["reasoning"] == [
        {"summary": ["Two commands at once."], "encrypted_content": "gAAAAB-reasoning-1"}]
    assert [b["tool_use_id"] for b in json.loads(results.blocks_json)] == ["call_B", "call_A"]
    assert json.loads(patch.blocks_json)[0]["input"] == {
        "input": "*** Begin Patch\n*** Delete File: b.txt\n*** End Patch\n"}


CODEX_DESKTOP = FIXTURES / "codex" / "rollout-2026-02-20T09-00-00-019c7a10-desktop.jsonl"


async def test_codex_messages_between_calls_and_outputs_follow_the_results(ledger, capsys):
    # Codex Desktop records developer messages (and the user's steering, the model's own
    # text, reasoning) between a call and its output: each waits for the results.
    await import_files(ledger, capsys, CODEX_DESKTOP)
    sid = model.session_id(ledger.tenant, "codex", "019c7a10-desktop")
    await assert_sound(ledger, sid)
    assert await render_labels(ledger, sid) == [
        "ROOT", "line4", "line5+line6", "line9", "line7",
        "line10+line11+line12+line13", "line14+line18", "line15", "line16", "line17+line19",
        # the turn ended without an output for call_t4: a cancelled result, then what waited
        "line22", "line23", "synthetic", "line24", "line26", "line27"]
    developer, parallel = await ledger.nodes.get_many(
        [model.node_id(ledger.tenant, "codex", "019c7a10-desktop", k) for k in ("line7", "line13")])
    assert developer.metadata["role"] == "developer"
    assert developer.metadata["recorded_before_results"] is True
    assert [b["type"] for b in json.loads(parallel.blocks_json)] == [
        "text", "tool_use", "tool_use", "text"]
    assert "holds it already; nothing written" in await import_files(ledger, capsys,
                                                                     CODEX_DESKTOP)


CODEX_COMPACTED = FIXTURES / "codex" / "rollout-2026-02-21T14-00-00-019c8b22-compact.jsonl"


async def test_codex_render_after_a_compaction_is_its_replacement_history(ledger, capsys):
    await import_files(ledger, capsys, CODEX_COMPACTED)
    sid = model.session_id(ledger.tenant, "codex", "019c8b22-compact")
    await assert_sound(ledger, sid)
    rendered = await render_context(ledger, sid)
    assert await labels(ledger, rendered.node_ids) == [
        "ROOT", "line12", "line12.2", "line12.3", "line12.4", "line12.5", "line12.6",
        "line15", "line16"]
    # Item by item: the summary holds the first, each other is a turn of its own.
    history = json.loads(CODEX_COMPACTED.read_text().splitlines()[11])["payload"][
        "replacement_history"]
    nodes = {n.id: n for n in await ledger.nodes.get_many(list(rendered.node_ids))}
    shown = [nodes[i] for i in rendered.node_ids[1:len(history) + 1]]
    assert [n.content for n in shown[:-1]] == [
        item["content"][0]["text"] for item in history[:-1]]
    assert [n.role.value for n in shown] == [
        "summary", "assistant", "user", "user", "user", "user"]
    assert shown[2].metadata["role"] == "developer" and shown[3].metadata["contextual"]
    # The encrypted item is named, its content kept.
    assert shown[-1].content.startswith("[Codex compaction item (compaction_summary):")
    assert shown[-1].metadata["compaction_item"]["encrypted_content"] == \
        "gAAAAB-remote-summary-of-header-and-footer"
    # The local compaction before it: its developer message, the context, the request,
    # the summary as Codex sent them; the remote one covers all that went before.
    session = await ledger.sessions.get(sid)
    remote = await ledger.summaries.get(session.active_summary_id)
    local = await ledger.summaries.get(remote.absorbed_id)
    assert local.node.metadata["role"] == "developer"
    assert await labels(ledger, local.covers_ids) == ["line4", "line5", "line6", "line7"]
    assert await labels(ledger, local.retained_ids) == ["line9.2", "line9.3", "line9.4"]
    assert "message" not in local.node.metadata["compaction"]  # the summary item holds it
    assert await labels(ledger, remote.retained_ids) == [
        "line12.2", "line12.3", "line12.4", "line12.5", "line12.6"]
    assert "holds it already; nothing written" in await import_files(ledger, capsys,
                                                                     CODEX_COMPACTED)


CODEX_LINE = '{"timestamp": "2025-09-14T08:00:01Z", "type": "%s", "payload": %s}\n'
CODEX_META = CODEX_LINE % ("session_meta", '{"id": "c"}')
CODEX_USER = CODEX_LINE % ("response_item", '{"type": "message", "role": "user", "content": '
                           '[{"type": "input_text", "text": "hi"}]}')
CODEX_BAD = [
    (CODEX_META + CODEX_USER + CODEX_LINE % (
        "response_item", '{"type": "function_call_output", "call_id": "x", "output": "?"}'),
     3, "the output of call 'x' answers no tool call of the message it follows"),
    (CODEX_META + CODEX_USER + CODEX_LINE % ("event_msg", '{"type": "thread_rolled_back", '
                                             '"num_turns": -1}'),
     3, "thread_rolled_back num_turns -1 is not a count"),
    (CODEX_META + CODEX_LINE % ("response_item", "[]"), 2, "a response_item line without a "
     "payload object"),
]


@pytest.mark.parametrize("text, line, reason", CODEX_BAD)
async def test_codex_bad_input_names_file_line_and_reason(ledger, capsys, tmp_path, text,
                                                          line, reason):
    bad = tmp_path / "rollout.jsonl"
    bad.write_text(text)
    said = await refused(ledger, capsys, "import-transcript", str(bad))
    assert said.startswith(f"{bad}:{line}: {reason}")
    with pytest.raises(NotFound):
        await ledger.sessions.get(model.session_id(ledger.tenant, "codex", "c"))


async def test_odd_entries_are_skipped_or_mentioned_and_listed_not_refused(
        ledger, capsys, tmp_path):
    lines = CODEX.read_text().splitlines(keepends=True)
    # A placeholder where the image's URL was, a malformed line, an unknown Claude Code
    # entry type: what can be mapped is, each of them listed by file:line.
    lines[27] = lines[27].replace(lines[27][lines[27].index("data:image"):].split('"')[0],
                                  "[REDACTED_IMAGE_URL 1a2b]")
    lines.insert(30, "{not json\n")
    rollout = tmp_path / CODEX.name
    rollout.write_text("".join(lines))
    session = tmp_path / "odd.jsonl"
    session.write_text(USER % "null" + '{"type": "teleport", "uuid": "x", "parentUuid": "u1"}\n'
                       + USER.replace('"u1"', '"u2"') % '"x"')
    out = await import_files(ledger, capsys, rollout, session)
    assert f"{rollout}: 2 entries degraded (invalid_block 1, malformed_line 1)" in out
    assert f"  {rollout}:28: invalid_block: image.source.url must be an http(s) URL" in out
    assert f"  {rollout}:31: malformed_line: the line is not valid JSON" in out
    assert f"  {session}:2: unknown_entry: unknown entry type 'teleport'" in out
    sid = model.session_id(ledger.tenant, "codex", "0199a1b2-codex")
    await assert_sound(ledger, sid)
    image_turn = (await ledger.nodes.get_many(
        [model.node_id(ledger.tenant, "codex", "0199a1b2-codex", "line28")]))[0]
    assert [b["type"] for b in json.loads(image_turn.blocks_json)] == [
        "text", "text", "text", "text"]
    assert "[image omitted on import: image.source.url must be an http(s) URL" \
        in image_turn.content
    # The unknown entry is bookkeeping: u2 follows u1 through it.
    odd = cc_session_id(ledger, session)
    assert await render_labels(ledger, odd) == ["ROOT", "u1", "u2"]
    # --strict refuses the file as before, and writes nothing.
    strict = tmp_path / "strict" / CODEX.name
    strict.parent.mkdir()
    strict.write_text("".join(lines).replace("0199a1b2-codex", "0199a1b2-strict"))
    said = await refused(ledger, capsys, "import-transcript", "--strict", str(strict))
    assert said.startswith(f"{strict}:31: the line is not valid JSON")
    with pytest.raises(NotFound):
        await ledger.sessions.get(model.session_id(ledger.tenant, "codex", "0199a1b2-strict"))


CC_AGENTS = FIXTURES / "claude_code" / "agents" / "5c1d9e20-agents.jsonl"


async def test_claude_code_sub_agents_are_spawned_side_branches(ledger, capsys):
    await import_files(ledger, capsys, CC_AGENTS)
    sid = cc_session_id(ledger, CC_AGENTS)
    await assert_sound(ledger, sid)
    # The sub-agents never move HEAD and are no branch tips; the compaction helper is
    # no sub-agent.
    assert await tips(ledger, sid) == {"a3": True}
    assert await render_labels(ledger, sid) == ["ROOT", "u1", "a1+a2", "r1+r2", "a3"]
    session = await ledger.sessions.get(sid)
    assert session.node_count == 11
    spawner = model.node_id(ledger.tenant, "claude-code", CC_AGENTS.stem, "a2")
    # Each agent reads its prompt, and points CALLER at the message holding its tool use:
    # the first by its sidecar's toolUseId, the second by the result's agentId.
    for agent, last, expected in (("a1b2", "x4", ["ROOT", "x1", "x2", "x3", "x4"]),
                                  ("c3d4", "y2", ["ROOT", "y1", "y2"])):
        tip = model.node_id(ledger.tenant, "claude-code", CC_AGENTS.stem,
                            f"agent-{agent}/{last}")
        assert await render_labels(ledger, sid, tip) == expected
        chain = (await render_context(ledger, sid, tip)).node_ids[1:]
        nodes = await ledger.nodes.get_many(list(chain))
        assert all(n.side_branch and n.caller_id == spawner for n in nodes)
        assert nodes[0].metadata["spawned_from"] == spawner
        assert nodes[0].metadata["agent"]["id"] == agent
        assert nodes[0].metadata["source"]["file"].endswith(f"subagents/agent-{agent}.jsonl")
    assert "holds it already" in await import_files(ledger, capsys, CC_AGENTS)


PI_LABELS = FIXTURES / "pi" / "labels.jsonl"


async def pi_labels(ledger, sid_key: str, keys) -> dict[str, str]:
    ids = {model.node_id(ledger.tenant, "pi", sid_key, key): key for key in keys}
    return {ids[i]: text for i, text in (await ledger.labels.get_many(list(ids))).items()}


async def test_pi_labels_are_the_nodes_labels_on_import_and_on_growth(ledger, capsys, tmp_path):
    lines = PI_LABELS.read_text().splitlines(keepends=True)
    keys = ["e1", "e2", "e3", "e4", "e5", "e6", "e7"]
    sid = model.session_id(ledger.tenant, "pi", "5e1a-labels")
    file = tmp_path / PI_LABELS.name
    file.write_text("".join(lines[:14]))  # through l6, which clears e1's label
    await import_files(ledger, capsys, file)
    # l3 replaced l1's label; l4 labels a model_change, which is no node
    assert await pi_labels(ledger, "5e1a-labels", keys) == {"e2": "the plan", "e3": "read"}
    assert "nothing written" in await import_files(ledger, capsys, file)
    file.write_text("".join(lines[:16]))  # + e7, and l7 labels e4, imported before
    out = await import_files(ledger, capsys, file)
    assert f"session {sid} gained 1 node, 1 label set or cleared" in out
    file.write_text("".join(lines))  # + l8 only: an empty label clears e3's
    out = await import_files(ledger, capsys, file)
    assert f"session {sid} gained 0 nodes, 1 label set or cleared" in out
    assert "nothing written" in await import_files(ledger, capsys, file)
    assert await pi_labels(ledger, "5e1a-labels", keys) == {"e2": "the plan", "e4": "answer"}
    await assert_sound(ledger, sid)


async def test_pi_labels_of_a_whole_file_are_those_its_growth_leaves(ledger, capsys):
    await import_files(ledger, capsys, PI_LABELS)
    await assert_sound(ledger, model.session_id(ledger.tenant, "pi", "5e1a-labels"))
    assert await pi_labels(ledger, "5e1a-labels", ["e1", "e2", "e3", "e4", "e7"]) == {
        "e2": "the plan", "e4": "answer"}


async def test_a_pi_label_naming_no_entry_is_bad_input(ledger, capsys, tmp_path):
    bad = tmp_path / "bad-label.jsonl"
    lines = PI_LABELS.read_text().splitlines(keepends=True)
    bad.write_text("".join(lines[:3]) + json.dumps(
        {"type": "label", "id": "lx", "parentId": "e1", "timestamp": "2025-07-02T09:00:30.000Z",
         "targetId": "gone", "label": "x"}) + "\n")
    said = await refused(ledger, capsys, "import-transcript", str(bad))
    assert said.startswith(f"{bad}:4: targetId 'gone' names no earlier entry")


def _cc(uuid: str, role: str, content, parent: str | None = "<none>") -> str:
    entry = {"type": role, "uuid": uuid, "sessionId": "loose", "timestamp":
             "2025-06-01T10:00:00Z", "message": {"role": role, "content": content}}
    if parent != "<none>":
        entry["parentUuid"] = parent
    return json.dumps(entry) + "\n"


async def test_claude_code_entries_without_parents_and_results_answering_nothing(
        ledger, capsys, tmp_path):
    # Entries written without a parentUuid key follow the one before them; a parent the
    # file lacks, or results answering no tool use, are listed and kept, not refused.
    use = [{"type": "tool_use", "id": "t1", "name": "Write", "input": {"path": "a"}}]
    loose = tmp_path / "loose.jsonl"
    loose.write_text(
        _cc("u1", "user", "write a") + _cc("a1", "assistant", use)
        + _cc("r1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}])
        + _cc("a2", "assistant", [{"type": "text", "text": "done"}])
        + _cc("u2", "user", "again", parent="gone")
        + _cc("r2", "user", [{"type": "tool_result", "tool_use_id": "t9", "content": "stray"}],
              parent="u2"))
    out = await import_files(ledger, capsys, loose)
    assert f"  {loose}:5: detached: parentUuid 'gone' names no earlier entry" in out
    assert f"  {loose}:6: invalid_block: tool results for t9 answer no tool use" in out
    sid = cc_session_id(ledger, loose)
    await assert_sound(ledger, sid)
    assert await render_labels(ledger, sid) == ["ROOT", "u1", "a1", "r1", "a2", "u2", "r2"]
    stray = (await ledger.nodes.get_many([(await render_context(ledger, sid)).node_ids[-1]]))[0]
    assert stray.role.value == "user" and stray.content.endswith("stray") and "t9" in stray.content


def _pi(entry_id: str, parent: str, role: str, text: str, stop: str = "stop") -> str:
    message = {"role": role, "content": text, "timestamp": 1} if role == "user" else {
        "role": "assistant", "content": [{"type": "text", "text": text}], "model": "m",
        "stopReason": stop, "usage": {"input": 1, "output": 1}}
    return json.dumps({"type": "message", "id": entry_id, "parentId": parent,
                       "timestamp": "2025-07-03T09:00:00.000Z", "message": message}) + "\n"


@pytest.mark.parametrize("up_to, hidden_covered", [("a3", ["a1x"]), ("a5", ["a1x", "a4x"])])
async def test_compaction_covers_the_replies_kept_out_of_the_context_inside_its_segment(
        ledger, compactor, tmp_path, capsys, up_to, hidden_covered):
    # Aborted replies (kept out of the context) lie on the chain between read turns: the
    # summary's segment, a chain segment, holds them; its summarizer read none of them.
    long = "words " * 60
    text = json.dumps({"type": "session", "version": 3, "id": f"holes-{up_to}",
                       "timestamp": "2025-07-03T09:00:00.000Z", "cwd": "/w"}) + "\n"
    chain = [("u1", "user", long), ("a1x", "assistant", "half", "aborted"),
             ("u2", "user", long), ("a2", "assistant", long), ("u3", "user", long),
             ("a3", "assistant", long), ("u4", "user", long),
             ("a4x", "assistant", "cut off", "error"), ("u5", "user", long),
             ("a5", "assistant", long), ("u6", "user", long), ("a6", "assistant", long)]
    parent = None
    for entry_id, role, said, *stop in chain:
        text += _pi(entry_id, parent, role, said, *stop)
        parent = entry_id
    source = tmp_path / "holes.jsonl"
    source.write_text(text)
    await import_files(ledger, capsys, source)
    sid = model.session_id(ledger.tenant, "pi", f"holes-{up_to}")
    read_before = await render_labels(ledger, sid)
    assert "a1x" not in read_before and "a4x" not in read_before
    result = await compactor.compact(
        sid, up_to=model.node_id(ledger.tenant, "pi", f"holes-{up_to}", up_to))
    assert result.status.value == "COMPACTED" and result.message is None, result.message
    await assert_sound(ledger, sid)
    covered = await labels(ledger, result.summary.covers_ids)
    assert [c for c in covered if c.endswith("x")] == hidden_covered
    assert covered[-1] == up_to
    after = await render_labels(ledger, sid)
    assert after[2:] == read_before[read_before.index(up_to) + 1:]
    (call,) = [c for c in await session_calls(ledger, sid) if c.purpose.value == "summarize"]
    reads = [n.id for n in await ledger.calls.reads(call.id)]
    assert reads and not {"a1x", "a4x"} & set(await labels(ledger, reads))
