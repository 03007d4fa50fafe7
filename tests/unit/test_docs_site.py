"""The documentation site builds with `mkdocs build --strict` (mkdocs.yml's validation makes
a broken link, a missing anchor or a page left out of the nav fail it), the README's links
name files that exist, and a runnable marker never silently runs nothing."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_examples import ROOT, BadMarker, documents, examples

# Never --quiet: it hides the warnings that --strict turns into a failure.
MKDOCS = [sys.executable, "-m", "mkdocs", "build", "--strict"]


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MKDOCS, "--config-file", str(config), "--site-dir", str(site)],
                          cwd=config.parent, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_the_site_builds_strictly_with_its_generated_reference(tmp_path):
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ("schema", "cli", "settings", "errors"):
        assert (tmp_path / "site" / "reference" / page / "index.html").is_file(), page
    settings = (tmp_path / "site" / "reference" / "settings" / "index.html").read_text()
    assert "CTXDAG_MAX_QUERY_COST" in settings
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text()
    assert "import-transcript" in cli


def test_a_broken_internal_link_fails_the_build(tmp_path):
    copy = tmp_path / "repo"
    for part in ("docs", "mkdocs.yml", "schema.graphql"):
        source = ROOT / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, copy / part)
    page = copy / "docs" / "getting-started.md"
    page.write_text(page.read_text() + "\nSee [nothing](concepts/no-such-page.md).\n")
    done = _build(copy / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-page.md" in done.stdout + done.stderr


def test_the_readme_links_name_files_that_exist():
    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert local, "the README links into the docs"
    missing = [t for t in local if not (ROOT / t).exists()]
    assert not missing, missing


def test_every_runnable_marker_is_followed_by_a_block_it_can_run(tmp_path):
    for path in documents():
        examples(path)  # raises BadMarker on a marker before no block or another language
    page = tmp_path / "page.md"
    page.write_text("<!-- run -->\n```json\n{}\n```\n")
    with pytest.raises(BadMarker):
        examples(page, root=tmp_path)


def test_every_test_the_docs_name_exists():
    """`tests/…py` and `tests/…py::test_name` in the docs name real files and functions, so
    "where each rule is tested" cannot point at a test that was renamed or removed."""
    named = re.compile(r"(tests/[\w/]+\.py)((?:::\w+)?)")
    missing = []
    for path in documents():
        text = path.read_text()
        for file, test in set(named.findall(text)):
            target = ROOT / file
            if not target.is_file():
                missing.append(f"{path.name}: {file}")
            elif test and not re.search(rf"def {test[2:]}\b", target.read_text()):
                missing.append(f"{path.name}: {file}{test}")
        # `::name` right after another test of the same file: "`::test_x`" in a table cell
        for file, rest in re.findall(r"(tests/[\w/]+\.py)::\w+`((?:, `::\w+`)+)", text):
            for test in re.findall(r"::(\w+)", rest):
                if not re.search(rf"def {test}\b", (ROOT / file).read_text()):
                    missing.append(f"{path.name}: {file}::{test}")
    assert not missing, missing


def test_commands_at_a_glance_name_every_command_of_the_parser():
    import argparse

    from service import cli

    parser = cli._parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    glance = (ROOT / "docs" / "reference" / "commands.md").read_text()
    assert [name for name in commands.choices if f"`ctxdag {name}" not in glance] == []
