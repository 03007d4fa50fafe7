"""Admin commands of `ctxdag`: `export SESSION`, `import FILE`, `check [SESSION]`,
`import-transcript PATH…`, `redact NODE --reason TEXT --yes`.

`add_commands` adds them to the `ctxdag` parser's subcommands, each naming its handler
as every other command does (service/cli.py). A handler runs on the Runtime built from
the Settings, so it works on the configured tenant's ledger under the configured limits
(`import` stores, and `check` accepts, only what this service's API could write).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .errors import BadInput
from .model import redaction, validate
from .store.backup import export_session
from .store import backup_parts
from .store.invariants import check_each
from .store.paging import window

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
        "a file imported before writes only what it gained; a folder is walked")
    transcript.add_argument("files", nargs="*", metavar="PATH",
                            help="a transcript file ('-' reads stdin) or a folder, walked in "
                            "Claude Code's, Pi's and Codex's layouts (none: the folders "
                            "where the tools keep their sessions on this machine)")
    transcript.add_argument("--format", help="the files' format (default: detected per file)")
    transcript.add_argument("--since", metavar="DATE",
                            help="only the files changed at DATE or later (ISO 8601, local "
                            "time unless it names a zone)")
    transcript.add_argument("--strict", action="store_true",
                            help="refuse a file holding an entry that cannot be mapped "
                            "(default: skip or mention it, and list it)")
    transcript.add_argument("--follow", action="store_true",
                            help="keep importing one FILE as its tool appends to it, or the "
                            "files of one folder (none named: the tools' own folders) as they "
                            "are created and grow, until interrupted (SIGINT, SIGTERM)")
    transcript.add_argument("--poll", type=float, default=0.5, metavar="SECONDS",
                            help="with --follow: how often the file's size is read")
    transcript.add_argument("--settle", type=float, default=2.0, metavar="SECONDS",
                            help="with --follow: how long the file stays quiet before a "
                            "closing reply is imported")
    transcript.set_defaults(job=_import_transcript)
    redact = commands.add_parser(
        "redact", help="erase a node's content for good (it cannot be undone), keeping its "
        "place, edges and the calls that read it")
    redact.add_argument("node")
    redact.add_argument("--reason", required=True,
                        help="why (kept for the audit; must not quote what is erased)")
    redact.add_argument("--yes", action="store_true",
                        help="redact; without it the command only says what it would erase")
    redact.set_defaults(job=_redact)
    check = commands.add_parser("check", help="check the storage invariants of sessions")
    check.add_argument("session", nargs="?", help="one session (default: all of the tenant)")
    check.add_argument("--all-tenants", action="store_true",
                       help="check the sessions of every tenant")
    check.set_defaults(job=_check)


async def _export(runtime: Runtime, args: argparse.Namespace) -> int:
    ledger = runtime.ledger
    document = await export_session(ledger.db, ledger.tenant, args.session, ledger.limits)
    if args.output is None:
        _write_json(document, sys.stdout)
        return 0
    part = Path(f"{args.output}.part")  # a failed write leaves the file as it was
    with part.open("w", encoding="utf-8") as f:
        _write_json(document, f)
    part.replace(args.output)
    print(f"exported session {args.session}: {len(document['nodes'])} nodes, "
          f"{len(document['calls'])} calls to {args.output}")
    return 0


def _write_json(document: dict, f: TextIO) -> None:
    """The document as the file of a backup, written as it is encoded: a long session's
    text is never held whole."""
    json.dump(document, f, ensure_ascii=False, indent=1)
    f.write("\n")


async def _import(runtime: Runtime, args: argparse.Namespace) -> int:
    ledger = runtime.ledger
    document = validate.parse_json(_read_text(args.file), args.file)
    print(await backup_parts.restore(ledger.db, ledger.tenant, document, ledger.limits))
    return 0


async def _import_transcript(runtime: Runtime, args: argparse.Namespace) -> int:
    from . import transcripts
    from .transcripts.batch import import_paths
    from .transcripts.walk import since

    ledger = runtime.ledger
    if args.format is not None and args.format not in transcripts.FORMATS:
        raise BadInput(f"--format must be one of: {', '.join(transcripts.FORMATS)}")
    after = since(args.since) if args.since is not None else None
    folders = runtime.settings.tool_session_folders
    if args.follow:
        return await _follow_transcript(ledger, args, after, folders)
    paths = args.files or _tool_homes(folders)
    return await import_paths(ledger, paths, args.format, args.strict, after, _read_text,
                              shelf=runtime.readings(ledger))


def _tool_homes(folders: tuple[Path, ...]) -> list[str]:
    """The tools' session folders there are on this machine, said on the first line."""
    homes = [str(folder) for folder in folders if folder.is_dir()]
    if not homes:
        raise BadInput("no PATH given, and no tool keeps sessions on this machine where "
                       "they do by default (~/.claude/projects, ~/.pi/agent/sessions, "
                       "~/.codex/sessions, or in $CLAUDE_CONFIG_DIR, $PI_CODING_AGENT_DIR, "
                       "$CODEX_HOME): name a transcript file or folder")
    print("the tools' sessions on this machine: " + ", ".join(homes), flush=True)
    return homes


