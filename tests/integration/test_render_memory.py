"""A turn's prompt extends the render its process remembers of the tip it appends to
(context/render.py: RenderMemory). It must always equal a full render of the same head.

Two `Turns` with their own memories stand in for two service processes writing one
session: after every kind of move — append, another process's append, compaction, fork
(retry, edit), checkout, a delete that takes a summary, a strategy change, uncompact,
restart — each turn's recorded reads are compared with a fresh full render, and the test
checks whether the turn extended a remembered render or rendered in full.
"""
from service.store import Purpose
from service.turns.providers import OfflineProvider
from service.turns.service import Turns
from tests.integration.helpers import KEEP_FOUR, assert_sound, head_id, make_compactor


def replica(ledger, events) -> Turns:
    return Turns(ledger, make_compactor(ledger), OfflineProvider())


async def checked_turn(ledger, process: Turns, session_id: str, text: str, *,
                       extends: bool):
    """A send_message through `process`: its prompt equals a full render of its head, and
    it was served by extension exactly when `extends` says so."""
    before = process.renders.extended
    result = await process.send_message(session_id, text)
    assert result.reply is not None, result.error
    call = await ledger.calls.get(result.call_id)
    full = await ledger.views.render(session_id, result.user_node.id)
    assert call.read_ids == full.node_ids
    assert call.purpose is Purpose.CHAT and call.head_id == result.user_node.id
    # The reply always extends the prompt's render; the prompt itself only when it could.
    assert process.renders.extended - before == (2 if extends else 1)
    assert await head_id(ledger, session_id) == result.reply.id
    return result


async def test_incremental_prompts_equal_full_renders_after_every_kind_of_move(ledger, events):
    a, b = replica(ledger, events), replica(ledger, events)
    compact = make_compactor(ledger).compact
    session = await ledger.sessions.create("memory", "sys")
    sid = session.id

    # Appends: the first turn renders in full, the next ones extend.
    first = await checked_turn(ledger, a, sid, "Question one. " + "x" * 80, extends=False)
    for i in range(2, 6):
        await checked_turn(ledger, a, sid, f"Question {i}. " + "x" * 80, extends=True)

    # Another process appends: A's remembered tip is no longer HEAD's predecessor.
    await checked_turn(ledger, b, sid, "From B. " + "x" * 80, extends=False)
    await checked_turn(ledger, a, sid, "Back to A. " + "x" * 80, extends=False)
    await checked_turn(ledger, a, sid, "A again. " + "x" * 80, extends=True)

    # Another process compacts: HEAD stays where A's memory ends, but the summary
    # version moved, so A must render in full (and now reads the summary).
    summary = (await compact(sid, keep_recent_tokens=KEEP_FOUR)).summary
    assert summary is not None
    after = await checked_turn(ledger, a, sid, "After compaction. " + "x" * 80, extends=False)
    assert summary.id in (await ledger.calls.get(after.call_id)).read_ids
    await checked_turn(ledger, a, sid, "Extending. " + "x" * 80, extends=True)

    # Fork by retry: the prompt is an existing node, rendered in full; the next turn
    # extends the retried reply.
    retried = await a.retry(after.reply.id)
    assert retried.reply is not None
    call = await ledger.calls.get(retried.call_id)
    assert call.read_ids == (await ledger.views.render(sid, after.user_node.id)).node_ids
    await checked_turn(ledger, a, sid, "After the retry. " + "x" * 80, extends=True)

    # Fork by edit of the first question: a new sibling under ROOT.
    edited = await a.edit(first.user_node.id, "Edited first question. " + "x" * 80)
    call = await ledger.calls.get(edited.call_id)
    assert call.read_ids == (await ledger.views.render(sid, edited.user_node.id)).node_ids
    edit_tip = edited.reply
    await checked_turn(ledger, a, sid, "On the edit. " + "x" * 80, extends=True)

    # Checkout of an older node of the main line, then a turn there.
    await ledger.head.set_head(sid, after.reply.id)
    main = await checked_turn(ledger, a, sid, "Back on main. " + "x" * 80, extends=False)
    await checked_turn(ledger, a, sid, "Main again. " + "x" * 80, extends=True)

    # B grows and compacts the edit's branch (that summary becomes the active one), then
    # deletes that branch with its summary: the version moves twice. HEAD never left main.
    await ledger.head.set_head(sid, edit_tip.id)
    for i in range(4):
        await checked_turn(ledger, b, sid, f"Edit branch {i}. " + "x" * 80, extends=i > 0)
    edit_head = await head_id(ledger, sid)
    on_edit = (await compact(sid, keep_recent_tokens=KEEP_FOUR)).summary
    assert on_edit is not None
    tip = await checked_turn(ledger, a, sid, "A on the edit. " + "x" * 80, extends=False)
    await ledger.head.set_head(sid, main.reply.id)
    await checked_turn(ledger, a, sid, "A back on main. " + "x" * 80, extends=False)
    await checked_turn(ledger, a, sid, "Main grows. " + "x" * 80, extends=True)
    deleted = await ledger.head.delete_branch(sid, tip.reply.id)
    assert on_edit.id in deleted.deleted_ids and edit_head in deleted.deleted_ids
    await checked_turn(ledger, a, sid, "After the delete. " + "x" * 80, extends=False)
    await checked_turn(ledger, a, sid, "Main grows more. " + "x" * 80, extends=True)

    # Strategy change, then uncompact, each by the other process.
    await ledger.sessions.update(sid, summary_strategy="branch")
    await checked_turn(ledger, a, sid, "Branch strategy. " + "x" * 80, extends=False)
    await checked_turn(ledger, a, sid, "Still branch. " + "x" * 80, extends=True)
    await ledger.summaries.retire(summary.id)
    undone = await checked_turn(ledger, a, sid, "Uncompacted. " + "x" * 80, extends=False)
    assert summary.id not in (await ledger.calls.get(undone.call_id)).read_ids
    await checked_turn(ledger, a, sid, "Still uncompacted. " + "x" * 80, extends=True)

    # Restart: a new process remembers nothing.
    restarted = replica(ledger, events)
    await checked_turn(ledger, restarted, sid, "After restart. " + "x" * 80, extends=False)
    await checked_turn(ledger, restarted, sid, "And on. " + "x" * 80, extends=True)
    await assert_sound(ledger, sid)


async def test_memory_is_bounded_and_forgets_the_least_recently_used(ledger, events):
    from service.context.render import RenderMemory

    small = RenderMemory()
    process = Turns(ledger, make_compactor(ledger), OfflineProvider(), small)
    sessions = [(await ledger.sessions.create(f"s{i}", "sys")).id for i in range(3)]
    await process.send_message(sessions[0], "A short question. " + "x" * 100)
    one = small._tokens  # what one session's tip holds
    small.capacity_tokens = 2 * one + one // 2  # room for two such tips
    for sid in sessions[1:]:
        await process.send_message(sid, "A short question. " + "x" * 100)
    remembered = [key[1] for key in small._tips]
    assert remembered == sessions[1:]
    assert small._tokens <= small.capacity_tokens
    # The forgotten session's next turn renders in full, and reads the same as ever.
    await checked_turn(ledger, process, sessions[0], "Again. " + "x" * 100, extends=False)
