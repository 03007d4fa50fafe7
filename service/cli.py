"""The `ctxdag` command."""
from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Sequence

from . import admin_cli
from .config import Settings
from .errors import CtxdagError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctxdag", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    neo4j = commands.add_parser("neo4j", help="the managed local Neo4j")
    neo4j.add_argument("action", choices=["up", "down", "status"])
    commands.add_parser("smoke", help="write, fork, compact and read a small conversation")
    render = commands.add_parser("render", help="print what the model reads from a head")
    render.add_argument("session")
    render.add_argument("--head", help="a node id (default: the session's HEAD)")
    compact = commands.add_parser("compact", help="compact the branch of a head")
    compact.add_argument("session")
    compact.add_argument("--head", help="a node id (default: the session's HEAD)")
    compact.add_argument("--keep", type=int, help="keep_recent_tokens (default from settings)")
    serve = commands.add_parser("serve", help="run the GraphQL service (and the managed Neo4j)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    demo = commands.add_parser("demo", help="load a demo conversation through the running API")
    demo.add_argument("--url", default="http://127.0.0.1:8000")
    demo.add_argument("--token", help="a bearer token, when the service requires one")
    trace = commands.add_parser("trace", help="print what a model call read, as a table")
    trace.add_argument("call")
    admin_cli.add_commands(commands)
    return parser


async def _with_runtime(settings: Settings, job) -> int:
    from .runtime import Runtime

    runtime = await Runtime.open(settings)
    try:
        return await job(runtime)
    finally:
        await runtime.close()


async def _render(runtime, session: str, head: str | None) -> int:
    from .context.render import render_context

    view = await render_context(runtime.ledger, session, head)
    print(f"head {view.head_id}: {len(view.nodes)} nodes, ~{view.tokens} tokens"
          + (f", summary {view.summary_id} stands in for its segment" if view.summary_id else ""))
    for position, node in enumerate(view.nodes):
        text = " ".join(node.content.split())
        print(f"{position:4d}  {node.id}  {node.role.value:9s}  {text[:80]}")
    return 0


async def _trace(runtime, call_id: str) -> int:
    from .turns.replay import replay

    replayed = await replay(runtime.ledger, call_id)
    call = replayed.call
    print(f"call {call.id}: {call.purpose.value} by {call.provider}/{call.model or '-'}, "
          f"{call.started_at:%Y-%m-%d %H:%M:%S}, tokens in/out "
          f"{call.input_tokens}/{call.output_tokens}, output {call.output_id or '-'}"
          + (f", error {call.error}" if call.error else ""))
    print(f"{'pos':>4}  {'node':36}  {'role':9}  {'tokens':>6}  content")
    for position, node in enumerate(replayed.nodes):
        text = " ".join(node.content.split())
        flag = " (deleted)" if node.deleted else ""
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


async def _compact(runtime, session: str, head: str | None, keep: int | None) -> int:
    result = await runtime.compactor.compact(session, head_id=head, keep_recent_tokens=keep)
    print(f"{result.status.value}: " + (
        f"summary {result.summary.id} covers {result.covered_count} turns, "
        f"{result.tokens_before} -> {result.tokens_after} tokens"
        if result.summary else str(result.message)))
    return 1 if result.status.value == "FAILED" else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = Settings.from_env()
    try:
        if args.command == "neo4j":
            from .neo4j_local import commands

            return {"up": commands.up, "down": commands.down,
                    "status": commands.status}[args.action](settings)
        if args.command == "smoke":
            from .smoke import run_smoke

            return asyncio.run(_with_runtime(settings, run_smoke))
        if args.command == "render":
            return asyncio.run(_with_runtime(
                settings, lambda rt: _render(rt, args.session, args.head)))
        if args.command == "compact":
            return asyncio.run(_with_runtime(
                settings, lambda rt: _compact(rt, args.session, args.head, args.keep)))
        if args.command in admin_cli.COMMANDS:
            return asyncio.run(_with_runtime(
                settings, lambda rt: admin_cli.run(args, rt.database, rt.ledger.tenant,
                                                   rt.ledger.limits)))
        if args.command == "trace":
            return asyncio.run(_with_runtime(settings, lambda rt: _trace(rt, args.call)))
        if args.command == "serve":
            from .serve import serve

            return asyncio.run(serve(settings, args.host, args.port))
        if args.command == "demo":
            from .demo import run_demo

            run_demo(args.url, args.token)
            return 0
    except CtxdagError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
