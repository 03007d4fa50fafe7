"""Sessions you can find: what a session carries for its list (tool and version, project,
git branch, models, first and last activity, source file), as imports of each format and
native writes store it, and the sessions list's filters, orders and pages."""
import asyncio
import json
import os
import subprocess
import sys
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from service.errors import BadInput
from service.model import listing
from service.transcripts.batch import import_text
from tests.integration.helpers import run_command, run_cypher, runtime_for

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
CC_SESSION = FIXTURES / "claude_code" / "session.jsonl"
PI_ABORTED = FIXTURES / "pi" / "aborted.jsonl"
CODEX = FIXTURES / "codex" / "rollout-2025-09-14T08-00-00-0199a1b2-codex.jsonl"
FIELDS = ("id title tool toolVersion project gitBranch models firstActivityAt lastActivityAt "
          "sourceFile createdAt")
LIST = """
query ($filter: SessionFilter, $order: SessionOrder, $first: Int, $after: String) {
  sessions(filter: $filter, orderBy: $order, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor } nodes { %s } }
}""" % FIELDS
IMPORT = """mutation ($content: String!, $fileName: String) {
  importTranscript(content: $content, fileName: $fileName) { session { %s } } }""" % FIELDS
CREATE = """mutation ($title: String, $project: String) {
  createSession(title: $title, project: $project) { %s } }""" % FIELDS


def unique() -> str:
    return uuid.uuid4().hex[:10]


async def listed(client, **variables) -> dict:
    return (await client(LIST, **variables))["sessions"]


async def test_a_claude_code_import_carries_its_listing(api):
    project = f"/work/cc-{unique()}"
    text = CC_SESSION.read_text().replace(
        '"cwd": "/work/app"', f'"cwd": "{project}", "gitBranch": "fix/listing"')
    session = (await api.client(IMPORT, content=text, fileName=f"{unique()}.jsonl")
               )["importTranscript"]["session"]
    assert {k: session[k] for k in ("title", "tool", "toolVersion", "project", "gitBranch",
                                    "models", "firstActivityAt", "lastActivityAt")} == {
        "title": "List the files.", "tool": "claude-code", "toolVersion": "2.1.80",
        "project": project, "gitBranch": "fix/listing", "models": ["claude-sonnet-4-5"],
        "firstActivityAt": "2025-06-01T10:00:01+00:00",
        "lastActivityAt": "2025-06-01T10:00:23+00:00"}
    assert session["sourceFile"].endswith(".jsonl")
    page = await listed(api.client, filter={"project": project})
    assert [s["id"] for s in page["nodes"]] == [session["id"]]
    assert page["nodes"][0] == session


async def test_a_pi_import_carries_its_directory_and_models(ledger):
    await import_text(ledger, PI_ABORTED.read_text(), "pi/aborted.jsonl", None)
    [session] = (await ledger.sessions.list()).items
    assert (session.tool, session.tool_version, session.project, session.git_branch,
            session.models, session.source_file) == (
        "pi", None, "/home/dev/projects/shop", None, ("claude-x", "gpt-y"), "pi/aborted.jsonl")
    assert session.first_activity_at == datetime(2025, 7, 3, 9, 0, 2, tzinfo=timezone.utc)
    assert session.last_activity_at == datetime(2025, 7, 3, 9, 0, 8, tzinfo=timezone.utc)


async def test_a_codex_import_carries_its_version_branch_and_model(ledger):
    await import_text(ledger, CODEX.read_text(), CODEX.name, None)
    [session] = (await ledger.sessions.list()).items
    assert (session.title, session.tool, session.tool_version, session.project,
            session.git_branch, session.models, session.source_file) == (
        "List the files and count the lines of a.txt.", "codex", "0.46.0", "/work/app",
        "main", ("gpt-5-codex",), CODEX.name)


async def test_a_grown_file_moves_the_last_activity_and_a_later_model_is_kept(ledger):
    lines = PI_ABORTED.read_text().splitlines(keepends=True)
    await import_text(ledger, "".join(lines[:6]), "grown.jsonl", None)
    [first] = (await ledger.sessions.list()).items
    assert first.last_activity_at == datetime(2025, 7, 3, 9, 0, 5, tzinfo=timezone.utc)
    await import_text(ledger, "".join(lines), "grown.jsonl", None)
    [grown] = (await ledger.sessions.list()).items
    assert grown.last_activity_at == datetime(2025, 7, 3, 9, 0, 8, tzinfo=timezone.utc)
    assert grown.models == ("claude-x", "gpt-y")


