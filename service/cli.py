"""The `ctxdag` command.

One parser; every subcommand names its handler on its parser (`set_defaults`), and
`main` dispatches on that alone:

- `job(runtime, args)`: a command over the service's parts, given the Runtime that
  `Runtime.open` builds from the Settings — the one way they are built, so every such
  command (the admin ones of service/admin_cli.py included) works under the configured
  tenant and limits;
- `run(settings, args)`: a command that needs the Settings alone (the managed Neo4j,
  serve, demo).

A ctxdag error — a malformed setting (`BAD_CONFIG`) included — is one line
`error: CODE: message` on stderr and exit status 2, never a traceback.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import TYPE_CHECKING, Any, Sequence

from . import admin_cli
from .config import Settings
from .errors import BadInput, CtxdagError
from .model.kinds import Role
from .model.validate import counted

if TYPE_CHECKING:
    from .runtime import Runtime


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctxdag", description="The `ctxdag` command.")
    commands = parser.add_subparsers(dest="command", required=True)
    neo4j = commands.add_parser("neo4j", help="the managed local Neo4j")
    neo4j.add_argument("action", choices=["up", "down", "status"])
    neo4j.set_defaults(run=_neo4j)
    commands.add_parser("smoke", help="write, fork, compact and read a small conversation"
                        ).set_defaults(job=_smoke)
    render = commands.add_parser("render", help="print what the model reads from a head")
    render.add_argument("session")
    render.add_argument("--head", help="a node id (default: the session's HEAD)")
    render.set_defaults(job=_render)
    branches = commands.add_parser("branches", help="list a session's branches: tip, name, "
                                   "length, where HEAD is and the summary each renders")
    branches.add_argument("session")
    branches.set_defaults(job=_branches)
    compact = commands.add_parser("compact", help="compact the branch of a head")
    compact.add_argument("session")
    compact.add_argument("--head", help="a node id (default: the session's HEAD)")
    compact.add_argument("--keep", type=int, help="keep_recent_tokens (default from settings)")
    compact.add_argument("--instructions",
                         help="focus instructions for the summarizer, stored on the summary")
    compact.add_argument("--up-to", help="a turn of the head's history: cover through it, "
                                         "keep what follows verbatim (instead of --keep)")
    compact.add_argument("--dry-run", action="store_true",
                         help="print what would be written (cut, summary, tokens) and write "
                              "nothing")
    compact.set_defaults(job=_compact)
    uncompact = commands.add_parser("uncompact", help="undo a compaction: the summary stops "
                                    "applying, what applied before applies again")
    uncompact.add_argument("summary")
    uncompact.set_defaults(job=_uncompact)
    checkout = commands.add_parser("checkout", help="move HEAD to a node; --summarize-left "
                                   "writes a summary of the branch left there first")
    checkout.add_argument("session")
    checkout.add_argument("node")
    checkout.add_argument("--summarize-left", action="store_true",
                          help="append a summary of the branch HEAD leaves after the node "
                               "(a carry node) and move HEAD onto it")
    checkout.add_argument("--instructions", help="instructions for that summary")
    checkout.set_defaults(job=_checkout)
    carry = commands.add_parser("carry-over", help="append a summary of a branch (below its "
                                "fork from the target) after another head")
    carry.add_argument("session")
    carry.add_argument("from_tip", metavar="FROM_TIP")
    carry.add_argument("into_head", metavar="INTO_HEAD")
    carry.add_argument("--instructions", help="instructions for the summarizer")
    carry.set_defaults(job=_carry_over)
    serve = commands.add_parser("serve", help="run the GraphQL service (and the managed Neo4j)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.set_defaults(run=_serve)
    demo = commands.add_parser("demo", help="load a demo conversation through the running API")
    demo.add_argument("--url", default="http://127.0.0.1:8000",
                      help="the service's address, or its /graphql endpoint")
    demo.add_argument("--token", help="a bearer token, when the service requires one")
    demo.set_defaults(run=_demo)
    trace = commands.add_parser("trace", aliases=["replay"],
                                help="print what a model call read, as a table, and how "
                                     "today's render of its head differs")
    trace.add_argument("call")
    trace.set_defaults(job=_trace)
    diff = commands.add_parser("diff", help="how call B's prompt differs from call A's")
    diff.add_argument("first", metavar="A")
    diff.add_argument("second", metavar="B")
    diff.set_defaults(job=_diff)
    search = commands.add_parser("search", help="find messages, summaries, labels and "
                                 "titles across sessions, each with its state in the "
                                 "model's context")
    search.add_argument("query", help='words (all must match), "a phrase", -excluded, prefix*')
    search.add_argument("--session", help="only this session's nodes")
    search.add_argument("--head", help="with --session: the state at this head, not HEAD")
    search.add_argument("--role", action="append", choices=[r.value for r in Role],
                        help="only nodes of this role (repeatable)")
    search.add_argument("--kind", action="append",
                        help="only matches in this field: text, thinking, title or label "
                             "(repeatable)")
    search.add_argument("--first", type=int, default=20, help="hits to print (at most 100)")
    search.add_argument("--json", action="store_true", help="one JSON object per hit")
    search.set_defaults(job=_search)
    sessions = commands.add_parser("sessions", help="list sessions, last active first: "
                                   "tool, project, title")
    sessions.add_argument("--project", help="only this project (working directory), exactly; "
                          "., .., ./…, ../… and ~… are taken from here")
    sessions.add_argument("--tool", help="only this tool's imports: claude-code, pi or codex")
    sessions.add_argument("--text", help="only titles holding this text (any case)")
    sessions.add_argument("--since", help="only sessions active at DATE or later (ISO 8601, "
                          "local time unless it names a zone)", metavar="DATE")
    sessions.add_argument("--until", help="only sessions last active before DATE",
                          metavar="DATE")
    sessions.add_argument("--first", type=int, default=20,
                          help="sessions to print (default 20), read 100 at a time")
    sessions.add_argument("--all", action="store_true", help="every session the filters keep")
    sessions.add_argument("--json", action="store_true", help="one JSON object per session")
    sessions.set_defaults(job=_sessions)
    mcp = commands.add_parser("mcp", help="serve search, expand, render and trace as MCP "
                              "tools to an MCP client (CTXDAG_TENANT's sessions)")
    mcp.add_argument("--stdio", action="store_true",
                     help="over stdin and stdout (the default; over HTTP, `ctxdag serve` "
                          "answers at /mcp)")
    mcp.set_defaults(job=_mcp)
    admin_cli.add_commands(commands)
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The parsed command line; its `job` or `run` is the handler to call."""
    return _parser().parse_args(argv)


