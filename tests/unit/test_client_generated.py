"""ctxdag/client/generated is what ariadne-codegen writes from today's schema.graphql and
operations: a schema change that alters what the client's operations read fails here
until `make client` is run and its output committed."""
from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from ctxdag.client import regenerate


def differing(committed: Path, fresh: Path) -> list[str]:
    """Files added, removed or changed between two trees, relative to their roots."""
    found = []
    comparison = filecmp.dircmp(committed, fresh, ignore=["__pycache__"])
    stack = [(comparison, Path())]
    while stack:
        node, where = stack.pop()
        found += [str(where / name) for name in
                  node.left_only + node.right_only + node.diff_files + node.funny_files]
        stack += [(sub, where / name) for name, sub in node.subdirs.items()]
    return sorted(found)


def test_the_committed_client_is_what_the_generator_writes_from_the_schema(tmp_path):
    if not regenerate.CODEGEN.exists():
        pytest.fail(f"{regenerate.CODEGEN} is missing: run `make setup`", pytrace=False)
    regenerate.generate(tmp_path)
    stale = [name for name in differing(regenerate.GENERATED, tmp_path)
             if name != "__init__.py"]
    assert not stale, f"ctxdag/client/generated is stale, run `make client`: {stale}"
