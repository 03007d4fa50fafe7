"""The service as a user installs it: a wheel, in a fresh virtualenv, away from this checkout."""
from __future__ import annotations

import re
import shutil
import subprocess
import time
import sys
import zipfile
from pathlib import Path

import httpx
import pytest

from service.neo4j_local import free_port

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The wheel built from a copy of this checkout, what the build printed, and the copy."""
    tmp_path = tmp_path_factory.mktemp("wheel")
    source = tmp_path / "source"  # a build writes build/ beside the sources: keep it out of ROOT
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "*.egg-info", ".pytest_cache", "__pycache__", "results"))
    done = run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
               str(tmp_path / "dist"), str(source), cwd=tmp_path)
    return next((tmp_path / "dist").glob("ctxdag-*.whl")), done.stdout + done.stderr, source


def files_under(folder: Path, as_package: str) -> set[str]:
    return {f"{as_package}/{path.relative_to(folder).as_posix()}"
            for path in folder.rglob("*") if path.is_file()}


def test_the_wheel_holds_every_file_of_the_package_and_builds_silently(built):
    wheel, printed, source = built
    with zipfile.ZipFile(wheel) as archive:
        files = {name for name in archive.namelist() if ".dist-info/" not in name}
    # cypher/ (with fragments/ and migrations/) ships as service.cypher; the viewer, the
    # vendored GraphiQL and the Neo4j launcher inside service/; the client as ctxdag/.
    expected = files_under(source / "service", "service") | files_under(source / "cypher",
                                                                         "service/cypher") \
        | files_under(source / "ctxdag", "ctxdag")
    assert files == expected, (sorted(expected - files), sorted(files - expected))
    assert any(name.startswith("service/cypher/fragments/") for name in files)
    assert any(name.startswith("service/cypher/migrations/") for name in files)
    # setuptools tells of a folder it was not told to ship in a warning box a newcomer sees.
    assert not re.search(r"warning|absent|would be ignored", printed, re.I), printed


def test_a_wheel_installed_in_a_fresh_venv_serves(tmp_path, built, neo4j_server):
    wheel = built[0]
    venv = tmp_path / "venv"
    run(sys.executable, "-m", "venv", str(venv), cwd=tmp_path)
    run(str(venv / "bin" / "pip"), "install", "--quiet", str(wheel), cwd=tmp_path)

    statements = run(str(venv / "bin" / "python"), "-c",
                     "from service.store.queries import CYPHER_DIR, packaged_queries;"
                     "print(CYPHER_DIR); print(len(packaged_queries()))",
                     cwd=tmp_path).stdout.split()
    assert Path(statements[0]).is_relative_to(venv), statements
    assert int(statements[1]) == len(list((ROOT / "cypher").glob("*.cypher")))

    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [str(venv / "bin" / "ctxdag"), "serve", "--port", str(port)], cwd=tmp_path,
        stdout=log, stderr=subprocess.STDOUT,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "NEO4J_URI": neo4j_server.uri,
             "NEO4J_USER": neo4j_server.user, "NEO4J_PASSWORD": neo4j_server.password,
             "CTXDAG_TENANT": "wheel"})
    try:
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(timeout=30) as http:
            for _ in range(300):
                assert server.poll() is None, (tmp_path / "serve.log").read_text()
                try:
                    if http.get(f"{url}/healthz").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.2)
            # GraphiQL's page and the files it loads come from the installed package.
            page = http.get(f"{url}/graphql", headers={"Accept": "text/html"}).text
            assets = re.findall(r'(?:src|href)="(/graphql/static/[^"]+)"', page)
            assert len(assets) == 4, page
            for asset in assets:
                served = http.get(f"{url}{asset}")
                assert served.status_code == 200 and len(served.content) > 10_000, asset
            # So do the viewer's page and its modules.
            viewer = http.get(f"{url}/ui").text
            modules = re.findall(r'(?:src|href)="(/ui/assets/[^"]+)"', viewer)
            assert modules, viewer
            for module in modules:
                assert http.get(f"{url}{module}").status_code == 200, module
            created = http.post(f"{url}/graphql", json={
                "query": "mutation { createSession(title: \"from a wheel\") { id } }"}).json()
            sid = created["data"]["createSession"]["id"]
            turn = http.post(f"{url}/graphql", json={
                "query": "mutation($s: ID!) { sendMessage(sessionId: $s, content: \"hi\")"
                         " { reply { role } } }", "variables": {"s": sid}}).json()
        assert turn["data"]["sendMessage"]["reply"]["role"] == "ASSISTANT", turn
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
