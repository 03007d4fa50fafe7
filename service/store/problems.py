"""Statements that validate (and write) in one round trip report a `problem` code.

PROBLEMS is the one table that turns each code any statement returns into the error a
person reads (tests/unit/test_problems.py holds it to the statements: every code a
statement can return has an entry, and every entry is returned by some statement).
Raising the error inside the transaction rolls the write back, so bad input leaves
nothing behind. An error is built from the caller's ids and the statement's row (e.g.
`invalid_reads`, the ids an import finds taken).
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from ..errors import BadInput, Conflict, CtxdagError, NotFound
from .db import RowCheck, Rows
from ..model.validate import some


def _not_found(kind: str, key: str) -> Callable[[Mapping[str, Any]], CtxdagError]:
    return lambda ids: NotFound(kind, str(ids.get(key)))


def _bad(template: str) -> Callable[[Mapping[str, Any]], CtxdagError]:
    return lambda ids: BadInput(template.format(**ids))


def _conflict(template: str) -> Callable[[Mapping[str, Any]], CtxdagError]:
    return lambda ids: Conflict(template.format(**ids))


class Stale(Conflict):
    """What the caller read changed before its write landed; the write was rolled back.

    A caller that read optimistically catches it, reads again and retries.
    """


def _session_taken(ids: Mapping[str, Any]) -> CtxdagError:
    if ids["session_elsewhere"]:  # an import never learns another tenant's ids
        return Conflict("the document's session id is already used by another tenant")
    return Conflict(f"session {ids['session_id']} already exists", session_id=ids["session_id"])


def _ids_taken(ids: Mapping[str, Any]) -> CtxdagError:
    """The ids that exist already, naming only those of the importing tenant."""
    own, elsewhere = ids["taken_ids"], ids["taken_elsewhere"]
    parts = [f"ids already exist ({some(own)})"] if own else []
    if elsewhere:
        parts.append(f"{elsewhere} of its node or call ids are already used by another tenant")
    return Conflict(f"session {ids['session_id']} cannot be imported: " + "; ".join(parts),
                    ids_taken=True)


class ToolsToCheck(Conflict):
    """A turn's opening append that was to read the tool set in force found one whose
    definitions may name a recall tool: nothing was written; the turn reads the set, decides
    the clash, and appends without the check (service/turns/service.py: Turns._open)."""


PROBLEMS: dict[str, Callable[[Mapping[str, Any]], CtxdagError]] = {
    "predecessor_not_found": _not_found("node", "predecessor_id"),
    "predecessor_other_session": _bad("predecessor {predecessor_id} belongs to another session"),
    "predecessor_deleted": _bad("predecessor {predecessor_id} was deleted with its branch"),
    "predecessor_summary": _bad("predecessor {predecessor_id} is a summary; nothing is appended "
                                "after a summary (it stands in for turns, it is not one)"),
    "tools_to_check": lambda ids: ToolsToCheck(
        "the tool set in force may name a recall tool; the turn checks it before it writes"),
    "caller_not_found": _not_found("node", "caller_id"),
    "caller_other_session": _bad("caller {caller_id} belongs to another session"),
    "caller_deleted": _bad("caller {caller_id} was deleted with its branch"),
    "node_not_found": _not_found("node", "node_id"),
    "node_other_session": _bad("node {node_id} belongs to another session"),
    "node_deleted": _bad("node {node_id} was deleted with its branch"),
    "node_redacted": _conflict("node {node_id} is redacted already; a redaction is never "
                               "undone or repeated"),
    "node_summary": _bad("node {node_id} is a summary; HEAD stays on conversation turns"),
    "not_an_ancestor": _bad("node {node_id} is not an ancestor of HEAD; rewind only goes back "
                            "along the current branch (use checkout to jump elsewhere)"),
    "fork_not_found": _not_found("node", "fork_of"),
    "fork_deleted": _bad("node {fork_of} was deleted with its branch"),
    "event_not_standalone": _bad("only compaction_started and compaction_failed are stored "
                                 "without a change of their own"),
    "fork_is_root": _bad("node {fork_of} is the session's ROOT; it has no sibling to fork"),
    "wrong_role_retry": _bad("node {fork_of} is not an assistant reply; retry forks replies "
                             "(edit forks user messages)"),
    "wrong_role_edit": _bad("node {fork_of} is not a user message; edit forks user messages "
                            "(retry forks assistant replies)"),
    "read_invalid": lambda ids: BadInput(
        f"{len(ids['invalid_reads'])} read ids are not nodes of session {ids['session_id']}: "
        f"{some(ids['invalid_reads'])}"),
    "tool_result_unmatched": lambda ids: BadInput(
        f"tool results answer {some(ids['unmatched_results'])}, which the message they follow "
        f"does not leave open ({_open(ids)}); a tool_result answers a tool_use of the "
        "assistant message right before it", unmatched_tool_use_ids=ids["unmatched_results"]),
    "tool_uses_open": lambda ids: BadInput(
        f"the message this follows has open tool uses ({some(ids['unanswered'])}): the next "
        "message must be the tool results answering every one of them"
        + (f" (this one answers only {some(ids['answers'])})" if ids.get("answers") else "")
        + "; nothing else may follow it", open_tool_use_ids=ids["unanswered"]),
    "tool_use_taken": lambda ids: BadInput(
        f"tool use ids already used in this session: {some(ids['taken_tool_uses'])}; a tool "
        "use id names one tool use (a prompt may hold it only once)",
        taken_tool_use_ids=ids["taken_tool_uses"]),
    "media_not_found": lambda ids: BadInput(
        f"media named by hash is not stored: {some(ids['missing_media'])}; send its data "
        "(a base64 source) once, then refer to it by hash"),
    "tip_not_found": _not_found("node", "tip_id"),
    "tip_other_session": _bad("node {tip_id} belongs to another session"),
    "tip_deleted": _conflict("branch tip {tip_id} was already deleted"),
    "tip_not_a_branch": _bad("node {tip_id} is a summary or on a spawned side branch, "
                             "not a user branch"),
    "tip_not_a_tip": _bad("node {tip_id} is not a branch tip: live turns follow it"),
    "tip_is_root": _bad("the ROOT alone is not a branch that can be deleted"),
    "branch_name_taken": _bad("another branch of the session is already named {name!r}; a "
                              "name names one branch (unname that one first)"),
    "head_moving": _conflict("session {session_id} was changing HEAD while it was read; "
                             "read it again"),
    "summary_changed": _conflict("the summaries of session {session_id} changed while it was "
                                 "being compacted (another compaction, an uncompact, a "
                                 "strategy change or a pin); compact again"),
    "nothing_covered": _bad("a summary must cover at least one turn"),
    "covered_invalid": _bad("a summary covers only live turns of its own session, "
                            "never another summary"),
    "covered_not_contiguous": _bad("the covered turns are not one contiguous chain segment "
                                   "in chain order"),
    "absorbed_not_active": _conflict("summary {absorbed_id} is no longer the active summary "
                                     "of session {session_id}"),
    "retained_not_contiguous": _bad("the retained turns are not the chain from the covered "
                                    "segment down to the compacted head"),
    "summary_deleted": _bad("summary {summary_id} was deleted with its branch"),
    "summary_retired": _conflict("summary {summary_id} was already uncompacted"),
    "summary_nested": _bad("summary {summary_id} is merged into nested summary {nested_in}, "
                           "which stands in for its segment: uncompact {nested_in} first"),
    "nested_invalid": _conflict("the summaries merged into a nested summary of session "
                                "{session_id} changed (uncompacted or deleted) while they were "
                                "merged; compact again"),
    "coverage_not_extended": _bad("the new coverage must extend the absorbed summary's "
                                  "segment {absorbed_id}"),
    "from_not_found": _not_found("node", "from_id"),
    "from_other_session": _bad("node {from_id} belongs to another session"),
    "from_deleted": _bad("node {from_id} was deleted with its branch: nothing of it is carried"),
    "from_summary": _bad("node {from_id} is a summary; a branch is carried from one of its "
                         "turns (its tip)"),
    "into_not_found": _not_found("node", "into_id"),
    "into_other_session": _bad("node {into_id} belongs to another session; a carry-over "
                               "stays within its session"),
    "into_deleted": _bad("node {into_id} was deleted with its branch"),
    "into_summary": _bad("node {into_id} is a summary; a carry-over is written after a turn"),
    "nothing_to_carry": _bad("nothing to carry from {from_id} into {into_id}: it lies on "
                             "{into_id}'s own chain (the same node, an ancestor of it, or "
                             "ROOT), so no turn of its branch is missing there"),
    "head_changed": _conflict("HEAD of session {session_id} moved while the branch it left "
                              "was summarized; check out again"),
    "carried_invalid": _bad("a carry node stands only for live turns of its own session"),
    "carried_not_segment": _bad("the carried turns are not the chain of {from_id} below its "
                                "common ancestor with {into_id}"),
    "meta_changed": lambda ids: Stale(f"session {ids['session_id']} metadata changed while "
                                      "it was being saved"),
    "media_not_carried": lambda ids: BadInput(
        "the document does not carry media its nodes name, and this tenant has not stored "
        "them: " + "; ".join(f"node {ids['media_named_by'][digest]} names media {digest}"
                             for digest in ids["missing_media"][:5])
        + (f"; and {len(ids['missing_media']) - 5} more" if len(ids["missing_media"]) > 5
           else ""), missing_media=ids["missing_media"]),
    "session_changed": lambda ids: Stale(f"session {ids['session_id']} changed while the "
                                         "transcript was read; import it again"),
    "pin_summary": _bad("node {node_id} is a summary; pins keep conversation turns verbatim "
                        "(a summary renders only where it applies)"),
    "pin_root": _bad("node {node_id} is the session's ROOT, which every render holds already"),
    "pins_over_budget": lambda ids: BadInput(
        f"pinning node {ids['node_id']} would have ROOT and the pinned messages (with the "
        f"other half of their tool pairs) hold {ids['pinned_tokens']} tokens, over the "
        f"{ids['max_pinned_tokens']} pins may hold (a share of the context window); unpin "
        "something first", pinned_tokens=ids["pinned_tokens"],
        max_pinned_tokens=ids["max_pinned_tokens"]),
    # completeTurn (cypher/draft_reply, draft_failure; docs/guides/agent-runtimes.md)
    "draft_key_used": lambda ids: Stale(
        f"draft {ids['draft_id']} was completed with client key {ids['client_key']!r} "
        "meanwhile; that completion is the answer"),
    "draft_completed": _conflict("draft {draft_id} is completed already, under another client "
                                 "key: a draft is answered once (begin a new turn to ask "
                                 "again)"),
    "draft_expired": lambda ids: NotFound("draft", str(ids["draft_id"]), (
        f"draft {ids['draft_id']} expired before it was completed; begin the turn again "
        "(beginTurn with no message answers HEAD as it stands)")),
    "draft_tip_deleted": lambda ids: Conflict(
        f"the node draft {ids['draft_id']} answers was deleted with its branch since it was "
        "begun: its reply has nowhere to go; complete it with `error` to record the call "
        "alone"),
    "session_exists": _session_taken,
    "ids_exist": _ids_taken,
    "import_taken_over": lambda ids: Conflict(
        f"session {ids['session_id']}: another import of it started while this one was "
        "writing its parts and took it over; this one wrote nothing",
        session_id=ids["session_id"]),
}


def _open(ids: Mapping[str, Any]) -> str:
    opened = ids.get("open_tool_uses") or []
    return f"it leaves open {some(opened)}" if opened else "it opened none"


def error_for(problem: str, ids: Mapping[str, Any]) -> CtxdagError:
    """The error for a problem code (an unexpected code is reported, not masked)."""
    factory = PROBLEMS.get(problem)
    if factory is None:
        return CtxdagError(f"unknown problem code from the store: {problem}")
    return factory(ids)


def raise_for_problem(problem: str | None, ids: Mapping[str, Any]) -> None:
    if problem is not None:
        raise error_for(problem, ids)


def single_row(session_id: str | None, ids: Mapping[str, Any]) -> RowCheck:
    """The check for statements that return one row with `problem` (none: no such session).

    Row values (e.g. `invalid_reads`) are available to the error messages; `ids` win
    over row values of the same name.
    """

    def check(rows: Rows) -> None:
        if not rows:
            raise NotFound("session", str(session_id))
        raise_for_problem(rows[0].get("problem"), {**rows[0], **ids})

    return check