async def test_a_session_imported_before_the_listing_gets_it_on_its_next_import(ledger, db):
    await import_text(ledger, CODEX.read_text(), CODEX.name, None)
    [session] = (await ledger.sessions.list()).items
    # Sessions imported before the listing were imported before the file's fingerprint too.
    await run_cypher(db, "MATCH (s:Session {id: $id}) REMOVE s.tool, s.project, s.tool_version,"
                     " s.git_branch, s.source_file, s.source_bytes, s.source_prefix_sha256"
                     " SET s.models = []", id=session.id)
    await import_text(ledger, CODEX.read_text(), CODEX.name, None)
    again = await ledger.sessions.get(session.id)
    assert (again.tool, again.project, again.models) == ("codex", "/work/app", ("gpt-5-codex",))


async def test_a_native_session_carries_its_project_its_models_and_its_last_write(ledger, turns):
    session = await ledger.sessions.create("Native", project="/srv/native")
    assert (session.tool, session.project, session.models, session.source_file) == (
        None, "/srv/native", (), None)
    assert session.first_activity_at == session.last_activity_at == session.created_at
    await turns.record_call(session.id, [session.root_id], "model-a", output="Hello")
    await turns.record_call(session.id, [session.root_id], "model-b")  # no node: a call alone
    await turns.record_call(session.id, [session.root_id], "model-a", output="Again")
    later = await ledger.sessions.get(session.id)
    assert later.models == ("model-a", "model-b")
    assert later.last_activity_at > session.last_activity_at
    assert later.first_activity_at == session.created_at
    plain = await ledger.sessions.create("No project")
    assert plain.project is None


async def test_filters_keep_a_tool_a_project_a_title_and_a_time_range(ledger):
    await import_text(ledger, CODEX.read_text(), CODEX.name, None)
    await import_text(ledger, PI_ABORTED.read_text(), PI_ABORTED.name, None)
    native = await ledger.sessions.create("Checkout notes", project="/home/dev/projects/shop")

    async def titles(**keep) -> list[str]:
        page = await ledger.sessions.list(keep=listing.Filter(**keep), order="last_activity")
        return [s.title for s in page.items]

    assert await titles(tool="codex") == ["List the files and count the lines of a.txt."]
    assert await titles(tool="pi") == ["Fix the failing checkout test"]
    assert await titles(project="/home/dev/projects/shop") == [
        "Checkout notes", "Fix the failing checkout test"]
    assert await titles(text="  CHECKOUT ") == ["Checkout notes", "Fix the failing checkout test"]
    assert await titles(text="count the") == ["List the files and count the lines of a.txt."]
    july = datetime(2025, 7, 1, tzinfo=timezone.utc)
    assert await titles(since=july, until=july + timedelta(days=30)) == [
        "Fix the failing checkout test"]
    assert await titles(until=july) == []
    assert await titles(since=july + timedelta(days=60), until=july + timedelta(days=90)) == [
        "List the files and count the lines of a.txt."]
    assert await titles(since=native.created_at) == ["Checkout notes"]
    assert await titles(tool="pi", text="notes") == []
    assert await ledger.sessions.count(listing.Filter(project="/home/dev/projects/shop")) == 2


async def test_orders_and_pages_by_creation_or_by_last_activity(ledger, turns):
    made = [await ledger.sessions.create(f"s{i}") for i in range(5)]
    # s1 is written to last: first by last activity, fourth by creation.
    await turns.record_call(made[1].id, [made[1].root_id], "m", output="Later")
    by_activity = await ledger.sessions.list(first=2, order="last_activity")
    assert [s.title for s in by_activity.items] == ["s1", "s4"]
    rest = await ledger.sessions.list(first=10, after=by_activity.end_cursor,
                                      order="last_activity")
    assert [s.title for s in rest.items] == ["s3", "s2", "s0"]
    assert (by_activity.has_next, rest.has_next, rest.has_previous) == (True, False, True)
    by_creation = await ledger.sessions.list(first=3)
    assert [s.title for s in by_creation.items] == ["s4", "s3", "s2"]
    tail = await ledger.sessions.list(first=3, after=by_creation.end_cursor)
    assert [s.title for s in tail.items] == ["s1", "s0"]
    last_two = await ledger.sessions.list(last=2, order="last_activity")
    assert [s.title for s in last_two.items] == ["s2", "s0"]


