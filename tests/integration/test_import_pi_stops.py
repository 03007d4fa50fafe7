"""Pi's aborted and errored replies: kept in the ledger (marked out of the context), left
out of every render, as Pi leaves them out of what its model reads; a tool message
answering one goes with it, so a render never holds a result without its tool use."""
from pathlib import Path

from service.store import Ledger, Limits
from service.transcripts import model
from service.transcripts.batch import import_text
from tests.integration.helpers import RENDERED_VIEW as VIEW, assert_sound, run_cypher
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
PI_ABORTED = FIXTURES / "pi" / "aborted.jsonl"
SESSION_KEY = "9b2c-aborted"

IMPORT = """
mutation ($content: String!) {
  importTranscript(content: $content, format: PI) { session { id } }
}"""


def ids(tenant: str, *keys: str) -> list[str]:
    return [model.node_id(tenant, "pi", SESSION_KEY, key) for key in keys]


async def test_aborted_and_errored_replies_are_kept_but_never_rendered(api):
    imported = await api.client(IMPORT, content=PI_ABORTED.read_text())
    sid = imported["importTranscript"]["session"]["id"]
    ledger = Ledger.open(api.db, api.tenant, Limits())
    await assert_sound(ledger, sid)
    view = (await api.client(VIEW, s=sid))["session"]
    root, = [n["id"] for n in view["graph"]["nodes"]
             if n["id"] == model.node_id(api.tenant, "pi", SESSION_KEY, model.ROOT_KEY)]
    assert view["render"]["nodeIds"] == [root, *ids(api.tenant, "e1", "e3", "e5")]
    assert_valid_anthropic(view["render"]["anthropic"])
    assert_valid_openai(view["render"]["openai"])
    marked = {n["id"] for n in view["graph"]["nodes"] if n["outOfContext"]}
    assert marked == set(ids(api.tenant, "e2", "e2r", "e4"))
    nodes = await ledger.nodes.get_many(ids(api.tenant, "e2", "e4"))
    assert [n.metadata["stopReason"] for n in nodes] == ["aborted", "error"]
    assert all(n.out_of_context for n in nodes)


async def test_check_names_a_tool_message_read_after_a_reply_left_out(ledger, db):
    sid = (await import_text(ledger, PI_ABORTED.read_text(), PI_ABORTED.name, None)).session_id
    await assert_sound(ledger, sid)
    tool, = ids(ledger.tenant, "e2r")
    await run_cypher(db, "MATCH (n:Node {id: $id}) REMOVE n.out_of_context", id=tool)
    found = await ledger.violations(sid)
    assert any("out of the context" in v and tool in v for v in found), found
