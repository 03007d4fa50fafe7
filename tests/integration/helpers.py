"""Small helpers the integration tests share."""
from __future__ import annotations

import asyncio
import atexit
import contextlib
import shutil
import tempfile

from service.store import Call, Ledger, Node, Session


class CommittedEvents:
    """Hears the events a ledger commits (its `on_commit`), for the subscribers of tests."""

    def __init__(self) -> None:
        self._queues: dict[str, list] = {}

    def committed(self, session_id: str, events: list) -> None:
        for queue in self._queues.get(session_id, []):
            for event in events:
                queue.put_nowait(event)

    @contextlib.contextmanager
    def subscribe(self, session_id: str):
        queue: asyncio.Queue = asyncio.Queue()
        self._queues.setdefault(session_id, []).append(queue)
        try:
            yield queue
        finally:
            self._queues[session_id].remove(queue)


async def chat(ledger: Ledger, session: Session, *turns: str,
               start_with: str = "user") -> list[Node]:
    """Appends alternating user/assistant turns at HEAD; returns the new nodes."""
    roles = ("user", "assistant") if start_with == "user" else ("assistant", "user")
    nodes = []
    for i, text in enumerate(turns):
        role = roles[i % 2]
        appended = await ledger.head.append_message(session.id, role, text)
        assert appended.head_moved
        nodes.append(appended.node)
    return nodes


async def session_calls(ledger: Ledger, session_id: str) -> list[Call]:
    """The session's calls, oldest first (read_ids not loaded), as the API's loader reads them."""
    return (await ledger.calls.in_sessions([session_id]))[session_id]


async def broken_sessions(db, limits, tenant: str | None = None) -> dict[str, list[str]]:
    """The sessions with broken invariants, each with its violations (as `ctxdag check` sees them)."""
    from service.store.invariants import check_each

    return {session_id: found async for session_id, found in check_each(db, limits, tenant)
            if found}


async def head_id(ledger: Ledger, session_id: str) -> str:
    return (await ledger.sessions.get(session_id)).head_id


async def branch_tips(ledger: Ledger, session_id: str) -> dict[str, tuple[int, bool]]:
    """tip content -> (length, is_head)."""
    return {b.tip.content: (b.length, b.is_head) for b in await ledger.branches.list(session_id)}


async def snapshot(ledger: Ledger, session_id: str) -> tuple:
    """Everything a bad input must leave untouched: the session row, nodes and edges, and
    how many events it has."""
    rows, _, _ = await ledger.db.driver.execute_query(
        "MATCH (s:Session {id: $sid}) "
        "OPTIONAL MATCH (n:Node {session_id: $sid}) "
        "WITH s, n ORDER BY n.seq "
        "RETURN properties(s) AS s, [(s)-[:HEAD]->(h) | h.id] AS head, "
        "collect([properties(n), [(n)-[r]->(m) | [type(r), m.id]]]) AS nodes, "
        "COUNT { (e:Event {session_id: $sid}) } AS events",
        sid=session_id,
    )
    return tuple(rows[0].values()) if rows else ()


def without_event_counters(snapshot: tuple) -> tuple:
    """A snapshot of the session's nodes and edges without what storing an event moves
    (a failed compaction stores compaction_started and compaction_failed, nothing else)."""
    session, head, nodes, _ = snapshot
    kept = {k: v for k, v in session.items()
            if k not in ("updated_at", "next_event_seq", "events_pruned_through")}
    return kept, head, nodes


async def stored_events(ledger: Ledger, session_id: str, after: int = 0) -> list:
    """The session's stored events after seq `after`, in order."""
    from service.store.events import events_after

    return await events_after(ledger.db, {session_id: after}, 10_000)


DELETE_SESSION = """
MATCH (s:Session {id: $sid})
OPTIONAL MATCH (n:Node {session_id: $sid})
OPTIONAL MATCH (c:Call {session_id: $sid})
OPTIONAL MATCH (e:Event {session_id: $sid})
OPTIONAL MATCH (u:ToolUse {session_id: $sid})
OPTIONAL MATCH (v:ToolSetVersion {session_id: $sid})
DETACH DELETE s, n, c, e, u, v
"""


