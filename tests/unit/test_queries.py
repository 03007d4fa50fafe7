"""The Cypher loader's rules, and that every shipped statement obeys them."""
import re
from pathlib import Path

import pytest

from service.store.queries import (
    CYPHER_DIR,
    QueryFileError,
    load_migrations,
    load_queries,
    parse_query,
)

SERVICE_DIR = Path(__file__).resolve().parents[2] / "service"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.cypher"
    path.write_text(text)
    return path


def test_every_shipped_statement_loads():
    queries = load_queries()
    assert {"append_message", "fork_sibling", "set_head", "call_record", "delete_branch",
            "branch_list", "session_create", "check_session"} <= set(queries)
    assert load_migrations()[0].version == 1


def test_header_name_must_match_the_file(tmp_path):
    path = write(tmp_path, "a", "// name: b\n// returns: x\n// purpose: y\nRETURN 1")
    with pytest.raises(QueryFileError, match="header names"):
        parse_query(path)


def test_used_but_undeclared_params_are_refused(tmp_path):
    path = write(tmp_path, "a", "// name: a\n// returns: x\n// purpose: y\nRETURN $value")
    with pytest.raises(QueryFileError, match="not declared"):
        parse_query(path)


def test_declared_but_unused_params_are_refused(tmp_path):
    path = write(tmp_path, "a",
                 "// name: a\n// returns: x\n// purpose: y\n// params: a, b\nRETURN $a")
    with pytest.raises(QueryFileError, match="not used"):
        parse_query(path)


def test_dollar_signs_in_strings_and_comments_are_not_params(tmp_path):
    path = write(tmp_path, "a",
                 "// name: a\n// returns: x\n// purpose: y\n// params: a\n"
                 "// mentions $b in a comment\nRETURN $a, '$c' AS s")
    assert parse_query(path).params == {"a"}


def test_fragments_may_include_fragments_but_not_themselves(tmp_path):
    fragments = tmp_path / "fragments"
    fragments.mkdir()
    (fragments / "outer.cypher").write_text("// fragment outer\nWITH $a AS a\n// include: inner")
    (fragments / "inner.cypher").write_text("RETURN a")
    path = write(tmp_path, "a", "// name: a\n// returns: x\n// purpose: y\n// params: a\n"
                                "// include: outer")
    query = parse_query(path, fragments)
    assert query.source.splitlines()[-2:] == ["WITH $a AS a", "RETURN a"]
    assert query.params == {"a"}
    (fragments / "inner.cypher").write_text("// include: outer")
    with pytest.raises(QueryFileError, match="outer -> inner -> outer"):
        parse_query(path, fragments)


def test_statements_read_their_parameters_from_one_map(tmp_path):
    """Neo4j plans a statement once per parameter types and size buckets of its string and
    list parameters, but not of the values inside a map: so every $name is sent as $args.name,
    outside string literals and comments."""
    path = write(tmp_path, "a", "// name: a\n// returns: x\n// purpose: y\n// params: a, b_2\n"
                                "// $a in a comment\nWITH $a AS a, '$a' AS s, \"$b_2\" AS d\n"
                                "RETURN [a, $b_2] AS x // $b_2")
    query = parse_query(path)
    assert query.text.splitlines() == [
        "// $a in a comment", "WITH $args.a AS a, '$a' AS s, \"$b_2\" AS d",
        "RETURN [a, $args.b_2] AS x // $b_2"]
    assert query.bind({"a": "x" * 10_000, "b_2": list(range(500))}) == {
        "args": {"a": "x" * 10_000, "b_2": list(range(500))}}


def test_missing_header_is_refused(tmp_path):
    path = write(tmp_path, "a", "// name: a\nRETURN 1")
    with pytest.raises(QueryFileError, match="returns"):
        parse_query(path)


def test_a_query_runs_only_with_exactly_its_params():
    query = load_queries()["session_get_many"]
    params = {"session_ids": ["s"], "tenant": "t"}
    assert query.bind(params) == {"args": params}
    with pytest.raises(TypeError, match="missing"):
        query.bind({"session_ids": ["s"]})
    with pytest.raises(TypeError, match="unexpected"):
        query.bind({**params, "extra": 1})


def test_no_cypher_is_written_outside_cypher_dir():
    """Only the database door runs statements, and it runs loaded text or migrations."""
    runners = re.compile(r"\b(?:tx|session|driver)\.(?:run|execute_query)\(")
    offenders = []
    for path in SERVICE_DIR.rglob("*.py"):
        for line_no, line in enumerate(path.read_text().splitlines(), 1):
            if runners.search(line) and path.name != "db.py":
                offenders.append(f"{path.relative_to(SERVICE_DIR)}:{line_no}")
    assert offenders == []


def test_statements_are_never_formatted():
    db_source = (SERVICE_DIR / "store" / "db.py").read_text()
    for call in re.findall(r"\.(?:run|execute_query)\(([^,)]*)", db_source):
        assert call.strip() in ("text", "statement", "query.text"), call
    assert "format(" not in db_source and 'f"MATCH' not in db_source


def test_only_known_statements_write_head():
    """HEAD is a relationship; these are the statements that may create or delete it
    (append_message, fork_sibling and draft_reply through the node_write fragment).

    backup_import restores a session exactly as exported (HEAD included); it moves nothing.
    transcript_extend restates the HEAD of the transcript file a session was imported from;
    transcript_import_session, the last statement of a large transcript's import in parts,
    writes its session's first HEAD as backup_import does.
    """
    head_writers = {
        name for name, query in load_queries().items()
        if re.search(r"CREATE \(s\)-\[:HEAD\]", query.text)
    }
    assert head_writers == {"session_create", "append_message", "fork_sibling", "set_head",
                            "delete_branch", "backup_import", "transcript_extend",
                            "carry_write", "draft_reply", "transcript_import_session"}


def test_head_moving_statements_are_run_only_from_the_head_module():
    movers = ("append_message", "fork_sibling", "set_head", "delete_branch", "carry_write",
              "draft_reply")
    users = {
        path.relative_to(SERVICE_DIR).as_posix()
        for path in SERVICE_DIR.rglob("*.py")
        if any(f'"{name}"' in path.read_text() for name in movers)
    }
    assert users == {"store/head.py"}


def test_every_service_package_and_the_statements_are_packaged():
    import tomllib

    root = SERVICE_DIR.parent
    setup = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]

    def folders(top: Path, package: str) -> set[str]:
        """Each folder holding files, as a package (setuptools warns of one not declared)."""
        return {".".join((package, *folder.relative_to(top).parts))
                for folder in (top, *top.rglob("*")) if folder.is_dir()
                and folder.name != "__pycache__" and any(f.is_file() for f in folder.iterdir())}

    assert set(setup["packages"]) == (folders(SERVICE_DIR, "service")
                                      | folders(root / "cypher", "service.cypher")
                                      | folders(root / "ctxdag", "ctxdag"))
    assert setup["package-dir"] == {"service.cypher": "cypher"}
    assert CYPHER_DIR == root / "cypher"  # an editable install reads the repository's files