async def _on_runtime(settings: Settings, args: argparse.Namespace) -> int:
    from .runtime import Runtime

    runtime = await Runtime.open(settings)
    try:
        return await args.job(runtime, args)
    finally:
        await runtime.close()


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        settings = Settings.from_env()
        if getattr(args, "job", None) is not None:
            return asyncio.run(_on_runtime(settings, args))
        return args.run(settings, args)
    except CtxdagError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # What reads the output stopped reading (`ctxdag sessions | head`): stop as quietly,
        # and keep the interpreter's last flush from failing too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


# --------------------------------------------------------------------------- settings alone


def _neo4j(settings: Settings, args: argparse.Namespace) -> int:
    from .neo4j_local import commands

    return {"up": commands.up, "down": commands.down,
            "status": commands.status}[args.action](settings)


def _serve(settings: Settings, args: argparse.Namespace) -> int:
    from .serve import serve

    return asyncio.run(serve(settings, args.host, args.port))


def _demo(settings: Settings, args: argparse.Namespace) -> int:
    from .demo import run_demo

    run_demo(args.url, args.token)
    return 0


# --------------------------------------------------------------------------- on the runtime


async def _smoke(runtime: Runtime, args: argparse.Namespace) -> int:
    from .smoke import run_smoke

    return await run_smoke(runtime)


async def _render(runtime: Runtime, args: argparse.Namespace) -> int:
    from .context.render import render_context

    view = await render_context(runtime.ledger, args.session, args.head)
    ids = [node.id for node in view.nodes]
    labels = await runtime.ledger.labels.get_many(ids)
    name = (await runtime.ledger.branch_names.get_many([view.head_id])).get(view.head_id)
    print(f"head {view.head_id}" + (f" (branch {name!r})" if name else "")
          + f": {len(view.nodes)} nodes, ~{view.tokens} tokens"
          + (f", summary {view.summary_id} stands in for its segment" if view.summary_id else ""))
    for position, node in enumerate(view.nodes):
        text = _line(node.content)
        label = f"[{_line(labels[node.id])}] " if node.id in labels else ""
        print(f"{position:4d}  {node.id}  {node.role.value:9s}  {label}{text[:80]}")
    return 0


async def _branches(runtime: Runtime, args: argparse.Namespace) -> int:
    branches = await runtime.ledger.branches.list(args.session)
    print(f"{len(branches)} branches of session {args.session} (* HEAD is the tip, "
          "+ HEAD lies on the branch)")
    for branch in branches:
        mark = "*" if branch.is_head else "+" if branch.holds_head else " "
        text = _line(branch.tip.content)
        print(f"{mark} {_line(branch.name or '-'):24.24s}  {branch.tip.id}  {branch.length:5d} nodes  "
              f"{'summary ' + branch.summary_id if branch.summary_id else 'verbatim':44s}  "
              f"{text[:40]}")
    return 0


