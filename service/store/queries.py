"""Cypher statements live in cypher/*.cypher, one per file, loaded by name once.

Each file opens with a header of `// key: value` lines:

    // name: session_get            (must equal the file's stem)
    // returns: one row {session} or none
    // purpose: one line saying why the statement exists
    // params: session_id, tenant   (every $parameter of the body, nothing more)

The loader refuses a file whose name does not match its stem (so names are unique),
and a body that uses a parameter it does not declare (or declares one it never uses).
Calls are checked too: a statement runs only with exactly its declared params.

Statements run with their parameters in one map: `$content` as written is sent as
`$args.content` (`Query.text`; `Query.source` is the file's). Neo4j keys cached plans by
each parameter's type and a size bucket of every string and list parameter, so a message
of a new length, or a batch of a new size, would otherwise plan the statement again
(0.3-1 s each); the values inside a map are not part of the key, so each statement has
one plan, and the service plans them all at start (Database.plan_statements).

A body line `// include: NAME` is replaced by cypher/fragments/NAME.cypher, so a
clause or expression shared by several statements (how a model call is recorded, how a
node is written, the map a node is returned as) is written once.
Fragments take no header and may include other fragments; the including statement
declares the parameters of all of them.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

# The repository's cypher/ folder, installed as the package `service.cypher`.
CYPHER_DIR = Path(str(resources.files("service.cypher")))
MIGRATIONS_DIR = CYPHER_DIR / "migrations"
FRAGMENTS_DIR = CYPHER_DIR / "fragments"

_HEADER = re.compile(r"^//\s*(\w+):\s*(.*?)\s*$")
_INCLUDE = re.compile(r"^\s*//\s*include:\s*(\w+)\s*$")
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_STRING_OR_COMMENT = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|//[^\n]*")
_PARAM_OUTSIDE_STRINGS = re.compile(_STRING_OR_COMMENT.pattern + r"|\$([A-Za-z_][A-Za-z0-9_]*)")
ARGS = "args"  # the one map parameter statements are sent with


class QueryFileError(ValueError):
    pass


@dataclass(frozen=True)
class Query:
    name: str
    text: str  # as sent: every $name read from the one map parameter $args
    params: frozenset[str]
    returns: str
    purpose: str
    source: str = ""  # as written, includes expanded

    def bind(self, params: Mapping[str, object]) -> dict[str, object]:
        """The parameters to send with `text`: exactly the declared ones, in one map."""
        given = set(params)
        if given != self.params:
            missing = sorted(self.params - given)
            extra = sorted(given - self.params)
            raise TypeError(f"query {self.name}: missing params {missing}, unexpected {extra}")
        return {ARGS: Arguments(params)}


class Arguments(dict):
    """A statement's parameters, sent as they are but shown by their names: the driver
    formats its debug line of every RUN whether or not it is logged (neo4j 6.4), which
    for a large import's parameters cost more than sending them."""

    def __repr__(self) -> str:
        return f"<arguments {', '.join(self)}>"


def _from_one_map(body: str) -> str:
    """`body` with every parameter outside strings and comments read from $args."""
    def swap(match: re.Match[str]) -> str:
        name = match.group(1)
        return match.group(0) if name is None else f"${ARGS}.{name}"
    return _PARAM_OUTSIDE_STRINGS.sub(swap, body)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


def _fragment(name: str, fragments: Path, outer: tuple[str, ...] = ()) -> list[str]:
    """The fragment's lines, with the fragments it includes in turn expanded."""
    if name in outer:
        raise QueryFileError(f"fragment {name!r} includes itself: {' -> '.join(outer + (name,))}")
    path = fragments / f"{name}.cypher"
    if not path.exists():
        raise QueryFileError(f"include of unknown fragment {name!r}")
    lines: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        include = _INCLUDE.match(line)
        if include:
            lines.extend(_fragment(include.group(1), fragments, (*outer, name)))
        else:
            lines.append(line)
    return lines


def parse_query(path: Path, fragments: Path = FRAGMENTS_DIR) -> Query:
    header: dict[str, str] = {}
    body_lines: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _HEADER.match(line)
        include = _INCLUDE.match(line)
        if include:
            body_lines.extend(_fragment(include.group(1), fragments))
        elif match and not body_lines:
            header[match.group(1)] = match.group(2)
        else:
            body_lines.append(line)
    body = "\n".join(body_lines).strip()
    for key in ("name", "returns", "purpose"):
        if not header.get(key):
            raise QueryFileError(f"{path.name}: header lacks '// {key}:'")
    if header["name"] != path.stem:
        raise QueryFileError(f"{path.name}: header names {header['name']!r}, file is {path.stem!r}")
    declared = {p.strip() for p in header.get("params", "").split(",") if p.strip()}
    used = set(_PARAM.findall(_STRING_OR_COMMENT.sub("", body)))
    if used != declared:
        raise QueryFileError(
            f"{path.name}: params used but not declared {sorted(used - declared)}, "
            f"declared but not used {sorted(declared - used)}"
        )
    if not body:
        raise QueryFileError(f"{path.name}: empty statement")
    return Query(header["name"], _from_one_map(body), frozenset(declared), header["returns"],
                 header["purpose"], body)


def load_queries(directory: Path = CYPHER_DIR) -> dict[str, Query]:
    queries = (parse_query(path) for path in sorted(directory.glob("*.cypher")))
    return {query.name: query for query in queries}


@functools.cache
def packaged_queries() -> Mapping[str, Query]:
    """The service's statements, read and checked once per process."""
    return MappingProxyType(load_queries())


def load_migrations(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Files named NNN_name.cypher; statements separated by lines ending in ';'."""
    migrations = []
    for path in sorted(directory.glob("*.cypher")):
        number, _, name = path.stem.partition("_")
        text = "\n".join(
            line for line in path.read_text(encoding="utf-8").splitlines()
            if not line.lstrip().startswith("//")
        )
        statements = tuple(s.strip() for s in text.split(";") if s.strip())
        if _PARAM.search(text):
            raise QueryFileError(f"{path.name}: migrations take no parameters")
        migrations.append(Migration(int(number), name, statements))
    versions = [m.version for m in migrations]
    if versions != sorted(set(versions)):
        raise QueryFileError(f"migration versions must be unique and ordered: {versions}")
    return migrations
