"""An imported session's title and source: the tool's own title (else the first prompt),
its version, working directory, project, git branch, models and first and last times, as
each format records them; a grown file moves the last time on, and a title the user set
stays."""
import json
from pathlib import Path

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
CC_SESSION = FIXTURES / "claude_code" / "session.jsonl"
PI_ABORTED = FIXTURES / "pi" / "aborted.jsonl"
CODEX = FIXTURES / "codex" / "rollout-2025-09-14T08-00-00-0199a1b2-codex.jsonl"

IMPORT = """
mutation ($content: String!, $fileName: String) {
  importTranscript(content: $content, fileName: $fileName) {
    outcome session { id title source {
      tool version cwd project gitBranch models firstAt lastAt } } }
}"""
LIST = "{ sessions(first: 100) { edges { node { id title source { tool } } } } }"
RETITLE = """mutation ($s: ID!, $t: String) { updateSession(sessionId: $s, title: $t) { title } }"""


async def imported(api, text: str, name: str) -> dict:
    return (await api.client(IMPORT, content=text, fileName=name))["importTranscript"]


def line(**entry) -> str:
    return json.dumps(entry) + "\n"


async def test_a_claude_code_session_is_titled_by_its_first_prompt_then_its_own_title(api):
    text = CC_SESSION.read_text().replace('"cwd": "/work/app"',
                                          '"cwd": "/work/app", "gitBranch": "fix/listing"')
    first = await imported(api, text, "cc-meta.jsonl")
    assert first["session"]["title"] == "List the files."
    assert first["session"]["source"] == {
        "tool": "claude-code", "version": "2.1.80", "cwd": "/work/app", "project": "app",
        "gitBranch": "fix/listing", "models": ["claude-sonnet-4-5"],
        "firstAt": "2025-06-01T10:00:01+00:00", "lastAt": "2025-06-01T10:00:23+00:00"}
    named = text + line(type="summary", summary="Listing files", leafUuid="u1") \
        + line(type="custom-title", customTitle="Files, listed", sessionId="cc-meta")
    again = await imported(api, named, "cc-meta.jsonl")
    assert (again["outcome"], again["session"]["title"]) == ("EXTENDED", "Files, listed")
    listed = {e["node"]["id"]: e["node"] for e in (await api.client(LIST))["sessions"]["edges"]}
    assert listed[first["session"]["id"]]["title"] == "Files, listed"



async def test_a_session_opened_by_a_slash_command_is_titled_by_it(api):
    # Claude Code records a slash command as tagged text, then its expansion as a message
    # of its own (isMeta): with no prompt typed otherwise, the command is the title.
    common = {"cwd": "/work/shop", "sessionId": "5a1c-command", "version": "2.1.80",
              "userType": "external", "isSidechain": False}
    text = (line(type="user", uuid="c1", parentUuid=None, timestamp="2025-06-02T09:00:00.000Z",
                 message={"role": "user", "content":
                          "<command-message>review</command-message>\n"
                          "<command-name>/review</command-name>\n"
                          "<command-args>the checkout flow</command-args>"}, **common)
            + line(type="user", uuid="c2", parentUuid="c1", isMeta=True,
                   timestamp="2025-06-02T09:00:00.100Z",
                   message={"role": "user", "content": [
                       {"type": "text", "text": "Review the code the user names for bugs."}]},
                   **common)
            + line(type="assistant", uuid="c3", parentUuid="c2",
                   timestamp="2025-06-02T09:00:04.000Z",
                   message={"id": "msg_c3", "role": "assistant", "model": "claude-sonnet-4-5",
                            "type": "message", "stop_reason": "end_turn",
                            "content": [{"type": "text", "text": "The flow looks sound."}]},
                   **common))
    session = (await imported(api, text, "5a1c-command.jsonl"))["session"]
    assert session["title"] == "/review the checkout flow"