async def _search(runtime: Runtime, args: argparse.Namespace) -> int:
    from .search import Field, Filters, search
    from .search.records import hit_record

    try:
        kinds = tuple(Field(k) for k in args.kind) if args.kind else None
    except ValueError:
        raise BadInput(f"--kind is one of {', '.join(f.value for f in Field)}") from None
    page = await search(runtime.ledger, args.query, Filters(
        session_id=args.session, head_id=args.head,
        roles=tuple(Role(r) for r in args.role) if args.role else None,
        fields=kinds),
        first=args.first)
    if args.json:
        for hit in page.hits:
            print(json.dumps(hit_record(hit), ensure_ascii=False))
        return 0
    print(counted(len(page.hits), "hit") + (" (more: --first)" if page.has_next else ""))
    for hit in page.hits:
        p = hit.placement
        state = p.state.value + (f" by {p.summary_id}" if p.summary_id else "")
        title = _line(hit.session_title or "Untitled session")[:24]
        print(f"{hit.score:6.2f}  {state:48.48s}  {title:24s}  {hit.node.id}  "
              f"{hit.node.role.value:9s}  {_marked(hit)}")
    return 0


async def _sessions(runtime: Runtime, args: argparse.Namespace) -> int:
    from .model import listing, validate
    from .transcripts import FORMATS

    if args.tool is not None and args.tool not in FORMATS:
        raise BadInput(f"--tool must be one of: {', '.join(FORMATS)}")
    keep = listing.Filter(
        tool=args.tool, project=_project(args.project), text=args.text,
        since=None if args.since is None else validate.moment(args.since, "--since"),
        until=None if args.until is None else validate.moment(args.until, "--until"))
    if args.first < 1:
        raise BadInput("--first must be at least 1")
    listed, more = await _listed(runtime, keep, None if args.all else args.first)
    if args.json:
        for session in listed:
            print(json.dumps(listing.record(session), ensure_ascii=False))
        return 0
    print(counted(len(listed), "session") + (" (more: --first N, --all)" if more else ""))
    for s in listed:
        print(f"{s.last_activity_at:%Y-%m-%d %H:%M}  {s.tool or 'ctxdag':11s}  "
              f"{_tail(_line(s.project or '-'), 32):32s}  {s.id}  "
              f"{_line(s.title or 'Untitled session')}")
    return 0


async def _listed(runtime: Runtime, keep: Any, wanted: int | None) -> tuple[list[Any], bool]:
    """The first `wanted` sessions `keep` keeps, last active first (None: all of them),
    read a page of at most MAX_PAGE at a time; and whether more are kept."""
    from .store.paging import MAX_PAGE

    listed: list[Any] = []
    after, more = None, True
    while more and (wanted is None or len(listed) < wanted):
        page = await runtime.ledger.sessions.list(
            first=MAX_PAGE if wanted is None else min(MAX_PAGE, wanted - len(listed)),
            after=after, keep=keep, order="last_activity")
        listed += page.items
        after, more = page.end_cursor, page.has_next
    return listed, more


def _project(named: str | None) -> str | None:
    """A project as stored (the tool's working directory, absolute): one named from here
    (`.`, `../app`, `~/work`) made absolute, any other taken as given (a Windows path a
    Codex rollout recorded is no path here)."""
    if named is None or not (named in (".", "..") or named.startswith(("./", "../", "~"))):
        return named
    return os.path.abspath(os.path.expanduser(named))


def _line(text: str) -> str:
    """Stored text on one line of a terminal: its whitespace runs one space, and the control
    characters a tool's output holds (a test runner's colours: ESC [31m) shown as their
    Unicode pictures (␛), not sent to the terminal."""
    return " ".join(text.split()).translate(_PICTURES)


# C0 controls and DEL as U+2400…U+2421, C1 controls as U+FFFD.
_PICTURES = {**{c: 0x2400 + c for c in range(0x20)}, 0x7F: 0x2421,
             **{c: 0xFFFD for c in range(0x80, 0xA0)}}


def _tail(text: str, width: int) -> str:
    """`text` in `width` characters: a path's end says most of where it is."""
    return text if len(text) <= width else "…" + text[1 - width:]


def _marked(hit) -> str:
    """The snippet on one line, each match [[in brackets]]."""
    text, out, at = hit.snippet.text, [], 0
    for start, end in hit.snippet.highlights:
        out += [text[at:start], "[[", text[start:end], "]]"]
        at = end
    return _line("".join(out + [text[at:]]))