async def test_the_graphql_list_filters_orders_pages_and_counts(api):
    project = f"/work/api-{unique()}"
    ids = [(await api.client(CREATE, title=f"Task {i} {project}", project=project)
            )["createSession"]["id"] for i in range(3)]
    page = await listed(api.client, filter={"project": project}, order="LAST_ACTIVITY", first=2)
    assert [s["id"] for s in page["nodes"]] == ids[::-1][:2]
    assert (page["totalCount"], page["pageInfo"]["hasNextPage"]) == (3, True)
    rest = await listed(api.client, filter={"project": project}, order="LAST_ACTIVITY",
                        first=2, after=page["pageInfo"]["endCursor"])
    assert [s["id"] for s in rest["nodes"]] == [ids[0]]
    found = await listed(api.client, filter={"text": f"task 1 {project}".upper()})
    assert [s["id"] for s in found["nodes"]] == [ids[1]]
    created = await listed(api.client, filter={"project": project}, order="CREATED")
    assert [s["id"] for s in created["nodes"]] == ids[::-1]
    native = created["nodes"][0]
    assert (native["tool"], native["models"], native["sourceFile"]) == (None, [], None)
    assert native["firstActivityAt"] == native["lastActivityAt"] == native["createdAt"]


async def test_a_tenant_lists_only_its_own_sessions(api):
    project = f"/work/mine-{unique()}"
    await api.client(CREATE, title="Mine", project=project)
    assert (await listed(api.other, filter={"project": project}))["nodes"] == []
    assert (await listed(api.other, filter={"project": project}))["totalCount"] == 0
    assert len((await listed(api.client, filter={"project": project}))["nodes"]) == 1


async def test_the_old_sessions_query_still_answers_newest_first(api):
    project = f"/work/old-{unique()}"
    first = (await api.client(CREATE, title="Older", project=project))["createSession"]["id"]
    second = (await api.client(CREATE, title="Newer", project=project))["createSession"]["id"]
    page = (await api.client("{ sessions(first: 2) { nodes { id } } }"))["sessions"]["nodes"]
    assert [s["id"] for s in page] == [second, first]


@pytest.mark.parametrize("keep, order", [
    (listing.Filter(tool=" "), "created"),
    (listing.Filter(project=""), "created"),
    (listing.Filter(text="x" * 201), "created"),
    (listing.Filter(since=datetime(2025, 1, 1)), "created"),
    (listing.Filter(), "oldest"),
])
async def test_a_wrong_filter_or_order_is_bad_input(ledger, keep, order):
    with pytest.raises(BadInput):
        await ledger.sessions.list(keep=keep, order=order)


async def test_a_wrong_project_for_a_new_session_is_bad_input_and_writes_nothing(ledger):
    with pytest.raises(BadInput):
        await ledger.sessions.create("x", project="p" * 5000)
    assert await ledger.sessions.count() == 0


async def test_the_sessions_command_lists_a_project_or_a_tool_last_active_first(
        ledger, db, tenant, capsys):
    await import_text(ledger, CODEX.read_text(), CODEX.name, None)
    await import_text(ledger, PI_ABORTED.read_text(), PI_ABORTED.name, None)
    native = await ledger.sessions.create("Shop notes", project="/home/dev/projects/shop")
    runtime = runtime_for(db, tenant)
    assert await run_command(runtime, "sessions") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "3 sessions"
    assert [line.split()[2] for line in lines[1:]] == ["ctxdag", "codex", "pi"]
    assert lines[1].endswith(f"{native.id}  Shop notes")
    assert await run_command(runtime, "sessions", "--project", "/home/dev/projects/shop",
                             "--tool", "pi", "--json") == 0
    [printed] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {k: printed[k] for k in ("title", "tool", "project", "models", "last_activity_at")
            } == {"title": "Fix the failing checkout test", "tool": "pi",
                  "project": "/home/dev/projects/shop", "models": ["claude-x", "gpt-y"],
                  "last_activity_at": "2025-07-03T09:00:08+00:00"}
    with pytest.raises(BadInput):
        await run_command(runtime, "sessions", "--tool", " ")
    assert await run_command(runtime, "sessions", "--since", "2025-08-01T00:00Z",
                             "--until", "2026-01-01") == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[2] for line in lines[1:]] == ["codex"]
    with pytest.raises(BadInput) as refused:
        await run_command(runtime, "sessions", "--until", "last week")
    assert refused.value.message == ("--until must be an ISO 8601 date or time (2026-01-31, "
                                     "2026-01-31T08:00), not 'last week'")
    deep = await ledger.sessions.create(
        "Storefront", project="/home/dev/projects/clients/acme/storefront-webapp")
    assert await run_command(runtime, "sessions", "--first", "1") == 0
    listed = capsys.readouterr().out.splitlines()[1]
    assert listed.endswith(f"  …/clients/acme/storefront-webapp  {deep.id}  Storefront")
    # A title holding a terminal's control characters is printed with their pictures.
    loud = await ledger.sessions.create("Red \x1b[31malert\x00\x9b", project="/w\x07")
    assert await run_command(runtime, "sessions", "--first", "1") == 0
    listed = capsys.readouterr().out.splitlines()[1]
    assert listed.endswith(f"  {'/w␇':32s}  {loud.id}  Red ␛[31malert␀\ufffd")


