"""Claude Code transcripts read without a database: what following a live file holds back."""
from pathlib import Path

from service.transcripts import claude_code
from service.transcripts.follow import without_open_tail

STREAMED = Path(__file__).parent.parent / "fixtures" / "transcripts" / "claude_code" / \
    "streamed.jsonl"


def test_follow_holds_back_a_response_whose_tools_ran_while_it_streams():
    # Cut after the first tool's result: the response may go on below it (a2 … a4).
    lines = STREAMED.read_text().splitlines(keepends=True)
    cut = claude_code.parse("".join(lines[:4]), STREAMED.name)
    assert [t.key for t in cut.turns] == ["u1", "a2", "r1"]
    held = without_open_tail(cut, quiet=False)
    assert held.head == "u1" and [t.key for t in held.turns] == ["u1"]
    assert without_open_tail(cut, quiet=True).head == "r1"
    whole = claude_code.parse("".join(lines[:9]), STREAMED.name)  # the next response, a5
    assert without_open_tail(whole, quiet=False).head == "r2"
