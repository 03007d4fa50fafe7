"""HEAD integrity is structural: only the turn writer and explicit user moves reach HEAD writes."""
import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[2] / "service"
HEAD_MOVES = {"append_message", "set_head", "rewind", "retry", "edit", "delete_branch",
              "carry_over"}


def head_calls(path: Path) -> set[str]:
    """Names of `<something>.head.<move>(...)` calls in a module."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Attribute)
                and node.func.value.attr == "head" and node.func.attr in HEAD_MOVES):
            found.add(node.func.attr)
    return found


def test_in_turn_code_only_the_turn_writer_moves_head():
    movers = {p.name: head_calls(p) for p in (SERVICE / "turns").glob("*.py") if head_calls(p)}
    assert set(movers) == {"writer.py"}


def test_compaction_and_rendering_never_move_head():
    """The carry-over (context/carry.py) is a user's move, as a checkout is: it alone."""
    movers = {p.name: head_calls(p) for p in (SERVICE / "context").glob("*.py") if head_calls(p)}
    assert movers == {"carry.py": {"carry_over"}}


def test_the_store_moves_head_only_in_its_head_module():
    """Calls into the head module; which statements write HEAD, and that only head.py runs
    them, is checked on the statements themselves (tests/unit/test_queries.py)."""
    for path in (SERVICE / "store").glob("*.py"):
        if path.name != "head.py":
            assert head_calls(path) == set(), path.name
