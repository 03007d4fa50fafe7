"""Admin commands of `ctxdag`: `export SESSION`, `import FILE`, `check [SESSION]`,
`import-transcript FILE…`.

`add_commands` adds them to the `ctxdag` parser's subcommands, each naming its handler
as every other command does (service/cli.py). A handler runs on the Runtime built from
the Settings, so it works on the configured tenant's ledger under the configured limits
(`import` stores, and `check` accepts, only what this service's API could write).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import BadInput
from .model import validate
from .store.backup import export_session, import_session
from .store.invariants import check_each
from .store.transcripts import store_transcript

if TYPE_CHECKING:
    from .runtime import Runtime


def add_commands(commands: Any) -> None:
    export = commands.add_parser("export", help="write a session as a JSON backup document")
    export.add_argument("session")
    export.add_argument("--output", "-o", help="a file to write (default: stdout)")
    export.set_defaults(job=_export)
    restore = commands.add_parser("import", help="rebuild a session from a backup document")
    restore.add_argument("file", help="the document ('-' reads stdin)")
    restore.set_defaults(job=_import)
    transcript = commands.add_parser(
        "import-transcript", help="import agent transcripts (Claude Code, Pi or Codex JSONL) as sessions; "
        "a file imported before writes only what it gained")
    transcript.add_argument("files", nargs="+", metavar="FILE")
    transcript.add_argument("--format", help="the files' format (default: detected per file)")
    transcript.add_argument("--strict", action="store_true",
                            help="refuse a file holding an entry that cannot be mapped "
                            "(default: skip or mention it, and list it)")
    transcript.add_argument("--follow", action="store_true",
                            help="keep importing one FILE as its tool appends to it, until "
                            "interrupted (SIGINT, SIGTERM)")
    transcript.add_argument("--poll", type=float, default=0.5, metavar="SECONDS",
                            help="with --follow: how often the file's size is read")
    transcript.add_argument("--settle", type=float, default=2.0, metavar="SECONDS",
                            help="with --follow: how long the file stays quiet before a "
                            "closing reply is imported")
    transcript.set_defaults(job=_import_transcript)
    check = commands.add_parser("check", help="check the storage invariants of sessions")
    check.add_argument("session", nargs="?", help="one session (default: all of the tenant)")
    check.add_argument("--all-tenants", action="store_true",
                       help="check the sessions of every tenant")
    check.set_defaults(job=_check)


async def _export(runtime: Runtime, args: argparse.Namespace) -> int:
    ledger = runtime.ledger
    document = await export_session(ledger.db, ledger.tenant, args.session, ledger.limits)
    text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    if args.output is None:
        sys.stdout.write(text)
        return 0
    Path(args.output).write_text(text, encoding="utf-8")
    print(f"exported session {args.session}: {len(document['nodes'])} nodes, "
          f"{len(document['calls'])} calls to {args.output}")
    return 0


async def _import(runtime: Runtime, args: argparse.Namespace) -> int:
    ledger = runtime.ledger
    document = validate.parse_json(_read_text(args.file), args.file)
    print(await import_session(ledger.db, ledger.tenant, document, ledger.limits))
    return 0


async def _import_transcript(runtime: Runtime, args: argparse.Namespace) -> int:
    from . import transcripts

    ledger = runtime.ledger
    if args.format is not None and args.format not in transcripts.FORMATS:
        raise BadInput(f"--format must be one of: {', '.join(transcripts.FORMATS)}")
    if args.follow:
        return await _follow_transcript(ledger, args)
    # Every file is read before anything is written: one bad file writes nothing.
    documents = []
    for file in args.files:
        mode = transcripts.Mode(args.strict)
        documents.append((file, transcripts.read(_read_text(file), file, args.format,
                                                 ledger.tenant, ledger.limits, _read_text,
                                                 mode=mode), mode.degraded))
    for file, document, degraded in documents:
        stored = await store_transcript(ledger.db, ledger.tenant, document, ledger.limits,
                                        ledger.events)
        print(_imported(file, stored))
        for line in _degraded(file, degraded):
            print(line)
    return 0


DEGRADED_SHOWN = 10  # entries listed one by one; the rest are counted


def _degraded(file: str, degraded: list[Any]) -> list[str]:
    """What an import could not map, for its summary: counts by kind, then the first
    entries by file:line."""
    if not degraded:
        return []
    counts: dict[str, int] = {}
    for entry in degraded:
        counts[entry.kind.value] = counts.get(entry.kind.value, 0) + 1
    lines = [f"{file}: {len(degraded)} entries degraded ("
             + ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items())) + ")"]
    lines += [f"  {entry.file}:{entry.line}: {entry.kind.value}: {entry.reason}"
              for entry in degraded[:DEGRADED_SHOWN]]
    if len(degraded) > DEGRADED_SHOWN:
        lines.append(f"  … and {len(degraded) - DEGRADED_SHOWN} more")
    return lines


def _imported(file: str, stored: Any) -> str:
    if stored.created:
        return f"{file}: imported as session {stored.session_id} ({stored.nodes} nodes)"
    if stored.changed:
        relabeled = f", {stored.relabeled} labels set or cleared" if stored.relabeled else ""
        return f"{file}: session {stored.session_id} gained {stored.written} nodes{relabeled}"
    return f"{file}: session {stored.session_id} holds it already; nothing written"


async def _follow_transcript(ledger: Any, args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from .transcripts.follow import follow

    if len(args.files) != 1 or args.files[0] == "-":
        raise BadInput("--follow takes one FILE (not stdin)")
    if not (args.poll > 0 and args.settle >= 0):
        raise BadInput("--poll must be above 0 seconds and --settle at least 0")
    file, stop = args.files[0], asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        last = await follow(ledger, file, args.format, stop,
                            lambda stored: print(_imported(file, stored), flush=True),
                            interval=args.poll, settle=args.settle, strict=args.strict)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    held = f"session {last.session_id}, {last.nodes} nodes" if last else "nothing imported"
    print(f"{file}: stopped following ({held})", flush=True)
    return 0


def _read_text(file: str) -> str:
    try:
        data = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as e:
        raise BadInput(f"cannot read {file}: {e.strerror or e}") from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInput(f"{file} is not UTF-8 text (invalid byte at offset {e.start})") from None


async def _check(runtime: Runtime, args: argparse.Namespace) -> int:
    ledger = runtime.ledger
    if args.session is not None:
        await ledger.sessions.get(args.session)  # NotFound rather than a silent "ok"
        results = [(args.session, await ledger.violations(args.session))]
    else:
        results = [r async for r in check_each(ledger.db, ledger.limits,
                                               None if args.all_tenants else ledger.tenant)]
    broken = 0
    for checked_id, found in results:
        broken += bool(found)
        for violation in found:
            print(f"{checked_id}: {violation}")
    if broken:
        print(f"{broken} of {len(results)} sessions violate invariants", file=sys.stderr)
        return 1
    print(f"ok: {len(results)} sessions checked")
    return 0
