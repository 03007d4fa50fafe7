"""The cut never separates a tool use from its result; an autonomous run is cut inside
its turn (a split turn) instead of being covered whole."""
from __future__ import annotations

from dataclasses import replace

from service.context.cut import Cut, find_cut
from service.model.blocks import tool_use_ids
from tests.unit.test_requests import node, results, use


def run(steps: int, *, tokens: int = 10, open_end: bool = False):
    """ROOT-less history: one user prompt, then `steps` tool round trips, then (unless
    `open_end`) a final answer; each entry `tokens` tokens."""
    history = [node("user", "Do the whole job.")]
    for i in range(steps):
        call = node("assistant", use(f"s{steps}_{i}_{id(history)}"))
        history += [call, node("tool", results(tool_use_ids(call.blocks)[0]))]
    if open_end:
        history.append(node("assistant", use(f"open_{id(history)}")))
    else:
        history.append(node("assistant", "All done."))
    return [replace(n, tokens=tokens) for n in history]


def pair_closed(covered) -> bool:
    opened = [u for n in covered for u in tool_use_ids(n.blocks)]
    answered = [a for n in covered for a in
                [b.tool_use_id for b in n.blocks if b.kind == "tool_result"]]
    return sorted(opened) == sorted(answered)


def test_a_user_turn_still_opens_the_tail_when_one_fits():
    history = run(2) + [replace(node("user", "Next."), tokens=10),
                        replace(node("assistant", "Ok."), tokens=10)]
    cut = find_cut(history, keep_recent_tokens=25)
    assert cut == Cut(len(history) - 2) and not cut.split_turn


def test_an_autonomous_run_is_cut_inside_its_turn_at_every_budget():
    history = run(12)
    for keep in range(0, 10 * len(history) + 10, 5):
        cut = find_cut(history, keep)
        assert cut.index is not None, keep
        covered, retained = history[:cut.index], history[cut.index:]
        assert pair_closed(covered), (keep, cut)
        if covered:
            assert retained[0].role.value in ("user", "assistant"), (keep, cut)
        if cut.split_turn:
            assert retained[0].role.value == "assistant" and cut.index >= 1
            assert sum(n.tokens for n in retained) <= max(keep, retained[0].tokens + 10)


def test_an_open_head_is_never_covered():
    history = run(5, open_end=True)
    for keep in range(0, 200, 3):
        cut = find_cut(history, keep)
        assert cut.index is not None and cut.index < len(history), keep
        assert pair_closed(history[:cut.index]), keep


def test_nothing_is_cut_when_every_cut_would_split_a_pair():
    history = [replace(n, tokens=10) for n in (
        node("summary", "Earlier."), node("user", "go"), node("assistant", use("lonely")))]
    assert find_cut(history, 0) == Cut(None)
    only_open = [replace(node("summary", "Earlier."), tokens=10),
                 replace(node("assistant", use("first_open")), tokens=10)]
    assert find_cut(only_open, 0) == Cut(None)


def test_a_turn_without_tool_round_trips_is_covered_whole_as_before():
    history = [replace(n, tokens=10) for n in (
        node("user", "one"), node("assistant", "two"), node("user", "three"),
        node("assistant", "four"))]
    assert find_cut(history, 1) == Cut(4)


def test_an_open_head_after_a_plain_turn_keeps_its_own_turn():
    """u1 a2 u3 a4(open), nothing fits: covering everything would cover the open tool use,
    so the tail opens on u3 (the sequence the property test shrank to)."""
    history = [replace(n, tokens=10) for n in (
        node("user", "Message 0."), node("assistant", "ok"),
        node("user", "Message 1, lookup 207."), node("assistant", use("open_after_plain")))]
    assert find_cut(history, 0) == Cut(2)


def test_a_chosen_cut_is_after_its_turn_and_names_what_it_would_separate():
    from service.context.cut import cut_after, open_tool_uses

    history = run(2)  # user, (call, result) x2, answer
    call, result = history[1], history[2]
    assert cut_after(history, "nod_elsewhere") is None
    assert cut_after(history, history[0].id) == Cut(1, split_turn=True)
    assert cut_after(history, history[-1].id) == Cut(len(history))
    assert open_tool_uses(history, cut_after(history, call.id).index) == tool_use_ids(call.blocks)
    assert open_tool_uses(history, cut_after(history, result.id).index) == []
