"""An imported Claude Code session renders as the tool sends its model the conversation:
- the API errors it writes in its model's place (`isApiErrorMessage`, model `<synthetic>`)
  are kept in the ledger, marked out of the context and left out of every render; the
  prompts around one merge into one user message, as the tool merges them;
- what it sent for its attachment records (hook contexts, queued prompts, edited files:
  the `rendered` copy it keeps) is read on the user's side where the tool puts it."""
import json
from pathlib import Path

from service.store import Ledger, Limits
from service.transcripts import claude_code, model
from service.transcripts.batch import import_text
from service.transcripts.document import SYNTHETIC_PREFIX
from tests.integration.helpers import RENDERED_VIEW as VIEW, assert_sound, run_cypher
from tests.provider_requests import assert_valid_anthropic, assert_valid_openai

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
API_ERROR = FIXTURES / "claude_code" / "api_error.jsonl"
ATTACHMENTS = FIXTURES / "claude_code" / "attachments.jsonl"

IMPORT = """
mutation ($content: String!, $name: String!) {
  importTranscript(content: $content, format: CLAUDE_CODE, fileName: $name) {
    session { id head { id } }
  }
}"""
APPEND = """mutation ($s: ID!) {
  appendMessage(sessionId: $s, role: USER, content: "Try again.") { id } }"""


def ids(tenant: str, *keys: str, file: Path = API_ERROR) -> list[str]:
    return [model.node_id(tenant, claude_code.TOOL, file.stem, key) for key in keys]


def texts(message: dict) -> list[str]:
    content = message["content"]
    if isinstance(content, str):  # texts alone are sent joined by a blank line
        return content.split("\n\n")
    return [b["type"] if b["type"] != "text" else b["text"] for b in content]


async def imported_sound(api, file: Path) -> tuple[dict, Ledger]:
    """The file imported over the API (its session: id, head), checked sound."""
    imported = (await api.client(IMPORT, content=file.read_text(),
                                 name=file.name))["importTranscript"]["session"]
    ledger = Ledger.open(api.db, api.tenant, Limits())
    await assert_sound(ledger, imported["id"])
    return imported, ledger


async def test_api_errors_are_kept_but_never_rendered(api):
    imported, ledger = await imported_sound(api, API_ERROR)
    sid = imported["id"]
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


async def test_what_attachments_gave_the_model_is_read_where_the_tool_puts_it(api):
    imported, ledger = await imported_sound(api, ATTACHMENTS)
    sid = imported["id"]
    root, u1, a3, r1, a4, u2, a5 = ids(
        api.tenant, model.ROOT_KEY, "u1", "a3", "r1", "a4", "u2", "a5", file=ATTACHMENTS)
    assert imported["head"]["id"] == a5  # the Stop hook's context waits for a next message
    view = (await api.client(VIEW, s=sid))["session"]
    assert view["render"]["nodeIds"] == [root, u1, a3, r1, a4, u2, a5]
    request = view["render"]["anthropic"]
    assert_valid_anthropic(request)
    assert_valid_openai(view["render"]["openai"])

    def read(*words):
        return [f"<system-reminder>\n{w}" for w in words]

    expected = [
        # SessionStart's context, then UserPromptSubmit's, written after the prompt and
        # moved above it by the tool: one message
        ("user", read("SessionStart", "UserPromptSubmit") + ["Add a port setting."]),
        # one response, split around its tool's result in the file
        ("assistant", ["Reading the config.", '<tool_use id="toolu_t1"', "It sets port 8080."]),
        # the result, then a PreToolUse context, an edited file and a prompt queued meanwhile
        ("user", ['<tool_result for="toolu_t1"'] + read("PreToolUse", "Note", "The user")),
        ("assistant", ["I'll add both."]), ("user", ["Thanks."]),
        ("assistant", ["You're welcome."])]
    sent = [(m["role"], texts(m)) for m in request["messages"]]
    assert [(role, len(t)) for role, t in sent] == [(role, len(t)) for role, t in expected]
    for (_, got), (_, want) in zip(sent, expected):
        assert all(g.startswith(w) for g, w in zip(got, want)), (got, want)
    tool, = await ledger.nodes.get_many([r1])
    assert [a["type"] for a in tool.metadata["attachments"]] == [
        "hook_additional_context", "edited_text_file", "queued_command"]


def test_a_queued_prompt_of_a_file_without_rendered_copies_is_read_as_typed():
    """Before Claude Code kept what it sent for an attachment, a queued prompt is read as
    its own text; other attachments of such a file give nothing."""
    lines = [json.loads(line) for line in ATTACHMENTS.read_text().splitlines()]
    for line in lines:
        line.pop("rendered", None)
    text = "".join(json.dumps(line) + "\n" for line in lines)
    t = claude_code.parse(text, "older.jsonl")
    tool, = [turn for turn in t.turns if turn.key == "r1"]
    assert [b.get("text") for b in tool.blocks[1:]] == ["Also add a host setting."]
    first, = [turn for turn in t.turns if turn.key == "u1"]
    assert [b["text"] for b in first.blocks] == ["Add a port setting."]
    assert [turn.key for turn in t.turns] == ["u1", "a3", "r1", "a4", "u2", "a5"]


SESSION = FIXTURES / "claude_code" / "session.jsonl"


async def test_what_a_compaction_restores_joins_the_prompt_below_its_summary(ledger, db):
    """Claude Code writes attachments after a compaction's summary (a file it read
    before, restored): they join the next prompt below the summary, which still covers
    exactly the chain it stood for."""
    lines = [json.loads(line) for line in SESSION.read_text().splitlines()]
    at = next(n for n, line in enumerate(lines) if line.get("uuid") == "s1") + 1
    assert lines[at]["uuid"] == "u4" and lines[at]["parentUuid"] == "s1"
    lines[at]["parentUuid"] = "pc1"
    lines.insert(at, {
        "type": "attachment", "uuid": "pc1", "parentUuid": "s1", "isSidechain": False,
        "sessionId": "0b5e7c1e-session", "timestamp": "2025-06-01T10:00:18.500Z",
        "attachment": {"type": "file", "filename": "/work/app/a.txt"},
        "rendered": [{"content": "<system-reminder>\nRead /work/app/a.txt:\nalpha\n"
                                 "</system-reminder>"}]})
    text = "".join(json.dumps(line) + "\n" for line in lines)
    stored = await import_text(ledger, text, SESSION.name, None)
    await assert_sound(ledger, stored.session_id)

    def node(*keys):
        return ids(ledger.tenant, *keys, file=SESSION)

    rendered = await ledger.views.render(stored.session_id)
    assert [n.id for n in rendered.nodes] == node(
        model.ROOT_KEY, "s1", "u4", "a9", "u5", "a10", SYNTHETIC_PREFIX + "a10")
    prompt = rendered.nodes[2]
    assert [b.text for b in prompt.blocks] == [
        "<system-reminder>\nRead /work/app/a.txt:\nalpha\n</system-reminder>",
        "What was the note?"]
    covered = await run_cypher(db, "MATCH (:Node {id: $id})-[:COVERS]->(n) RETURN n.id AS id",
                               id=node("s1")[0])
    assert sorted(row["id"] for row in covered) == sorted(
        node("u1", "a4", "r2", "a5", "u2b", "a7", "u3", "a8"))
