"""The `ctxdag` command."""
from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Sequence

from .config import Settings
from .errors import CtxdagError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ctxdag", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    neo4j = commands.add_parser("neo4j", help="the managed local Neo4j")
    neo4j.add_argument("action", choices=["up", "down", "status"])
    commands.add_parser("smoke", help="write and read a small conversation with a fork")
    return parser


async def _smoke(settings: Settings) -> int:
    from .connect import ledger_for, open_database
    from .smoke import run_smoke

    database = await open_database(settings)
    try:
        await run_smoke(ledger_for(database, settings))
    finally:
        await database.driver.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    settings = Settings.from_env()
    try:
        if args.command == "neo4j":
            from .neo4j_local import commands

            return {"up": commands.up, "down": commands.down,
                    "status": commands.status}[args.action](settings)
        if args.command == "smoke":
            return asyncio.run(_smoke(settings))
    except CtxdagError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
