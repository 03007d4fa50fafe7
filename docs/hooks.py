"""MkDocs hook: the reference pages made from the code at build time, never committed.

- reference/schema.md    from schema.graphql
- reference/cli.md       from the `ctxdag` argparse parser (service/cli.py, admin_cli.py)
- reference/settings.md  from every environment variable service/config.py reads
- reference/errors.md    from the error classes of service/errors.py

Each page is a generated File, so `mkdocs build --strict` checks links into it like
any other page, and a change to the code changes the page on the next build.
"""
from __future__ import annotations

import argparse
import ast
import inspect
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
ENV_NAME = re.compile(r"^(CTXDAG|NEO4J|ANTHROPIC)_[A-Z0-9_]+$")


def on_files(files, config):
    for name, render in PAGES.items():
        files.append(File.generated(config, f"reference/{name}.md", content=render()))
    return files


def schema_page() -> str:
    schema = (ROOT / "schema.graphql").read_text()
    return ("# GraphQL schema\n\n"
            "`schema.graphql`, generated from `service/api/schema.py` by `make schema` "
            "(a test fails when it drifts). The conventions it follows are in "
            "[The GraphQL API](graphql-api.md).\n\n"
            f"```graphql\n{schema.rstrip()}\n```\n")


def cli_page() -> str:
    from service import cli

    parser = cli._parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    lines = ["# The `ctxdag` command", "",
             "Generated from the parser in `service/cli.py` and `service/admin_cli.py`; "
             "`ctxdag COMMAND --help` prints the same.", ""]
    seen: set[int] = set()
    for name, command in sub.choices.items():
        if id(command) in seen:
            continue
        seen.add(id(command))
        aliases = [n for n, c in sub.choices.items() if c is command and n != name]
        title = f"## `ctxdag {name}`" + (f" (also `{', '.join(aliases)}`)" if aliases else "")
        helps = {c.dest: c.help for c in sub._choices_actions}
        command.prog = f"ctxdag {name}"
        lines += [title, "", helps.get(name) or "", "", "```text",
                  command.format_help().rstrip(), "```", ""]
    return "\n".join(lines)


def settings_page() -> str:
    from service import config

    source = inspect.getsource(config)
    rows: dict[str, tuple[str, str]] = {}
    for call in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)):
        strings = [a for a in call.args if isinstance(a, ast.Constant)
                   and isinstance(a.value, str) and ENV_NAME.match(a.value)]
        if not strings:
            continue
        name = strings[0].value
        reader = {"env.get": "text"}.get(ast.unparse(call.func), ast.unparse(call.func).lstrip("_"))
        rest = [_value(a, vars(config)) for a in call.args[call.args.index(strings[0]) + 1:]]
        rows.setdefault(name, (reader, ", ".join(rest)))
    for constant in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)):
        if isinstance(constant.value, str) and ENV_NAME.match(constant.value):
            rows.setdefault(constant.value, ("", ""))
    lines = ["# Settings", "",
             "Every environment variable `service/config.py` reads (generated from its "
             "source; it is the only code that reads the environment). An empty variable "
             "counts as unset; a malformed or out-of-range value is `BAD_CONFIG` naming "
             "the variable, which `ctxdag` prints as one line and exits with status 2 "
             "(`error: BAD_CONFIG: CTXDAG_NEO4J_PORT must be an integer from 1 to 65535, "
             "got '99999'`). What each one does is told on the page of its feature.", "",
             "| variable | read as | default, least[, most] value — or the choices | told on |",
             "|---|---|---|---|"]
    for name in sorted(rows):
        reader, rest = rows[name]
        told = ", ".join(f"[{title}](../{page})" for page, title in _pages_naming(name)[:3])
        lines.append(f"| `{name}` | {reader} | {('`' + rest + '`') if rest else ''} | {told} |")
    return "\n".join(lines) + "\n"


def _pages_naming(text: str) -> list[tuple[str, str]]:
    """The hand-written pages that mention `text`, as (path under docs/, title)."""
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        body = page.read_text()
        if f"`{text}`" in body or f"{text}=" in body:
            title = next((l[2:].strip() for l in body.splitlines() if l.startswith("# ")), page.stem)
            found.append((page.relative_to(ROOT / "docs").as_posix(), title))
    return found


def _value(node: ast.expr, names: dict) -> str:
    """A default or bound as its value (`DEFAULT_RECALL_BUDGET` as 4000), else as written."""
    try:
        return repr(eval(compile(ast.Expression(node), "config", "eval"), dict(names)))
    except Exception:  # noqa: BLE001 - what cannot be evaluated is shown as written
        return ast.unparse(node)


def errors_page() -> str:
    from service import errors

    lines = ["# Errors and their codes", "",
             "Every error ctxdag raises on purpose (generated from `service/errors.py`). "
             "Over GraphQL the code is `extensions.code` on every transport; on the "
             "command line an error is one line `error: CODE: message` and exit status 2. "
             "Anything unexpected is logged and masked as `INTERNAL`. Limits are in "
             "[Limits](limits.md).", "", "| code | class | meaning |", "|---|---|---|"]
    classes = [c for c in vars(errors).values()
               if inspect.isclass(c) and issubclass(c, errors.CtxdagError)]
    for cls in sorted(classes, key=lambda c: (c.code, c.__name__)):
        doc = " ".join((inspect.getdoc(cls) or "").split())
        if cls is not errors.CtxdagError and doc == inspect.getdoc(errors.CtxdagError):
            doc = ""
        lines.append(f"| `{cls.code}` | `{cls.__name__}` | {doc} |")
    return "\n".join(lines) + "\n"


PAGES = {"schema": schema_page, "cli": cli_page, "settings": settings_page,
         "errors": errors_page}
