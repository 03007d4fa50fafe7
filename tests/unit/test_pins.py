"""One Neo4j version everywhere: the Maven launcher, testcontainers and docker compose."""
from pathlib import Path

from service.neo4j_local import NEO4J_VERSION
from tests.neo4j_source import NEO4J_IMAGE

ROOT = Path(__file__).resolve().parents[2]


def test_the_neo4j_version_is_pinned_once_per_way_and_agrees():
    assert NEO4J_VERSION.startswith("5.26.")
    assert NEO4J_IMAGE == f"neo4j:{NEO4J_VERSION}-community"
    compose = (ROOT / "docker" / "docker-compose.yml").read_text()
    assert f"image: {NEO4J_IMAGE}" in compose
    assert "cypher-shell" in compose and "RETURN 1" in compose


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme.split("## Two commands")[1].split("##")[0]
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_the_rust_extension_matches_the_driver():
    """neo4j-rust-ext replaces the driver's packstream codec only for the driver release it
    was built for (docs/benchmarks.md: a long render's client time fell by about a quarter)."""
    from importlib.metadata import version

    from neo4j._codec.packstream import v1

    assert version("neo4j-rust-ext").startswith(version("neo4j") + ".")
    assert v1._rust_unpack is not None  # the driver found the extension and uses it
