"""The API errors Claude Code writes in its model's place (`isApiErrorMessage`, model
`<synthetic>`): kept in the ledger, marked out of the context, left out of every render,
as the tool leaves them out of every request it sends; the prompts around one merge into
one user message, as the tool merges them."""
from pathlib import Path

from service.store import Ledger, Limits
from service.transcripts import claude_code, model
from service.transcripts.batch import import_text
from tests.integration.helpers import assert_sound
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
API_ERROR = FIXTURES / "claude_code" / "api_error.jsonl"
SESSION_KEY = "api_error"  # the file's stem

IMPORT = """
mutation ($content: String!, $name: String!) {
  importTranscript(content: $content, format: CLAUDE_CODE, fileName: $name) {
    session { id head { id } }
  }
}"""
VIEW = """query ($s: ID!) { session(id: $s) {
  render { nodeIds anthropic: request(format: ANTHROPIC_MESSAGES)
           openai: request(format: OPENAI_CHAT) }
  graph { nodes { id outOfContext } }
} }"""
APPEND = """mutation ($s: ID!) {
  appendMessage(sessionId: $s, role: USER, content: "Try again.") { id } }"""


def ids(tenant: str, *keys: str) -> list[str]:
    return [model.node_id(tenant, claude_code.TOOL, SESSION_KEY, key) for key in keys]


def texts(message: dict) -> list[str]:
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b["type"] if b["type"] != "text" else b["text"] for b in content]


async def test_api_errors_are_kept_but_never_rendered(api):
    imported = (await api.client(IMPORT, content=API_ERROR.read_text(),
                                 name=API_ERROR.name))["importTranscript"]["session"]
    sid = imported["id"]
    ledger = Ledger.open(api.db, api.tenant, Limits())
    await assert_sound(ledger, sid)
    root, u1, a1, r1, x1, u2, a2, u3, x2 = ids(
        api.tenant, model.ROOT_KEY, "u1", "a1", "r1", "x1", "u2", "a2", "u3", "x2")
    assert imported["head"]["id"] == x2  # the file's last entry, as the tool left it
    view = (await api.client(VIEW, s=sid))["session"]
    assert {n["id"] for n in view["graph"]["nodes"] if n["outOfContext"]} == {x1, x2}
    assert view["render"]["nodeIds"] == [root, u1, a1, r1, u2, a2, u3]
    request = view["render"]["anthropic"]
    assert_valid_anthropic(request)
    assert_valid_openai(view["render"]["openai"])
    # What Claude Code sends after "Fix it and commit.": its error is nowhere, and the
    # result before the first error and "Go on." are one user message. (The file names
    # no tool definitions, so its tool blocks are sent as text.)
    assert [(m["role"], [t[:12] for t in texts(m)]) for m in request["messages"]] == [
        ("user", ["Run the tests."[:12]]), ("assistant", ['<tool_use id']),
        ("user", ['<tool_result', "Go on."]),
        ("assistant", ["Two tests fail on the date parser; I'll fix it."[:12]]),
        ("user", ["Fix it and commit."[:12]])]
    errors = await ledger.nodes.get_many([x1, x2])
    assert all(n.out_of_context and n.metadata["model"] == "<synthetic>" for n in errors)

    # The user goes on in ctxdag after the last error: the two prompts are one message.
    await api.client(APPEND, s=sid)
    after = (await api.client(VIEW, s=sid))["session"]["render"]
    assert after["nodeIds"][:-1] == [root, u1, a1, r1, u2, a2, u3]
    assert_valid_anthropic(after["anthropic"])
    assert texts(after["anthropic"]["messages"][-1]) == ["Fix it and commit.", "Try again."]
    await assert_sound(ledger, sid)


async def test_a_synthetic_reply_that_is_no_api_error_is_read(ledger):
    """Claude Code's other replies of its own ("No response requested.") stay in what it
    sends: only the two marks together leave one out."""
    lines = API_ERROR.read_text().splitlines(keepends=True)
    kept = [line.replace('"isApiErrorMessage": true', '"isApiErrorMessage": false')
            for line in lines]
    stored = await import_text(ledger, "".join(kept), "synthetic.jsonl", None)
    await assert_sound(ledger, stored.session_id)
    nodes = await ledger.nodes.get_many([model.node_id(ledger.tenant, claude_code.TOOL,
                                                       "synthetic", "x1")])
    assert not nodes[0].out_of_context
