"""The prompt-cache fields of a stored call: what `ctxdag check` and an import refuse, and
how a break between two calls' prompts is classified (service/store/calls.py)."""
from __future__ import annotations

from datetime import datetime, timezone

from service.store import Limits, Node, Role
from service.store.calls import BreakCause, cache_break
from service.model.models import Call, Purpose
from service.store.records import CALL, record_problems, reference_problems

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def stored(call_id: str, **fields) -> dict:
    return {"id": call_id, "session_id": "ses_1", "purpose": "chat", "provider": "anthropic",
            "started_at": NOW, "finished_at": NOW, "read_count": 3, **fields}


def problems(record: dict) -> list[str]:
    """Its problems but the times' (stored as Neo4j's own datetimes, not Python's)."""
    return [p for p in record_problems("call", record, CALL, Limits()) if "_at " not in p]


def test_a_shared_prefix_longer_than_the_prompt_or_a_stray_previous_call_is_named():
    good = stored("cal_2", previous_call_id="cal_1", shared_prefix_reads=3,
                  shared_prefix_tokens=40, prompt_tokens=50, cache_read_input_tokens=30,
                  cache_creation_input_tokens=10)
    assert problems(good) == []
    assert reference_problems([], [stored("cal_1"), good]) == []
    long = stored("cal_3", shared_prefix_reads=4, cache_read_input_tokens=-1)
    assert problems(long) == [
        "call cal_3: cache_read_input_tokens must be an integer from 0 to 9223372036854775807",
        "call cal_3: shared_prefix_reads is 4, more than the call's 3 reads"]
    assert reference_problems([], [stored("cal_4", previous_call_id="cal_9")]) == [
        "call cal_4: previous_call_id 'cal_9' is not another call of this session"]


def node(node_id: str, role: Role = Role.USER, predecessor: str | None = "nod_r") -> Node:
    return Node(id=node_id, session_id="ses_1", role=role, content=node_id, created_at=NOW,
                tokens=1, metadata={}, seq=1, depth=1, predecessor_id=predecessor,
                caller_id=None, side_branch=False, deleted_at=None)


def call(call_id: str, reads: tuple[str, ...], shared: int | None = None,
         tools: str | None = None) -> Call:
    return Call(id=call_id, session_id="ses_1", purpose=Purpose.CHAT, provider="x", model=None,
                head_id=None, read_ids=reads, read_count=len(reads), output_id=None,
                started_at=NOW, finished_at=NOW, input_tokens=None, output_tokens=None,
                error_code=None, error_message=None, tools_sha256=tools,
                shared_prefix_reads=shared)


def test_each_write_that_breaks_a_prefix_is_named():
    nodes = {n.id: n for n in (node("nod_r", Role.SYSTEM, None), node("nod_a"),
                               node("nod_b", predecessor="nod_a"),
                               node("nod_e", predecessor="nod_a"),
                               node("nod_s", Role.SUMMARY), node("nod_x", predecessor="nod_q"))}
    before = call("cal_1", ("nod_r", "nod_a", "nod_b"))
    assert cache_break(before, call("cal_2", ("nod_r", "nod_a", "nod_b", "nod_x"), 3),
                       nodes, {}) is None  # the whole previous prompt, and more
    # A call stored before the accounting has no shared prefix to break.
    assert cache_break(before, call("cal_2", ("nod_r", "nod_a"), None), nodes, {}) is None
    edited = cache_break(before, call("cal_2", ("nod_r", "nod_a", "nod_e"), 2), nodes, {})
    assert (edited.position, edited.node_id, edited.previous_node_id, edited.cause) == (
        2, "nod_e", "nod_b", BreakCause.EDIT)
    compacted = cache_break(before, call("cal_2", ("nod_r", "nod_s", "nod_b"), 1), nodes, {})
    assert compacted.cause is BreakCause.COMPACTION
    undone = cache_break(call("cal_1", ("nod_r", "nod_s", "nod_b")),
                         call("cal_2", ("nod_r", "nod_a", "nod_b"), 1), nodes, {})
    assert undone.cause is BreakCause.UNCOMPACTION
    elsewhere = cache_break(before, call("cal_2", ("nod_r", "nod_a", "nod_x"), 2), nodes, {})
    assert elsewhere.cause is BreakCause.BRANCH
    shorter = cache_break(before, call("cal_2", ("nod_r", "nod_a"), 2), nodes, {})
    assert (shorter.node_id, shorter.previous_node_id, shorter.cause) == (
        None, "nod_b", BreakCause.BRANCH)
    tools = cache_break(before, call("cal_2", ("nod_r", "nod_a", "nod_b"), 0, "ab" * 32),
                        nodes, {})
    assert (tools.position, tools.cause) == (0, BreakCause.TOOLS)


def test_a_pin_and_an_unpin_are_told_from_the_prompts_and_the_segments():
    """A covered turn in a prompt that holds its summary is there because of a pin: new there,
    the break is a PIN; gone from there, an UNPIN (before a later stand-in too, segmented)."""
    nodes = {n.id: n for n in (node("nod_r", Role.SYSTEM, None), node("nod_s", Role.SUMMARY),
                               node("nod_p", predecessor="nod_r"),
                               node("nod_q", predecessor="nod_p"),
                               node("nod_t", predecessor="nod_z"),
                               node("nod_s2", Role.SUMMARY, predecessor="nod_z"))}
    covering = {"nod_p": ["nod_s"], "nod_q": ["nod_s"]}
    plain = call("cal_1", ("nod_r", "nod_s", "nod_t"))
    pinned = call("cal_2", ("nod_r", "nod_s", "nod_p", "nod_t"), 2)
    found = cache_break(plain, pinned, nodes, covering)
    assert (found.position, found.node_id, found.previous_node_id, found.cause) == (
        2, "nod_p", "nod_t", BreakCause.PIN)
    both = call("cal_3", ("nod_r", "nod_s", "nod_p", "nod_q", "nod_t"), 3)
    assert cache_break(pinned, both, nodes, covering).cause is BreakCause.PIN
    # Unpinning the first of two: the node there (the second) was in the previous prompt.
    second = call("cal_4", ("nod_r", "nod_s", "nod_q", "nod_t"), 2)
    assert cache_break(both, second, nodes, covering).cause is BreakCause.UNPIN
    assert cache_break(pinned, call("cal_5", ("nod_r", "nod_s", "nod_t"), 2), nodes,
                       covering).cause is BreakCause.UNPIN
    # Segmented: the pin goes after its own segment's stand-in, before the next one.
    segments = call("cal_6", ("nod_r", "nod_s", "nod_s2", "nod_t"))
    after_own = call("cal_7", ("nod_r", "nod_s", "nod_p", "nod_s2", "nod_t"), 2)
    assert cache_break(segments, after_own, nodes, covering).cause is BreakCause.PIN
    assert cache_break(after_own, call("cal_8", segments.read_ids, 2), nodes,
                       covering).cause is BreakCause.UNPIN
    # Covered, but the prompt holds no summary of it (the summary undone): not a pin.
    undone = call("cal_9", ("nod_r", "nod_p", "nod_q", "nod_t"), 1)
    assert cache_break(both, undone, nodes, covering).cause is BreakCause.UNCOMPACTION
