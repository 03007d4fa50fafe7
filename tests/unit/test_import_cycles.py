"""Dependencies between the parts of `service` go one way: no import cycle between them.

A part is a subpackage (service/store, service/turns, …) or a top-level module
(service/errors.py, …). Every import counts, at module level or inside a function,
read with ast, so a cycle hidden behind a deferred import is found too.
"""
import ast
from pathlib import Path

SERVICE = Path(__file__).resolve().parents[2] / "service"


def _imported(path: Path, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The absolute module names an import statement of `path` names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not node.level:
        return [node.module or ""]
    package = list(path.relative_to(SERVICE.parent).with_suffix("").parts[:-1])
    base = package[:len(package) - (node.level - 1)]
    if node.module:
        return [".".join([*base, node.module])]
    return [".".join([*base, alias.name]) for alias in node.names]  # from . import x


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "service" and len(parts) > 1 else None


def dependencies() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in SERVICE.rglob("*.py"):
        source = path.relative_to(SERVICE).parts[0].removesuffix(".py")
        edges = graph.setdefault(source, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                edges.update(p for m in _imported(path, node)
                             if (p := _part(m)) not in (None, source))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            members = []
            while True:
                member = stack.pop()
                members.append(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(sorted(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle_between_the_parts_of_service():
    graph = dependencies()
    assert {"store", "turns", "llm", "context", "api"} <= set(graph)
    assert cycles(graph) == [], {k: sorted(v) for k, v in graph.items()}


def test_llm_depends_on_turns_never_the_reverse():
    graph = dependencies()
    assert "turns" in graph["llm"] and "llm" not in graph["turns"]


def test_a_cycle_is_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def _module_imports(folder: Path) -> dict[str, set[str]]:
    """Every module of a package folder and the absolute names it imports."""
    found: dict[str, set[str]] = {}
    for path in folder.glob("*.py"):
        names = found.setdefault(path.stem, set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update(_imported(path, node))
    return found


def test_the_pure_model_stands_below_the_store_and_imports_no_database():
    graph = dependencies()
    assert graph["model"] <= {"errors", "tokens"}, graph["model"]
    assert "model" in graph["store"]
    imported = _module_imports(SERVICE / "model")
    assert not [m for m, names in imported.items()
                if any(n.split(".")[0] == "neo4j" for n in names)]


def test_no_import_cycle_between_the_modules_of_the_model_or_the_store():
    for package in ("model", "store"):
        imported = _module_imports(SERVICE / package)
        prefix = f"service.{package}."
        inner = {module: {name.removeprefix(prefix).split(".")[0] for name in names
                          if name.startswith(prefix)} for module, names in imported.items()}
        assert cycles(inner) == [], package
