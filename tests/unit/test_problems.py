"""One mapping from problem codes to errors: PROBLEMS (service/store/problems.py).

A statement reports a problem as a string literal of a `CASE … END AS problem`
expression. Every code a shipped statement (fragments included, as the loader reads it)
can return has an entry in PROBLEMS, and every entry is returned by some statement.
"""
import re

import pytest

from service.errors import Conflict, CtxdagError, NotFound
from service.store.problems import PROBLEMS, Stale, error_for, single_row
from service.store.queries import load_queries

_TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|//[^\n]*|`[^`]*`|\w+|\S")


def problem_codes(text: str) -> set[str]:
    """The codes a statement's text can return as `problem`.

    Raises when `AS problem` names anything but a CASE expression whose results are
    string literals (or null), so a code can not slip past this test.
    """
    tokens = [t for t in _TOKEN.findall(text) if not t.startswith("//")]
    upper = [t.upper() for t in tokens]
    codes: set[str] = set()
    opened: list[int] = []
    for i, token in enumerate(upper):
        if token == "CASE":
            opened.append(i)
        elif token == "END" and opened:
            start = opened.pop()
            if upper[i + 1:i + 3] == ["AS", "PROBLEM"]:
                codes |= _results(tokens[start:i + 1])
    named = sum(1 for i in range(len(upper) - 1) if upper[i:i + 2] == ["AS", "PROBLEM"])
    as_case = sum(1 for i in range(1, len(upper) - 1)
                  if upper[i - 1:i + 2] == ["END", "AS", "PROBLEM"])
    if named != as_case:
        raise AssertionError("`AS problem` must name a CASE expression")
    return codes


def _results(case: list[str]) -> set[str]:
    """The THEN/ELSE results of one CASE expression (not of CASEs nested in it)."""
    results, depth = set(), 0
    for i, token in enumerate(case):
        word = token.upper()
        if word == "CASE":
            depth += 1
        elif word == "END":
            depth -= 1
        elif depth == 1 and word in ("THEN", "ELSE"):
            result = case[i + 1]
            if result.upper() == "NULL":
                continue
            if not result.startswith("'") or case[i + 2].upper() not in ("WHEN", "ELSE", "END"):
                raise AssertionError(f"a problem is a string literal, not {result} …")
            results.add(result[1:-1])
    return results


def codes_by_statement() -> dict[str, set[str]]:
    return {name: problem_codes(query.text) for name, query in load_queries().items()}


def test_every_problem_a_statement_returns_has_an_error():
    missing = {name: sorted(codes - set(PROBLEMS))
               for name, codes in codes_by_statement().items() if codes - set(PROBLEMS)}
    assert missing == {}


def test_every_error_in_the_table_is_returned_by_some_statement():
    returned = set().union(*codes_by_statement().values())
    assert sorted(set(PROBLEMS) - returned) == []


def test_the_writes_that_validate_report_problems():
    codes = codes_by_statement()
    assert {"append_message", "fork_sibling", "set_head", "delete_branch", "call_record",
            "summary_persist", "summary_retire", "render_context", "session_update",
            "backup_import", "event_append", "transcript_extend", "label_set",
            "label_clear", "branch_name_set", "branch_name_clear", "pin_set", "pin_clear",
            "carry_segment", "carry_write", "node_redact", "tool_set_put", "draft_reply",
            "draft_failure", "transcript_import_part", "transcript_import_session"} == {
        name for name, found in codes.items() if found}
    assert "read_invalid" in codes["append_message"] & codes["fork_sibling"] & \
        codes["draft_reply"] & codes["draft_failure"]


def test_the_parser_sees_nested_and_multiline_cases_and_refuses_other_forms():
    text = """WITH x, CASE
      WHEN CASE WHEN x THEN 'inner' END = 'inner' THEN 'a'
      WHEN y
        THEN 'b'  // a comment saying THEN 'c'
      ELSE null
    END AS problem"""
    assert problem_codes(text) == {"a", "b"}
    assert problem_codes("CASE WHEN x THEN 'a' END AS problem, 'x' AS other") == {"a"}
    with pytest.raises(AssertionError):
        problem_codes("WITH 'a' AS problem")
    with pytest.raises(AssertionError):
        problem_codes("WITH CASE WHEN x THEN y END AS problem")


def test_errors_are_built_from_ids_and_row_values():
    error = error_for("read_invalid", {"invalid_reads": ["n1", "n2"], "session_id": "ses_1"})
    assert error.code == "BAD_INPUT" and "2 read ids are not nodes of session ses_1" in error.message
    assert isinstance(error_for("fork_not_found", {"fork_of": "nod_1"}), NotFound)
    assert isinstance(error_for("meta_changed", {"session_id": "ses_1"}), Stale)
    taken = error_for("ids_exist", {"session_id": "ses_1", "taken_ids": ["nod_1"],
                                    "taken_elsewhere": 2})
    assert isinstance(taken, Conflict) and "nod_1" in taken.message and "2 of" in taken.message
    elsewhere = error_for("session_exists", {"session_id": "ses_1", "session_elsewhere": True})
    assert "ses_1" not in elsewhere.message  # an import never learns another tenant's ids
    assert type(error_for("no_such_code", {})) is CtxdagError


def test_single_row_checks_raise_the_table_s_errors():
    check = single_row("ses_1", {"session_id": "ses_1", "node_id": "nod_1"})
    check([{"problem": None}])
    with pytest.raises(NotFound, match="session"):
        check([])
    with pytest.raises(NotFound, match="nod_1"):
        check([{"problem": "node_not_found"}])