async def run_cypher(db, text, **params) -> list[dict]:
    """Ad-hoc Cypher for a test's setup or inspection (the service's own lives in cypher/)."""
    records, _, _ = await db.driver.execute_query(text, params)
    return [r.data() for r in records]


async def assert_sound(ledger: Ledger, session_id: str) -> None:
    found = await ledger.violations(session_id)
    assert found == [], found


async def rendered(ledger: Ledger, session_id: str, head: str | None = None) -> list[str]:
    from service.context.render import render_context

    return list((await render_context(ledger, session_id, head)).node_ids)


TURN_TOKENS = 25
KEEP_FOUR = 4 * TURN_TOKENS  # a keep_recent_tokens that retains exactly four turns


def turns(count: int, start: int = 0) -> list[str]:
    """Alternating user/assistant texts of TURN_TOKENS tokens each (100 characters).

    Each opens with a short sentence and pads with a second one, so an extractive
    summary is much smaller than the turns it covers.
    """
    return [f"{'Question' if i % 2 == 0 else 'Answer'} {i:03d}. ".ljust(100, "x")
            for i in range(start, start + count)]


async def two_compactions(ledger, compactor) -> tuple[Session, list[Node], str, str]:
    """A session of ROOT and twelve turns, compacted twice from HEAD keeping four turns:
    summary s1 covers the first four, s2 absorbs s1 and newly covers the next four, and the
    last four are retained below s2. Returns the session, the turns, s1's and s2's ids."""
    session = await ledger.sessions.create("summaries", "sys")
    t = await chat(ledger, session, *turns(8))
    s1 = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    t += await chat(ledger, session, *turns(4, start=8))
    s2 = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    return session, t, s1.id, s2.id


def make_compactor(ledger, *, summarizer=None, policy=None):
    """A compactor with the offline parts unless told otherwise."""
    from service.context.budget import BudgetPolicy
    from service.context.compaction import Compactor
    from service.context.summarizers import OfflineExtractiveSummarizer
    from service.context.tokens import HeuristicEstimator

    return Compactor(ledger, summarizer or OfflineExtractiveSummarizer(),
                     policy or BudgetPolicy(), HeuristicEstimator())


# A session's render of HEAD with both providers' requests, and which nodes no render
# reads (an imported reply its tool kept out of its model's context).
RENDERED_VIEW = """query ($s: ID!) { session(id: $s) {
  render { nodeIds anthropic: request(format: ANTHROPIC_MESSAGES)
           openai: request(format: OPENAI_CHAT) }
  graph { nodes { id outOfContext } }
} }"""


# The cache folder of the commands tests run (a one-shot import keeps readings there),
# not the user's.
COMMANDS_CACHE = tempfile.mkdtemp(prefix="ctxdag-test-cache-")
atexit.register(shutil.rmtree, COMMANDS_CACHE, True)


def runtime_for(db, tenant: str, **env: str):
    """The parts `ctxdag` builds from its Settings (CTXDAG_TENANT=`tenant`, plus `env`), on `db`."""
    from service.config import Settings
    from service.runtime import Runtime

    return Runtime.assemble(Settings.from_env(
        {"CTXDAG_TENANT": tenant, "CTXDAG_CACHE": COMMANDS_CACHE, **env}), db)


async def run_command(runtime, *argv: str) -> int:
    """`ctxdag ARGV` in-process on `runtime`, dispatched the way `ctxdag` dispatches it."""
    from service.cli import parse_args

    args = parse_args(argv)
    return await args.job(runtime, args)


PDF = (b"%PDF-1.4\n1 0 obj <</Type /Pages /Kids [2 0 R 3 0 R]>>\n2 0 obj <</Type /Page>>\n"
       b"3 0 obj <</Type/Page>>\n%%EOF")


