"""Erase a secret, keep the audit (docs/guides/redaction.md), over the API: search finds the
secret, `readBy` shows every call that saw it, `redact` erases it; afterwards search no
longer finds it, renders and replays show the marker, summaries covering it are flagged,
the event is delivered, export and import keep the redaction and `ctxdag check` is clean."""
import json
import uuid

from service.config import Settings
from service.model.redaction import MARKER
from service.store import Database, Ledger, Limits
from service.store.backup import export_session, import_session
from tests.api_client import Client
from tests.app_server import serve
from tests.integration.helpers import broken_sessions, run_command, runtime_for
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai

SECRET = "AKIAQX7SECRET42"
TOOLS = [{"name": "lookup", "inputSchema": {"type": "object", "properties": {
    "word": {"type": "string"}}, "required": ["word"]}}]
SEND = """mutation($s: ID!, $c: String!, $t: [ToolInput!]) {
  sendMessage(sessionId: $s, content: $c, tools: $t) { callId openToolUseIds } }"""
SEARCH = """query($q: String!) { search(query: $q, first: 20) { nodes { node {
  id role readBy(first: 20) { totalCount nodes { id } } } } } }"""
REDACT = """mutation($n: ID!, $r: String!) { redact(nodeId: $n, reason: $r) {
  mayBeQuotedByIds erasedMedia node { id content redaction { reason at mayBeQuotedByIds } } } }"""
EVENTS = """subscription($s: ID!, $a: Int) { sessionEvents(sessionId: $s, after: $a) {
  type ... on NodeRedacted { nodeId reason summaryIds } } }"""


