"""The viewer on imported sessions, in headless chromium against the real app (the fixtures
of test_ui_browser.py): a command's coloured output shows without its terminal escapes, a
card's role line never runs into its `#n · tok` label, a capsule counts the turns its
summary covers as Summary.coversIds does (and names the spawned rows it folds besides), a
reply Pi never sent is marked, and the sessions list shows each session's title and source."""
from __future__ import annotations

import json

from tests.integration.test_ui_browser import browser, service, viewer  # noqa: F401

ESC = "\x1b"
IMPORT = ("mutation($c: String!) { importTranscript(content: $c, format: PI) {"
          " session { id graph { nodes { id role outOfContext } } } } }")
SEND = ("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) {"
        " reply { id } } }")


def pi_line(**entry) -> str:
    return json.dumps(entry) + "\n"


def coloured_session(key: str) -> str:
    """A Pi session whose test run prints in colour; the reply calls two tools, one reply is
    aborted."""
    at = "2025-07-04T09:00:0{}.000Z".format
    calls = [{"type": "toolCall", "id": f"call_{i}", "name": "bash",
              "arguments": {"command": "pytest -q"}} for i in (1, 2)]
    lines = [
        pi_line(type="session", version=3, id=key, timestamp=at(0), cwd="/home/dev/shop"),
        pi_line(type="message", id="e1", parentId=None, timestamp=at(1),
                message={"role": "user", "content": "Run the tests twice", "timestamp": 1}),
        pi_line(type="message", id="e2", parentId="e1", timestamp=at(2), message={
            "role": "assistant", "content": calls, "provider": "anthropic", "model": "claude-x",
            "stopReason": "toolUse"}),
    ]
    parent = "e2"
    for i in (1, 2):
        lines.append(pi_line(type="message", id=f"r{i}", parentId=parent, timestamp=at(3),
                             message={"role": "toolResult", "toolCallId": f"call_{i}",
                                      "toolName": "bash", "isError": False, "content": [{
                                          "type": "text", "text": f"{ESC}[32m3 passed{ESC}[0m"
                                          f" in 0.1s {ESC}]0;pytest{ESC}\\done"}]}))
        parent = f"r{i}"
    lines.append(pi_line(type="message", id="e3", parentId=parent, timestamp=at(4), message={
        "role": "assistant", "content": [{"type": "text", "text": "Both runs"}],
        "provider": "anthropic", "model": "claude-x", "stopReason": "aborted"}))
    return "".join(lines)


def imported(service, key: str) -> dict:
    return service.gql(IMPORT, c=coloured_session(key))["importTranscript"]["session"]


def test_command_output_is_shown_without_terminal_escapes(viewer, service):
    session = imported(service, "ui-ansi")
    tool = next(n["id"] for n in session["graph"]["nodes"] if n["role"] == "TOOL")
    viewer.open(session["id"], token=service.token)
    viewer.wait_drawn(tool)
    previews = viewer.js("return [...document.querySelectorAll('#graph .t-prev')]"
                         ".map(e => e.textContent)")
    assert previews and not [p for p in previews if ESC in p]
    viewer.click_node(tool)
    text = viewer.wait(lambda: viewer.js(
        "const e = document.querySelector('#detail .tool-result'); return e && e.textContent"),
        what="the tool result card")
    assert ESC not in text and "3 passed in 0.1s done" in text


def test_a_cards_role_line_ends_before_its_number_and_tokens(viewer, service):
    session = imported(service, "ui-overlap")
    viewer.open(session["id"], token=service.token)
    viewer.wait_drawn(session["graph"]["nodes"][-1]["id"])
    lines = viewer.js("""return [...document.querySelectorAll('#graph g.n')].flatMap(g => {
        const role = g.querySelector(':scope > .t-role'), meta = g.querySelector(':scope > .t-meta');
        if (!role || !meta) return [];
        const r = role.getBoundingClientRect(), m = meta.getBoundingClientRect();
        return [[g.dataset.id, role.textContent, r.right, m.left]];
    })""")
    assert any("TOOL" in text.upper() for _, text, _, _ in lines)
    overlapping = [(i, text, right, left) for i, text, right, left in lines if right > left]
    assert overlapping == []


def test_a_reply_its_tool_never_sent_is_marked(viewer, service):
    session = imported(service, "ui-unsent")
    unsent, = [n["id"] for n in session["graph"]["nodes"] if n["outOfContext"]]
    viewer.open(session["id"], token=service.token)
    viewer.wait_drawn(unsent)
    assert "unsent" in viewer.classes(unsent)


def test_a_capsule_counts_the_turns_its_summary_covers(viewer, service):
    sid = service.gql("mutation { createSession(title: \"spawning\") { id } }")[
        "createSession"]["id"]
    first = service.gql(SEND, s=sid, c="Plan the trip")["sendMessage"]["reply"]["id"]
    service.gql("mutation($s: ID!, $f: ID!) { spawnTask(sessionId: $s, fromNodeId: $f,"
                " prompt: \"Look up trains\") { reply { id } } }", s=sid, f=first)
    for text in ("And hotels?", "And food?", "And museums?"):
        service.gql(SEND, s=sid, c=text)
    compacted = service.gql("mutation($s: ID!) { compact(sessionId: $s, keepRecentTokens: 40)"
                            " { summary { id coversIds } } }", s=sid)["compact"]["summary"]
    rows = service.gql("query($s: ID!) { session(id: $s) { graph { nodes { id coversIds"
                       " sideBranch } } } }", s=sid)["session"]["graph"]["nodes"]
    capsule = next(r for r in rows if r["id"] == compacted["id"])
    spawned = len(capsule["coversIds"]) - len(compacted["coversIds"])
    assert spawned > 0  # the task's rows fold in with the turn that spawned it
    viewer.open(sid, token=service.token)
    viewer.wait_drawn(capsule["id"])
    count = viewer.js("return document.querySelector(`#graph [data-id=\"${arguments[0]}\"]"
                      " .t-count`).textContent", capsule["id"])
    assert count == f"covers {len(compacted['coversIds'])} turns + {spawned} spawned"


def test_the_sessions_list_shows_title_and_source(viewer, service):
    session = imported(service, "ui-listed")
    viewer.open(token=service.token)
    item = viewer.wait(lambda: viewer.js(
        "const e = document.querySelector(`[data-session-id=\"${arguments[0]}\"]`);"
        " let g = e; while (g && !g.classList.contains('project-group')) g = g.previousElementSibling;"
        " return e && [e.querySelector('.s-title').textContent,"
        " e.querySelector('.s-source')?.textContent, g?.textContent]", session["id"]),
        what="the imported session in the list")
    assert item[0] == "πRun the tests twice"  # the tool's badge, then the title
    assert item[1].startswith("pi") and "claude-x" in item[1]
    assert item[2].startswith("shop")  # its project's heading: the directory's last part