def tool_uses(*ids: str, text: str | None = None) -> list[dict]:
    """An assistant's blocks opening a read_file tool use per id (after `text`, if given)."""
    lead = [{"type": "text", "text": text}] if text else []
    return lead + [{"type": "tool_use", "id": i, "name": "read_file",
                    "input": {"path": f"{i}.txt"}} for i in ids]


def tool_results(*ids: str) -> list[dict]:
    return [{"type": "tool_result", "tool_use_id": i, "content": f"contents of {i}"}
            for i in ids]


async def agent_session(ledger, compactor) -> tuple[Session, dict[str, str]]:
    """A session of an agent: plain turns compacted once, then a question with an image; a
    reply thinking (signed) and opening two parallel tool uses, answered (one an error);
    the image again by hash with a PDF; a tool-using reply answered, retried with another
    tool use, answered too. Returns the session and its notable nodes' ids by name."""
    import base64

    from tests.unit.test_blocks import png

    def base64_source(media_type: str, data: bytes) -> dict:
        return {"type": "base64", "media_type": media_type,
                "data": base64.b64encode(data).decode()}

    async def append(role, content=None, **kwargs):
        return (await ledger.head.append_message(session.id, role, content, **kwargs)).node

    session = await ledger.sessions.create("agent", "You use tools.")
    await chat(ledger, session, *turns(8))
    summary = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    ask = await append("user", blocks=[
        {"type": "text", "text": "What do these files and this picture hold?"},
        {"type": "image", "source": base64_source("image/png", png(64, 32))}])
    call = await append("assistant", blocks=[
        {"type": "thinking", "thinking": "Two files: read both at once.",
         "signature": "EqQBCkYIBxgCKkD+/sig=="},
        *tool_uses("toolu_a", "toolu_b", text="Reading both.")])
    results = await append("tool", blocks=[
        *tool_results("toolu_a"),
        {"type": "tool_result", "tool_use_id": "toolu_b", "is_error": True,
         "content": [{"type": "text", "text": "no such file"}]}])
    await append("assistant", "a.txt holds text; b.txt is missing.")
    image = ask.blocks[1].source
    again = await append("user", blocks=[
        {"type": "image", "source": {"type": "media", "media_type": "image/png",
                                     "sha256": image.sha256, "bytes": image.bytes}},
        {"type": "document", "title": "Spec", "source": base64_source("application/pdf", PDF)},
        {"type": "text", "text": "Compare the picture with the spec."}])
    lookup = await append("assistant", blocks=tool_uses("toolu_c"))
    looked = await append("tool", blocks=tool_results("toolu_c"), predecessor_id=lookup.id)
    retried = (await ledger.head.retry(lookup.id, blocks=tool_uses(
        "toolu_d", text="Once more, the other file."))).node
    answered = await append("tool", blocks=tool_results("toolu_d"))
    from service.store import CallRecord, Purpose
    from service.model.ids import utcnow
    from service.model.models import tools_json
    from service.turns.requests import Tool

    offered = tools_json([Tool("read_file", "Reads a file.", {"type": "object"})])
    rendered = await ledger.views.render(session.id)
    reply = (await ledger.head.append_message(
        session.id, "assistant", "They match.", call=CallRecord.of_prompt(
            Purpose.EXTERNAL, "external", "a-model", rendered.nodes, utcnow(), utcnow(),
            head_id=rendered.head_id, tools_json=offered))).node
    return session, {"summary": summary.id, "ask": ask.id, "call": call.id,
                     "results": results.id, "again": again.id, "lookup": lookup.id,
                     "looked": looked.id, "retried": retried.id, "answered": answered.id,
                     "reply": reply.id}


def as_version_3(document: dict) -> dict:
    """A version 4 backup document as version 3 wrote it: without branch names, pins and
    carry nodes' carries_over."""
    old = {k: v for k, v in document.items() if k not in ("branch_names", "pins")}
    return {**old, "version": 3,
            "nodes": [{k: v for k, v in n.items() if k != "carries_over"}
                      for n in document["nodes"]]}