async def _trace(runtime: Runtime, args: argparse.Namespace) -> int:
    from .turns.replay import replay

    replayed = await replay(runtime.ledger, args.call)
    call = replayed.call
    print(f"call {call.id}: {call.purpose.value} by {call.provider}/{call.model or '-'}, "
          f"{call.started_at:%Y-%m-%d %H:%M:%S}, tokens in/out "
          f"{call.input_tokens}/{call.output_tokens}, output {call.output_id or '-'}"
          + (f", error {call.error}" if call.error else ""))
    print(f"{'pos':>4}  {'node':36}  {'role':9}  {'tokens':>6}  content")
    for position, node in enumerate(replayed.nodes):
        text = _line(node.content)
        flag = _flags(node)
        print(f"{position:4d}  {node.id:36}  {node.role.value:9}  {node.tokens:6d}  "
              f"{text[:60]}{flag}")
    if replayed.differs is None:
        print("today's render: not comparable (the prompt was not a render of a live head)")
    elif replayed.differs:
        print(f"today's render of {call.head_id} differs: +{list(replayed.added)} "
              f"-{list(replayed.dropped)}")
    else:
        print(f"today's render of {call.head_id} is the same prompt")
    return 0


async def _diff(runtime: Runtime, args: argparse.Namespace) -> int:
    from .store.calls import diff_reads

    first = await runtime.ledger.calls.get(args.first)
    second = await runtime.ledger.calls.get(args.second)
    diff = diff_reads(first.read_ids or (), second.read_ids or ())
    nodes = {n.id: n for n in await runtime.ledger.nodes.get_many(
        list(dict.fromkeys(diff.added + diff.dropped + diff.moved)))}
    print(f"{second.id} against {first.id}: {len(diff.added)} added, {len(diff.dropped)} "
          f"removed, {len(diff.moved)} moved, {len(diff.kept)} in both")
    for mark, ids in (("+", diff.added), ("-", diff.dropped), ("~", diff.moved)):
        for node_id in ids:
            node = nodes[node_id]
            text = _line(node.content)
            print(f"{mark} {node.id:36}  {node.role.value:9}  {text[:60]}{_flags(node)}")
    return 0


def _flags(node) -> str:
    """What a row of a past prompt no longer shows as the model read it."""
    flags = (["deleted"] if node.deleted else []) + (
        [f"redacted {node.redaction.at:%Y-%m-%d}: {node.redaction.reason}"]
        if node.redaction else [])
    return f" ({'; '.join(flags)})" if flags else ""


async def _mcp(runtime: Runtime, args: argparse.Namespace) -> int:
    from .mcp import mcp_server

    await mcp_server(lambda _: runtime.ledger).run_stdio_async()
    return 0


async def _compact(runtime: Runtime, args: argparse.Namespace) -> int:
    result = await runtime.compactor.compact(args.session, head_id=args.head,
                                             keep_recent_tokens=args.keep,
                                             instructions=args.instructions,
                                             up_to=args.up_to, dry_run=args.dry_run)
    if result.status.value == "PREVIEWED":
        print(f"PREVIEWED (nothing written): would cover {result.covered_count} turns, "
              f"{result.tokens_before} -> {result.tokens_after} tokens")
        print(f"covered: {' '.join(result.covered_ids)}")
        print(f"retained: {' '.join(result.retained_ids) or '(none)'}")
        if result.message:
            print(result.message)
        print(result.summary_text)
        return 0
    print(f"{result.status.value}: " + (
        f"summary {result.summary.id} covers {result.covered_count} turns, "
        f"{result.tokens_before} -> {result.tokens_after} tokens"
        if result.summary else str(result.message)))
    return 1 if result.status.value == "FAILED" else 0


async def _uncompact(runtime: Runtime, args: argparse.Namespace) -> int:
    retired = await runtime.ledger.summaries.retire(args.summary)
    print(f"retired summary {retired.summary_id} of session {retired.session_id}; active "
          f"summary now: {retired.restored_id or 'none'}")
    return 0


async def _checkout(runtime: Runtime, args: argparse.Namespace) -> int:
    if args.summarize_left:
        done = await runtime.carrier.checkout(
            args.session, args.node, instructions=args.instructions)
        _carried(done.carried)
        return 0
    if args.instructions is not None:
        raise BadInput("--instructions steer the summary of the branch left: give them with "
                       "--summarize-left")
    moved = await runtime.ledger.head.set_head(args.session, args.node)
    print(f"HEAD {moved.previous_head_id} -> {moved.head_id}")
    return 0


async def _carry_over(runtime: Runtime, args: argparse.Namespace) -> int:
    done = await runtime.carrier.carry_over(
        args.session, args.from_tip, args.into_head, instructions=args.instructions)
    _carried(done.carried)
    return 0


def _carried(carried) -> None:
    print(f"carry node {carried.node.id} after {carried.node.predecessor_id} summarizes "
          f"{len(carried.carried_ids)} turns: {' '.join(carried.carried_ids)}")
    print(f"HEAD {'moved onto it' if carried.head_moved else 'unmoved'}")
    print(carried.node.content)


if __name__ == "__main__":
    sys.exit(main())