async def test_a_pi_session_names_its_directory_and_every_model(api):
    session = (await imported(api, PI_ABORTED.read_text(), PI_ABORTED.name))["session"]
    assert session["title"] == "Fix the failing checkout test"
    assert session["source"] == {
        "tool": "pi", "version": None, "cwd": "/home/dev/projects/shop", "project": "shop",
        "gitBranch": None, "models": ["claude-x", "gpt-y"],
        "firstAt": "2025-07-03T09:00:02+00:00", "lastAt": "2025-07-03T09:00:08+00:00"}


async def test_a_codex_rollout_names_its_version_branch_and_model(api):
    session = (await imported(api, CODEX.read_text(), CODEX.name))["session"]
    assert session["title"] == "List the files and count the lines of a.txt."
    source = session["source"]
    assert (source["tool"], source["version"], source["cwd"], source["gitBranch"],
            source["models"]) == ("codex", "0.46.0", "/work/app", "main", ["gpt-5-codex"])


async def test_growth_moves_the_last_time_and_keeps_a_title_the_user_set(api):
    lines = PI_ABORTED.read_text().replace("9b2c-aborted", "9b2c-grown").splitlines(keepends=True)
    first = (await imported(api, "".join(lines[:6]), "grown.jsonl"))["session"]
    assert first["source"]["lastAt"] == "2025-07-03T09:00:05+00:00"
    renamed = line(type="session_info", id="n1", parentId="e5",
                   timestamp="2025-07-03T09:00:09.000Z", name="Checkout fix")
    grown = (await imported(api, "".join(lines) + renamed, "grown.jsonl"))["session"]
    assert grown["source"]["lastAt"] == "2025-07-03T09:00:08+00:00"
    assert grown["title"] == "Checkout fix"  # the source's title follows the source
    await api.client(RETITLE, s=grown["id"], t="Mine")
    later = line(type="message", id="e6", parentId="n1", timestamp="2025-07-03T09:00:10.000Z",
                 message={"role": "user", "content": "Thanks", "timestamp": 1})
    renamed_again = line(type="session_info", id="n2", parentId="e6",
                         timestamp="2025-07-03T09:00:11.000Z", name="Checkout fixed")
    last = (await imported(api, "".join(lines) + renamed + later + renamed_again,
                           "grown.jsonl"))["session"]
    assert last["title"] == "Mine"
    assert last["source"]["lastAt"] == "2025-07-03T09:00:10+00:00"


async def test_a_native_session_has_no_source(api):
    made = await api.client("mutation { createSession(title: \"mine\") { id source { tool } } }")
    assert made["createSession"]["source"] is None


async def test_a_lone_surrogate_in_a_title_or_fact_is_replaced_not_fatal(api):
    # JSON may spell half a surrogate pair alone (a JavaScript tool's text cut inside an
    # emoji): its block is degraded, and the title and facts made of it show U+FFFD.
    text = (line(type="session", version=3, id="5e1f-lone", timestamp="2026-03-24T20:26:12Z",
                 cwd="/work/caf\\ud83d")
            + line(type="model_change", id="c1", parentId=None,
                   timestamp="2026-03-24T20:26:12.500Z", provider="anthropic",
                   modelId="claude-\\udc00")
            + line(type="message", id="m1", parentId="c1", timestamp="2026-03-24T20:26:13Z",
                   message={"role": "user", "content": "Fix the \\ud83d bug", "timestamp": 1}))
    text = text.replace("\\\\u", "\\u")  # the escapes as the file spells them
    first = await imported(api, text, "lone.jsonl")
    assert first["outcome"] == "NEW"
    assert first["session"]["title"] == "Fix the \ufffd bug"
    assert (first["session"]["source"]["cwd"], first["session"]["source"]["project"],
            first["session"]["source"]["models"]) == \
        ("/work/caf\ufffd", "caf\ufffd", ["claude-\ufffd"])
    named = text + line(type="session_info", id="n1", parentId="m1",
                        timestamp="2026-03-24T20:26:14Z", name="Caf\\udc00").replace("\\\\u", "\\u")
    again = await imported(api, named, "lone.jsonl")
    assert again["session"]["title"] == "Caf\ufffd"
