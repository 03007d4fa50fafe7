"""Segmented nesting in its pure parts: which stand-ins merge (context/nesting.py), the
offline summarizer's merge, and the prompts a merge and a segment's summary are asked with."""
from dataclasses import replace

import pytest

from service.context.nesting import merge_run
from service.context.summarizers import HEADER, OfflineExtractiveSummarizer
from service.llm.prompts import MERGE_SYSTEM, SUMMARY_SYSTEM, merge_prompt, summary_instruction
from service.store import Role, Summary
from tests.unit.test_cut_and_summarizer import node


def chain_of_stand_ins(*tokens: int, gap_before: int | None = None) -> list[Summary]:
    """Stand-ins S0, S1, … of consecutive segments (each spliced at the previous one's last
    turn), with the given tokens; `gap_before`: S_i is spliced after a turn rendered verbatim."""
    out = []
    for i, t in enumerate(tokens):
        last = f"t{i}"
        splice = f"t{i - 1}" if i else "root"
        if gap_before == i:
            splice = "verbatim"
        out.append(Summary(replace(node(100 + i, Role.SUMMARY, t), id=f"S{i}",
                                   predecessor_id=splice),
                           (f"a{i}", last), False, "segmented"))
    return out


def ids(run) -> list[str]:
    return [s.id for s in run]


def test_nothing_merges_until_the_stand_ins_pass_the_merge_point():
    assert merge_run(chain_of_stand_ins(40, 40, 40), 120) == ()
    assert ids(merge_run(chain_of_stand_ins(40, 40, 41), 120)) == ["S0", "S1"]


def test_the_oldest_merge_until_the_rest_hold_half_the_merge_point_never_the_newest():
    # 50 × 5 = 250 > 100; merging S0, S1, S2 leaves 100 … S0–S3 leaves 50 = half.
    assert ids(merge_run(chain_of_stand_ins(50, 50, 50, 50, 50), 100)) == ["S0", "S1", "S2",
                                                                        "S3"]
    # However large, the newest (just written) stays.
    assert ids(merge_run(chain_of_stand_ins(10, 10, 500), 100)) == ["S0", "S1"]


def test_two_stand_ins_are_never_merged_and_a_run_stops_at_verbatim_turns():
    assert merge_run(chain_of_stand_ins(300, 300), 100) == ()
    # S2 follows turns rendered verbatim: the run S0 S1 stops before it.
    assert ids(merge_run(chain_of_stand_ins(60, 60, 60, 60, gap_before=2), 100)) == ["S0", "S1"]
    # A gap right after the first leaves no run of two.
    assert merge_run(chain_of_stand_ins(60, 60, 60, 60, gap_before=1), 100) == ()


async def test_the_offline_merge_relays_every_line_oldest_first_and_folds_past_its_bound():
    summarizer = OfflineExtractiveSummarizer(max_lines=3)
    older = replace(node(1, Role.SUMMARY), content=f"{HEADER}\n- user: one.\n- assistant: two.")
    newer = replace(node(2, Role.SUMMARY),
                    content=f"{HEADER}\n(4 earlier turns folded away.)\n- user: three.")
    merged = await summarizer.merge([older, newer])
    assert merged.text.splitlines() == [HEADER, "(4 earlier turns folded away.)",
                                        "- user: one.", "- assistant: two.", "- user: three."]
    again = await OfflineExtractiveSummarizer(max_lines=2).merge([older, newer])
    assert again.text.splitlines() == [HEADER, "(5 earlier turns folded away.)",
                                       "- assistant: two.", "- user: three."]


def test_the_merge_prompt_hands_over_every_summary_in_order():
    assert MERGE_SYSTEM != SUMMARY_SYSTEM and "merge" in MERGE_SYSTEM
    system, messages = merge_prompt([replace(node(1, Role.SUMMARY), content="first part"),
                                     replace(node(2, Role.SUMMARY), content="second part")])
    text = messages[0]["content"]
    assert system == MERGE_SYSTEM and text.index("first part") < text.index("second part")
    assert '<summary index="2">' in text


@pytest.mark.parametrize("covered_from", [None, "turn 7. more"])
def test_a_segments_summary_is_asked_to_start_where_the_segment_does(covered_from):
    first = node(7, Role.USER) if covered_from else None
    text = summary_instruction(False, [node(9, Role.USER)], covered_from=first)
    assert ("from its beginning" in text) == (covered_from is None)
    if covered_from:
        assert "\u201cturn 7. more\u201d" in text and "leave them out" in text
