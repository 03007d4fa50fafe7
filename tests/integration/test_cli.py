"""The `ctxdag` command, run as a user runs it, against the test run's Neo4j."""
import copy
import json
import os
import re
import subprocess
import sys

from service.store import Limits
from service.store.backup import export_session


def ctxdag(server, tenant, *args):
    env = {**os.environ, "NEO4J_URI": server.uri, "NEO4J_USER": server.user,
           "NEO4J_PASSWORD": server.password, "CTXDAG_TENANT": tenant}
    env.pop("ANTHROPIC_API_KEY", None)
    return subprocess.run([sys.executable, "-m", "service.cli", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def test_smoke_render_and_compact_from_the_command_line(neo4j_server, neo4j_driver, tenant):
    smoke = ctxdag(neo4j_server, tenant, "smoke")
    assert smoke.returncode == 0, smoke.stderr
    assert "compaction: COMPACTED" in smoke.stdout and "invariants: ok" in smoke.stdout
    assert "by offline-extractive" in smoke.stdout
    session = re.search(r"session (ses_\w+)", smoke.stdout).group(1)

    render = ctxdag(neo4j_server, tenant, "render", session)
    assert render.returncode == 0, render.stderr
    roles = [line.split()[2] for line in render.stdout.splitlines()[1:]]
    assert roles == ["system", "summary", "user", "assistant"]

    again = ctxdag(neo4j_server, tenant, "compact", session, "--keep", "0")
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("SKIPPED") or again.stdout.startswith("COMPACTED")

    # Undo the smoke's compaction: no summary applies any more, the chain renders verbatim.
    summary = re.search(r"(nod_\w+)\s+summary", render.stdout).group(1)
    undone = ctxdag(neo4j_server, tenant, "uncompact", summary)
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout == (f"retired summary {summary} of session {session}; "
                             "active summary now: none\n")
    verbatim = ctxdag(neo4j_server, tenant, "render", session)
    roles = [line.split()[2] for line in verbatim.stdout.splitlines()[1:]]
    assert "summary" not in roles and len(roles) > 4
    twice = ctxdag(neo4j_server, tenant, "uncompact", summary)
    assert twice.returncode == 2
    assert twice.stderr == f"error: CONFLICT: summary {summary} was already uncompacted\n"


def test_errors_are_coded_and_readable(neo4j_server, neo4j_driver, tenant):
    missing = ctxdag(neo4j_server, tenant, "render", "ses_missing")
    assert missing.returncode == 2
    assert missing.stderr.strip() == "error: NOT_FOUND: session 'ses_missing' does not exist"


def assert_one_error_line(result, line):
    assert result.returncode == 2
    assert result.stderr == f"error: {line}\n"
    assert result.stdout == ""


def test_a_file_that_is_no_backup_is_one_coded_line(neo4j_server, neo4j_driver, tenant,
                                                    tmp_path):
    files = {
        "nested.json": (b"[" * 100_000, "nests too deeply to be read"),
        "binary.json": (b'{"format": "\xff\xfe"}', "is not UTF-8 text (invalid byte at offset 12)"),
        "prose.json": (b"a session, honestly",
                       "is not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        "digits.json": (b"1" * 5_000,
                        "is not valid JSON: an integer of 5000 digits is too long to read"),
        "twice.json": (b'{"format": 1, "format": 2}',
                       "is not valid JSON: an object names a key twice"),
    }
    for name, (data, says) in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert_one_error_line(ctxdag(neo4j_server, tenant, "import", str(path)),
                              f"BAD_INPUT: {path} {says}")


async def test_import_names_the_bad_value_and_only_the_tenant_own_ids(
        neo4j_server, ledger, turns, db, tenant, tmp_path):
    session = await ledger.sessions.create("cli", "sys")
    await turns.send_message(session.id, "Hello.")
    document = await export_session(db, tenant, session.id, Limits())
    user_id = document["nodes"][1]["properties"]["id"]

    def written(name, change=None):
        changed = copy.deepcopy(document)
        if change:
            change(changed["nodes"][1]["properties"])
        path = tmp_path / name
        path.write_text(json.dumps(changed))
        return str(path)

    assert_one_error_line(
        ctxdag(neo4j_server, tenant, "import",
               written("metadata.json", lambda p: p.update(metadata="not json{"))),
        f"BAD_INPUT: node {user_id}: metadata is not valid JSON: "
        "Expecting value: line 1 column 1 (char 0)")
    assert_one_error_line(
        ctxdag(neo4j_server, tenant, "import",
               written("seq.json", lambda p: p.update(seq=2**64))),
        f"BAD_INPUT: node {user_id}: seq is an integer beyond 64 bits, which Neo4j cannot "
        "store")
    backup = written("backup.json")
    assert_one_error_line(ctxdag(neo4j_server, tenant, "import", backup),
                          f"CONFLICT: session {session.id} already exists")
    assert_one_error_line(ctxdag(neo4j_server, tenant + "-other", "import", backup),
                          "CONFLICT: the document's session id is already used by another "
                          "tenant")


async def test_check_names_a_stored_value_the_api_could_not_write(
        neo4j_server, ledger, turns, db, tenant):
    session = await ledger.sessions.create("cli", "sys")
    turn = await turns.send_message(session.id, "Hello.")
    await db.driver.execute_query("MATCH (n:Node {id: $id}) SET n.metadata = 'not json{'",
                                  id=turn.reply.id)
    try:
        check = ctxdag(neo4j_server, tenant, "check")
        assert check.returncode == 1, check.stderr
        assert check.stdout == (f"{session.id}: property: node {turn.reply.id}: metadata is not "
                                "valid JSON: Expecting value: line 1 column 1 (char 0)\n")
        assert check.stderr == "1 of 1 session violates invariants\n"
    finally:
        await db.driver.execute_query(
            "MATCH (x) WHERE x.id = $sid OR x.session_id = $sid DETACH DELETE x",
            sid=session.id)


def test_status_names_an_external_neo4j(neo4j_server, tenant):
    status = ctxdag(neo4j_server, tenant, "neo4j", "status")
    assert status.returncode == 0
    assert neo4j_server.uri in status.stdout


def test_serve_then_demo_shows_capsules_and_trace_prints_a_call(neo4j_server, neo4j_driver,
                                                               tenant):
    import time

    import httpx

    from service.neo4j_local import free_port

    port = free_port()
    env = {**os.environ, "NEO4J_URI": neo4j_server.uri, "NEO4J_USER": neo4j_server.user,
           "NEO4J_PASSWORD": neo4j_server.password, "CTXDAG_TENANT": tenant}
    env.pop("ANTHROPIC_API_KEY", None)
    server = subprocess.Popen([sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(600):  # a loaded machine may take a minute or two to start it
            assert server.poll() is None, "ctxdag serve exited"
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        # The GraphQL endpoint's URL works as well as the base URL.
        demo = ctxdag(neo4j_server, tenant, "demo", "--url", f"{url}/graphql/")
        assert demo.returncode == 0, demo.stderr + demo.stdout
        # A wrong path is one line naming what answered, not a traceback.
        wrong = ctxdag(neo4j_server, tenant, "demo", "--url", f"{url}/nothing")
        assert wrong.returncode == 1
        assert f"demo failed: {url}/nothing/graphql answered HTTP 404" in wrong.stderr
        assert "Traceback" not in wrong.stderr
        assert "2 branches" in demo.stdout and "folds" in demo.stdout
        session = re.search(r"demo session (ses_\w+)", demo.stdout).group(1)
        # It points at the viewer drawing that session, too.
        assert f"open {url}/ui?session={session} " in demo.stdout, demo.stdout
        assert httpx.get(f"{url}/ui?session={session}").status_code == 200
        assert "token" not in demo.stdout
        body = httpx.post(f"{url}/graphql", json={"query": "query($s: ID!) { session(id: $s) {"
                          " calls { id purpose } } }", "variables": {"s": session}}).json()
        chat = [c["id"] for c in body["data"]["session"]["calls"] if c["purpose"] == "CHAT"][-1]
        trace = ctxdag(neo4j_server, tenant, "trace", chat)
        assert trace.returncode == 0, trace.stderr
        assert "summary" in trace.stdout and "today's render" in trace.stdout
        assert ctxdag(neo4j_server, tenant, "replay", chat).stdout == trace.stdout
    finally:
        server.terminate()
        output, _ = server.communicate(timeout=30)
    assert "GraphiQL: http://127.0.0.1:" in output and "Application shutdown complete" in output


def test_demo_without_a_service_is_one_line(neo4j_server, tenant):
    from service.neo4j_local import free_port

    url = f"http://127.0.0.1:{free_port()}"
    result = ctxdag(neo4j_server, tenant, "demo", "--url", url)
    assert result.returncode == 1
    assert result.stderr.startswith(f"demo failed: cannot reach {url}/graphql")
    assert "`ctxdag serve`" in result.stderr and "Traceback" not in result.stderr


async def test_demo_with_a_token_says_how_to_give_the_viewer_one_without_printing_it(
        neo4j_server, tenant, api):
    import asyncio

    token = api.client.token
    demo = await asyncio.to_thread(ctxdag, neo4j_server, tenant, "demo", "--url", api.url,
                                   "--token", token)
    assert demo.returncode == 0, demo.stderr + demo.stdout
    session = re.search(r"demo session (ses_\w+)", demo.stdout).group(1)
    assert f"{api.url}/ui?session={session} " in demo.stdout
    assert "#token=<your token>" in demo.stdout
    assert token not in demo.stdout + demo.stderr


def test_serve_refuses_a_public_address_without_tokens(tenant):
    env = {**os.environ, "CTXDAG_TENANT": tenant, "NEO4J_URI": "bolt://127.0.0.1:1"}
    env.pop("CTXDAG_API_TOKENS", None)
    result = subprocess.run([sys.executable, "-m", "service.cli", "serve", "--host", "0.0.0.0"],
                            env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0 without API tokens" in result.stderr



def ctxdag_with(server, tenant, *args, **env):
    """`ctxdag` as `ctxdag()` runs it, with more settings."""
    return subprocess.run([sys.executable, "-m", "service.cli", *args],
                          env={**os.environ, "NEO4J_URI": server.uri, "NEO4J_USER": server.user,
                               "NEO4J_PASSWORD": server.password, "CTXDAG_TENANT": tenant,
                               "ANTHROPIC_API_KEY": "", **env},
                          capture_output=True, text=True, timeout=120)


def test_a_malformed_setting_is_one_bad_config_line(neo4j_server, tenant, tmp_path):
    missing = tmp_path / "tokens.json"
    cases = [
        (("render", "ses_x"), {"CTXDAG_MAX_CONTENT_BYTES": "lots"},
         "CTXDAG_MAX_CONTENT_BYTES must be an integer of at least 1, got 'lots'"),
        (("neo4j", "status"), {"CTXDAG_NEO4J_PORT": "99999"},
         "CTXDAG_NEO4J_PORT must be an integer from 1 to 65535, got '99999'"),
        (("check",), {"CTXDAG_API_TOKENS": "no-tenant"},
         "CTXDAG_API_TOKENS must look like token=tenant,token2=tenant2 "
         "(an entry has no token or no tenant)"),
        (("serve",), {"CTXDAG_API_TOKENS_FILE": str(missing)},
         f"CTXDAG_API_TOKENS_FILE: cannot read {missing}: No such file or directory"),
        (("smoke",), {"ANTHROPIC_API_KEY": "k", "CTXDAG_ANTHROPIC_TIMEOUT": "0"},
         "CTXDAG_ANTHROPIC_TIMEOUT must be a number of at least 0.001, got '0'"),
    ]
    for args, env, says in cases:
        assert_one_error_line(ctxdag_with(neo4j_server, tenant, *args, **env),
                              f"BAD_CONFIG: {says}")


async def test_admin_commands_use_the_configured_limits(neo4j_server, ledger, turns, tenant):
    session = await ledger.sessions.create("cli", "sys")
    turn = await turns.send_message(session.id, "Hello, this message is longer than 8 bytes.")
    assert ctxdag(neo4j_server, tenant, "check", session.id).returncode == 0
    check = ctxdag_with(neo4j_server, tenant, "check", session.id,
                        CTXDAG_MAX_CONTENT_BYTES="8")
    assert check.returncode == 1, check.stderr
    assert (f"{session.id}: property: node {turn.user_node.id}: content is 43 bytes; the limit "
            "is 8 bytes of UTF-8\n") in check.stdout


async def test_diff_prints_what_a_later_call_read_differently(neo4j_server, ledger, turns,
                                                             compactor, tenant):
    from tests.integration.helpers import KEEP_FOUR, chat, turns as texts

    session = await ledger.sessions.create("diff", "sys")
    first = await turns.send_message(session.id, "First question.")
    await chat(ledger, session, *texts(8))
    summary = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    second = await turns.send_message(session.id, "Second question.")
    diff = ctxdag(neo4j_server, tenant, "diff", first.call_id, second.call_id)
    assert diff.returncode == 0, diff.stderr
    lines = diff.stdout.splitlines()
    assert lines[0].startswith(f"{second.call_id} against {first.call_id}: ")
    assert f"+ {summary.id}" in diff.stdout and f"- {first.user_node.id}" in diff.stdout
    missing = ctxdag(neo4j_server, tenant, "diff", first.call_id, "cal_missing")
    assert_one_error_line(missing, "NOT_FOUND: call 'cal_missing' does not exist")


async def test_compact_dry_run_prints_the_cut_and_the_summary_and_writes_nothing(
        neo4j_server, ledger, tenant):
    from tests.integration.helpers import chat, turns as texts

    session = await ledger.sessions.create("dry run", "sys")
    nodes = await chat(ledger, session, *texts(6))
    before = (await ledger.sessions.get(session.id), await ledger.events.bounds(session.id))
    dry = ctxdag(neo4j_server, tenant, "compact", session.id, "--up-to", nodes[3].id,
                 "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0].startswith("PREVIEWED (nothing written): would cover 4 turns, ")
    assert lines[1] == "covered: " + " ".join(n.id for n in nodes[:4])
    assert lines[2] == "retained: " + " ".join(n.id for n in nodes[4:])
    assert lines[3].startswith("Earlier conversation (offline extractive summary")
    assert (await ledger.sessions.get(session.id), await ledger.events.bounds(session.id)) \
        == before
    real = ctxdag(neo4j_server, tenant, "compact", session.id, "--up-to", nodes[3].id)
    assert real.returncode == 0 and real.stdout.startswith("COMPACTED: summary "), real.stderr
    summary = (await ledger.summaries.get((await ledger.sessions.get(session.id))
                                          .active_summary_id))
    assert "\n".join(lines[3:]) == summary.content
    off = ctxdag(neo4j_server, tenant, "compact", session.id, "--up-to", nodes[0].id,
                 "--dry-run")
    assert_one_error_line(off, f"BAD_INPUT: upTo {nodes[0].id} lies inside the current "
                               f"summary's segment (summary {summary.id} covers it): choose "
                               "a turn after it")


async def test_render_shows_labels_and_branches_lists_names(neo4j_server, ledger, turns,
                                                            tenant):
    session = await ledger.sessions.create(title="cli names")
    first = await turns.send_message(session.id, "First question. Fine.")
    second = await turns.send_message(session.id, "Second question. Good.")
    fork = (await ledger.head.append_message(session.id, "user", "Another way.",
                                             predecessor_id=first.reply.id,
                                             advance_head=False)).node
    await ledger.labels.set(first.user_node.id, "the start")
    await ledger.branch_names.set(second.reply.id, "main line")

    render = ctxdag(neo4j_server, tenant, "render", session.id)
    assert render.returncode == 0, render.stderr
    lines = render.stdout.splitlines()
    assert lines[0].startswith(f"head {second.reply.id} (branch 'main line'): 5 nodes")
    assert lines[2].split()[1:3] == [first.user_node.id, "user"]
    assert "  [the start] First question." in lines[2]
    assert sum("[the start]" in line for line in lines) == 1

    listed = ctxdag(neo4j_server, tenant, "branches", session.id)
    assert listed.returncode == 0, listed.stderr
    rows = listed.stdout.splitlines()
    assert rows[0] == (f"2 branches of session {session.id} (* HEAD is the tip, + HEAD lies "
                       "on the branch)")
    assert rows[1].startswith("* main line ") and second.reply.id in rows[1]
    assert rows[2].startswith("  - ") and fork.id in rows[2] and "verbatim" in rows[2]


async def test_checkout_and_carry_over_from_the_command_line(neo4j_server, ledger, tenant):
    session = await ledger.sessions.create("cli carry", "sys")
    head = ledger.head
    first = [(await head.append_message(session.id, role, text)).node.id
             for role, text in (("user", "Plan A."), ("assistant", "A fails."))]
    await head.set_head(session.id, session.root_id)
    second = [(await head.append_message(session.id, role, text)).node.id
              for role, text in (("user", "Plan B."), ("assistant", "B works."))]

    carried = ctxdag(neo4j_server, tenant, "carry-over", session.id, first[-1], second[-1])
    assert carried.returncode == 0, carried.stderr
    assert carried.stdout.startswith("carry node nod_") and f": {' '.join(first)}\n" in \
        carried.stdout and "HEAD moved onto it" in carried.stdout
    node = re.search(r"carry node (nod_\w+)", carried.stdout).group(1)
    assert (await ledger.sessions.get(session.id)).head_id == node

    left = ctxdag(neo4j_server, tenant, "checkout", session.id, first[-1], "--summarize-left")
    assert left.returncode == 0, left.stderr
    back = re.search(r"carry node (nod_\w+)", left.stdout).group(1)
    assert (await ledger.sessions.get(session.id)).head_id == back
    assert (await ledger.nodes.get(back)).predecessor_id == first[-1]

    plain = ctxdag(neo4j_server, tenant, "checkout", session.id, second[0])
    assert plain.returncode == 0 and plain.stdout == f"HEAD {back} -> {second[0]}\n"
    assert_one_error_line(
        ctxdag(neo4j_server, tenant, "carry-over", session.id, second[0], second[-1]),
        f"BAD_INPUT: nothing to carry from {second[0]} into {second[-1]}: it lies on "
        f"{second[-1]}'s own chain (the same node, an ancestor of it, or ROOT), so no turn "
        "of its branch is missing there")
    assert await ledger.violations(session.id) == []