async def test_the_sessions_command_takes_a_project_named_from_here_and_names_the_tools(
        ledger, db, tenant, capsys, tmp_path, monkeypatch):
    app = tmp_path / "work" / "app"
    app.mkdir(parents=True)
    here = await ledger.sessions.create("Here", project=str(app))
    await ledger.sessions.create("Elsewhere", project=str(tmp_path / "work"))
    await ledger.sessions.create("Windows", project="C:\\Users\\ada\\app")
    runtime = runtime_for(db, tenant)
    monkeypatch.chdir(app)
    for named in (".", "./", "../app", str(app)):
        capsys.readouterr()
        assert await run_command(runtime, "sessions", "--project", named) == 0
        lines = capsys.readouterr().out.splitlines()
        assert lines[0] == "1 session" and lines[1].endswith(f"{here.id}  Here"), named
    assert await run_command(runtime, "sessions", "--project", "C:\\Users\\ada\\app") == 0
    assert capsys.readouterr().out.splitlines()[1].endswith("  Windows")
    with pytest.raises(BadInput) as refused:
        await run_command(runtime, "sessions", "--tool", "claude")
    assert refused.value.message == "--tool must be one of: claude-code, pi, codex"


async def test_the_sessions_command_reads_past_a_page_of_a_hundred(
        ledger, db, tenant, capsys, neo4j_server):
    made = [await ledger.sessions.create(f"Listed {i}") for i in range(105)]
    newest = [s.id for s in reversed(made)]  # each created after the last
    runtime = runtime_for(db, tenant)
    capsys.readouterr()
    assert await run_command(runtime, "sessions", "--first", "103") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "103 sessions (more: --first N, --all)"
    assert [line.split()[4] for line in lines[1:]] == newest[:103]
    assert await run_command(runtime, "sessions", "--all", "--json") == 0
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == newest
    assert await run_command(runtime, "sessions", "--first", "105") == 0
    assert capsys.readouterr().out.splitlines()[0] == "105 sessions"
    with pytest.raises(BadInput, match="--first must be at least 1"):
        await run_command(runtime, "sessions", "--first", "0")
    # A reader that stops reading (`| head`) ends it quietly, not with a traceback.
    env = {**os.environ, "NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password, "CTXDAG_TENANT": tenant}
    command = subprocess.Popen([sys.executable, "-m", "service.cli", "sessions", "--all"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    command.stdout.close()
    _, err = command.communicate(timeout=120)
    assert (command.returncode, err) == (1, b"")


async def test_a_file_posted_without_a_name_lists_no_source_file(api):
    text = PI_ABORTED.read_text().replace("9b2c-aborted", f"9b2c-{unique()}")
    session = (await api.client(IMPORT, content=text))["importTranscript"]["session"]
    assert (session["tool"], session["sourceFile"]) == ("pi", None)


async def test_concurrent_calls_of_other_models_each_add_theirs(ledger, turns):
    session = await ledger.sessions.create("Busy")
    models = [f"model-{i}" for i in range(6)]
    await asyncio.gather(*(turns.record_call(session.id, [session.root_id], m, output=f"By {m}")
                           for m in models[:3]),
                         *(turns.record_call(session.id, [session.root_id], m) for m in models[3:]))
    assert sorted((await ledger.sessions.get(session.id)).models) == models