async def _follow_transcript(ledger: Any, args: argparse.Namespace, after: float | None,
                             tool_folders: tuple[Path, ...]) -> int:
    import asyncio
    import signal

    from .transcripts.batch import imported
    from .transcripts.follow import follow, follow_folder
    from .transcripts.walk import named_in_text

    if len(args.files) > 1 or args.files == ["-"]:
        raise BadInput("--follow takes one FILE or DIR (not stdin), or none: the folders "
                       "where the tools keep their sessions")
    if not (args.poll > 0 and args.settle >= 0):
        raise BadInput("--poll must be above 0 seconds and --settle at least 0")
    paths = [os.path.abspath(path) for path in args.files] or _tool_homes(tool_folders)
    stop = asyncio.Event()
    for path in paths:
        named_in_text(path)
    said_of = paths[0] if args.files else "the tools' sessions"
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    timing = {"interval": args.poll, "settle": args.settle, "strict": args.strict}
    try:
        if not args.files or Path(paths[0]).is_dir():
            held = await follow_folder(
                ledger, paths, args.format, stop,
                lambda file, stored: print(imported(file, stored), flush=True),
                lambda file, e: print(f"error: {e}", file=sys.stderr, flush=True),
                after=after, **timing)
            said = (f"{validate.counted(len(held), 'session')}, "
                    f"{validate.counted(sum(s.nodes for s in held.values()), 'node')}")
        else:
            file = paths[0]
            last = await follow(ledger, file, args.format, stop,
                                lambda stored: print(imported(file, stored), flush=True),
                                **timing)
            said = "nothing imported" if last is None else \
                f"session {last.session_id}, {validate.counted(last.nodes, 'node')}"
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    print(f"{said_of}: stopped following ({said})", flush=True)
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


async def _redact(runtime: Runtime, args: argparse.Namespace) -> int:
    ledger = runtime.ledger
    validate.redaction_reason(args.reason)
    node = await ledger.nodes.get(args.node)
    if not args.yes:
        readers = await ledger.calls.readers_pages([node.id], window(1, None, None, None))
        read_by = readers[node.id].total if node.id in readers else 0
        print(f"redacting {node.id} ({node.role.value}, session {node.session_id}) erases its "
              f"content for good: it cannot be undone. {read_by} calls read it; they keep "
              "their READ edges and will show the redaction marker. Run again with --yes to "
              "redact.", file=sys.stderr)
        return 1
    done = await ledger.redactions.redact(node.id, args.reason)
    print(f"redacted {node.id}: its content is now {redaction.MARKER!r}"
          + (f"; erased media {', '.join(done.erased_media)}" if done.erased_media else ""))
    for quoting_id in done.quoting_ids:
        print(f"may quote it: {quoting_id} (redact it, or re-summarize)")
    return 0


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
        print(f"{broken} of {validate.counted(len(results), 'session')} "
              f"{'violates' if broken == 1 else 'violate'} invariants", file=sys.stderr)
        return 1
    print(f"ok: {validate.counted(len(results), 'session')} checked")
    return 0
