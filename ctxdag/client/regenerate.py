"""Regenerates the typed GraphQL layer (generated/aio, generated/sync) from schema.graphql
and operations/*.graphql with ariadne-codegen: `make client`, or
`python -m ctxdag.client.regenerate [--into DIR] [--codegen PATH]`.

The generator pins graphql-core below 3.3 and the service needs 3.3, so it runs from a
virtualenv of its own (`make client` creates .venv/codegen)."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
REPOSITORY = PACKAGE.parent.parent
SCHEMA = REPOSITORY / "schema.graphql"
OPERATIONS = PACKAGE / "operations"
GENERATED = PACKAGE / "generated"
CODEGEN = REPOSITORY / ".venv" / "codegen" / "bin" / "ariadne-codegen"
# Each flavour is one generated package: (folder name, async_client).
FLAVOURS = (("aio", True), ("sync", False))


def config(into: Path, name: str, is_async: bool) -> str:
    return "\n".join([
        "[tool.ariadne-codegen]",
        f'schema_path = "{SCHEMA}"',
        f'queries_path = "{OPERATIONS}"',
        f'target_package_path = "{into}"',
        f'target_package_name = "{name}"',
        f"async_client = {'true' if is_async else 'false'}",
        'client_name = "GeneratedClient"',
        # Only what the operations use: other parts of the schema may change freely.
        "include_all_inputs = false",
        "include_all_enums = false",
        'include_comments = "none"',
        'plugins = ["codegen_plugin.UnquotedAnnotations"]',
        "",
    ])


def generate(into: Path, codegen: Path = CODEGEN) -> None:
    """Writes generated/<flavour>/ for each flavour under `into`."""
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for name, is_async in FLAVOURS:
            settings = Path(scratch) / f"{name}.toml"
            settings.write_text(config(into, name, is_async))
            done = subprocess.run([str(codegen), "--config", str(settings), "client"],
                                  capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": str(PACKAGE)})
            if done.returncode != 0:
                raise RuntimeError(f"ariadne-codegen failed for {name}: {done.stderr[-2000:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--into", type=Path, default=GENERATED)
    parser.add_argument("--codegen", type=Path, default=CODEGEN)
    args = parser.parse_args(argv)
    generate(args.into, args.codegen)
    return 0


if __name__ == "__main__":
    sys.exit(main())