async def test_an_analyst_finds_a_secret_sees_who_read_it_and_erases_it(neo4j_driver):
    run = uuid.uuid4().hex[:8]
    tenant, plain, redactor = f"redact-{run}", f"plain-{run}", f"redactor-{run}"
    settings = Settings.from_env({"CTXDAG_API_TOKENS": f"{plain}={tenant}",
                                  "CTXDAG_REDACT_TOKENS": f"{redactor}={tenant}"})
    database = Database(neo4j_driver)
    async with serve(settings, database) as url:
        user, admin = Client(url, plain), Client(url, redactor)
        s = (await user("mutation { createSession(title: \"keys\") { id } }"))["createSession"]["id"]
        await user(SEND, s=s, c=f"My key is {SECRET}. Keep it safe.")
        opened = (await user(SEND, s=s, c=f"Please lookup {SECRET} now.", t=TOOLS))["sendMessage"]
        tool_use_id, = opened["openToolUseIds"]
        await user("""mutation($s: ID!, $u: String!, $c: String!, $t: [ToolInput!]) {
          submitToolResults(sessionId: $s, results: [{toolUseId: $u, content: $c}], tools: $t)
          { callId } }""", s=s, u=tool_use_id, c=f"{SECRET} belongs to ci-deploy", t=TOOLS)
        for i in range(3):
            await user(SEND, s=s, c=f"Unrelated question {i}.")
        compaction = (await user("""mutation($s: ID!) { compact(sessionId: $s,
          keepRecentTokens: 60) { summary { id coversIds } } }""", s=s))["compact"]
        summary_id = compaction["summary"]["id"]
        last_call = (await user(SEND, s=s, c="And one more."))["sendMessage"]["callId"]

        # Search finds every node holding the secret, and who read each.
        hits = (await user(SEARCH, q=SECRET))["search"]["nodes"]
        found = {h["node"]["id"]: h["node"] for h in hits}
        assert len(found) >= 4  # the question, its echo, the tool call, its result, …
        first = next(h["node"] for h in hits if h["node"]["role"] == "USER")
        readers = first["readBy"]
        assert readers["totalCount"] >= 2 and len(readers["nodes"]) == readers["totalCount"]
        old_call = readers["nodes"][-1]["id"]  # the oldest call that saw it

        # Only a redacting token may redact; bad input is coded and writes nothing.
        assert [e["extensions"]["code"] for e in await user.errors(
            REDACT, n=first["id"], r="leaked key")] == ["FORBIDDEN"]
        assert [e["extensions"]["code"] for e in await admin.errors(
            REDACT, n=first["id"], r="  ")] == ["BAD_INPUT"]
        assert [e["extensions"]["code"] for e in await admin.errors(
            REDACT, n="nod_none", r="leaked key")] == ["NOT_FOUND"]
        assert (await user("query($n: ID!) { node(id: $n) { ... on Message { content } } }",
                           n=first["id"]))["node"]["content"].count(SECRET) == 1

        before = (await user("query($s: ID!) { session(id: $s) { lastEventSeq } }",
                             s=s))["session"]["lastEventSeq"]
        quoting = set()
        turns_found = [i for i, n in found.items() if n["role"] != "SUMMARY"]
        assert summary_id in found  # the offline summary quotes the turns it covers
        for node_id in turns_found:
            done = (await admin(REDACT, n=node_id, r="leaked AWS key"))["redact"]
            assert done["node"]["content"].count(MARKER) >= 1
            assert SECRET not in done["node"]["content"]
            assert done["node"]["redaction"]["reason"] == "leaked AWS key"
            quoting |= set(done["mayBeQuotedByIds"])
        assert [e["extensions"]["code"] for e in await admin.errors(
            REDACT, n=first["id"], r="again")] == ["CONFLICT"]

        # The event announces each redaction, naming what may quote it.
        events = [p["data"]["sessionEvents"] for p in await user.subscribe(
            EVENTS, {"s": s, "a": before}, len(turns_found))]
        assert {e["nodeId"] for e in events} == set(turns_found)
        assert all(e["type"] == "NODE_REDACTED" and e["reason"] == "leaked AWS key"
                   for e in events)
        summary = (await user("""query($n: ID!) { node(id: $n) { ... on Message {
          mayQuoteRedactedIds summary { mayQuoteRedactedIds redaction { reason } } } } }""",
                              n=summary_id))["node"]
        # The summary covers them and may quote them: it is flagged until it is redacted too.
        assert summary_id in quoting and summary_id in events[0]["summaryIds"]
        assert first["id"] in summary["mayQuoteRedactedIds"]
        assert summary["summary"]["mayQuoteRedactedIds"] == summary["mayQuoteRedactedIds"]
        assert [h["node"]["id"] for h in (await user(SEARCH, q=SECRET))["search"]["nodes"]] \
            == [summary_id]
        quoted_before = (await user("""query($n: ID!) { node(id: $n) { ... on Message {
          redaction { mayBeQuotedByIds } } } }""", n=first["id"]))["node"]["redaction"]
        assert summary_id in quoted_before["mayBeQuotedByIds"]
        await admin(REDACT, n=summary_id, r="its summary quoted the key")
        summary = (await user("""query($n: ID!) { node(id: $n) { ... on Message { content
          mayQuoteRedactedIds summary { redaction { reason } } } } }""", n=summary_id))["node"]
        assert summary["content"] == MARKER and summary["mayQuoteRedactedIds"] == []
        assert summary["summary"]["redaction"]["reason"] == "its summary quoted the key"

        # Search no longer finds it; readBy still names every call that saw it.
        assert (await user(SEARCH, q=SECRET))["search"]["nodes"] == []
        again = (await user("""query($n: ID!) { node(id: $n) { ... on Message {
          readBy(first: 20) { totalCount } redaction { mayBeQuotedByIds } } } }""",
                            n=first["id"]))["node"]
        assert again["readBy"]["totalCount"] == readers["totalCount"]
        assert again["redaction"]["mayBeQuotedByIds"] == []  # nothing left quoting it

        # Renders hold the marker in its place, as valid provider requests.
        for head in (None, opened_head(hits)):
            render = (await user("""query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) {
              nodeIds a: request(format: ANTHROPIC_MESSAGES) o: request(format: OPENAI_CHAT)
              } } }""", s=s, h=head))["session"]["render"]
            text = json.dumps(render)
            assert SECRET not in text
            assert_valid_anthropic(render["a"])
            assert_valid_openai(render["o"])
        assert MARKER in text

        # A replay of an old call that read it shows the marker, not the secret; so does a
        # turn after the redaction (no remembered render holds the old text).
        for call_id in (old_call, last_call):
            replay = (await user("""query($c: ID!) { call(id: $c) { replay { messages }
              reads { id redaction { reason } } } }""", c=call_id))["call"]
            assert SECRET not in json.dumps(replay)
        assert MARKER in json.dumps(
            (await user("query($c: ID!) { call(id: $c) { replay { messages } } }",
                        c=old_call))["call"]["replay"]["messages"])
        after = (await user(SEND, s=s, c="What did I tell you first?"))["sendMessage"]["callId"]
        sent = (await user("query($c: ID!) { call(id: $c) { inputTokens reads { tokens } } }",
                           c=after))["call"]
        # The offline model counts the tokens of the nodes it was sent: those as redacted.
        assert sent["inputTokens"] == sum(r["tokens"] for r in sent["reads"])

    # ctxdag check is clean; export and import keep the redaction.
    assert await run_command(runtime_for(database, tenant), "check") == 0
    document = await export_session(database, tenant, s, Limits())
    assert SECRET not in json.dumps(document)
    copy = f"{tenant}-copy"
    await database.driver.execute_query(
        "MATCH (n {session_id: $s}) DETACH DELETE n WITH count(*) AS gone "
        "MATCH (x:Session {id: $s}) DETACH DELETE x", {"s": s})
    assert await import_session(database, copy, document, Limits()) == s
    imported = await Ledger.open(database, copy, Limits()).nodes.get(first["id"])
    assert imported.content == MARKER and imported.redaction.reason == "leaked AWS key"
    assert await broken_sessions(database, Limits(), copy) == {}


def opened_head(hits) -> str:
    """The tool result among the hits: a head whose render holds the redacted tool pair
    verbatim (the summary's segment is not all on its chain)."""
    return next(h["node"]["id"] for h in hits if h["node"]["role"] == "TOOL")

