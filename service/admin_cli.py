"""Admin commands: `export SESSION`, `import FILE`, `check [SESSION]`.

`add_commands` adds them to the `ctxdag` parser's subcommands; `run` executes the
parsed arguments against a Database for one tenant, under the service's limits, and
returns the exit code.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from .errors import BadInput
from .store import Database, Ledger, Limits, validate
from .store.backup import export_session, import_session
from .store.invariants import check_each

COMMANDS = ("export", "import", "check")


def add_commands(commands: Any) -> None:
    export = commands.add_parser("export", help="write a session as a JSON backup document")
    export.add_argument("session")
    export.add_argument("--output", "-o", help="a file to write (default: stdout)")
    restore = commands.add_parser("import", help="rebuild a session from a backup document")
    restore.add_argument("file", help="the document ('-' reads stdin)")
    check = commands.add_parser("check", help="check the storage invariants of sessions")
    check.add_argument("session", nargs="?", help="one session (default: all of the tenant)")
    check.add_argument("--all-tenants", action="store_true",
                       help="check the sessions of every tenant")


async def run(args: argparse.Namespace, database: Database, tenant: str, limits: Limits) -> int:
    if args.command == "export":
        return await _export(database, tenant, args.session, args.output, limits)
    if args.command == "import":
        return await _import(database, tenant, args.file, limits)
    if args.command == "check":
        return await _check(database, tenant, args.session, args.all_tenants, limits)
    raise ValueError(f"not an admin command: {args.command}")


async def _export(database: Database, tenant: str, session_id: str, output: str | None,
                  limits: Limits) -> int:
    document = await export_session(database, tenant, session_id, limits)
    text = json.dumps(document, ensure_ascii=False, indent=1) + "\n"
    if output is None:
        sys.stdout.write(text)
        return 0
    Path(output).write_text(text, encoding="utf-8")
    print(f"exported session {session_id}: {len(document['nodes'])} nodes, "
          f"{len(document['calls'])} calls to {output}")
    return 0


async def _import(database: Database, tenant: str, file: str, limits: Limits) -> int:
    document = validate.parse_json(_read_text(file), file)
    print(await import_session(database, tenant, document, limits))
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


async def _check(database: Database, tenant: str, session_id: str | None,
                 all_tenants: bool, limits: Limits) -> int:
    if session_id is not None:
        ledger = Ledger.open(database, tenant, limits)
        await ledger.sessions.get(session_id)  # NotFound rather than a silent "ok"
        results = [(session_id, await ledger.violations(session_id))]
    else:
        results = [r async for r in check_each(database, limits,
                                               None if all_tenants else tenant)]
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
