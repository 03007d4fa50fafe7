"""The capsule viewer (/ui) in a real browser: headless chromium (selenium + chromedriver)
against the real app on a real Neo4j. The data is written through GraphQL, the checks
compare what the page draws with what the API says (the capsule contract: `foldedInto`,
`drawnFromId`, `coversIds`), never with a folding rule of the test's own.

A missing chromium or chromedriver fails these tests (with how to install them)."""
from __future__ import annotations

import time
import uuid

import pytest

from tests.browser import WINDOW, LiveService, Viewer, browser_for_tests, service_with_token

GRAPH = ("query($s: ID!) { session(id: $s) { headId activeSummaryId summaryStrategy"
         " branches { tip { id } isHead summaryId }"
         " graph { nodes { id role seq predecessorId isHead coversIds supersededSummary"
         " foldedInto drawnFromId } } } }")
SEND = ("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c) {"
        " userNode { id } reply { id } } }")
COMPACT = ("mutation($s: ID!, $k: Int) { compact(sessionId: $s, keepRecentTokens: $k) {"
           " status summary { id coversIds } } }")


@pytest.fixture(scope="module")
def service(neo4j_server):
    yield from service_with_token(neo4j_server, "ui-tenant")


@pytest.fixture(scope="module")
def browser():
    yield from browser_for_tests()


@pytest.fixture
def viewer(browser, service) -> Viewer:
    return Viewer(browser, service)


def graph_of(service: LiveService, session: str) -> dict:
    view = service.gql(GRAPH, s=session)["session"]
    view["rows"] = {r["id"]: r for r in view["graph"]["nodes"]}
    return view


def kind_of(row: dict) -> str:
    if row["coversIds"]:
        return "capsule"
    return "relic" if row["role"] == "SUMMARY" else "node"


def folded_into(rows: dict, capsule: str) -> list[str]:
    """What expanding `capsule` shows, by the contract: its coversIds that fold into it."""
    return [i for i in rows[capsule]["coversIds"] if rows[i]["foldedInto"] == capsule]


def shown_as(rows: dict, node_id: str, expanded: set[str] = frozenset()) -> str:
    """The drawn element standing for a node: itself, or the collapsed capsule it folds into."""
    capsule = rows[node_id]["foldedInto"]
    return node_id if capsule is None or capsule in expanded else capsule


def members(viewer: Viewer, capsule: str) -> list[str]:
    return viewer.js("return [...document.querySelectorAll("
                     "`#graph [data-folded-in=\"${arguments[0]}\"]`)].map(e => e.dataset.id)",
                     capsule)


def assert_drawn_as_the_contract_says(viewer: Viewer, rows: dict, expanded: set[str]) -> None:
    """Every row with foldedInto null is drawn, as its kind; a folded row is drawn only
    inside its expanded capsule, in coversIds order; nothing else is drawn."""
    drawn = viewer.drawn()
    inside = {capsule: members(viewer, capsule) for capsule in expanded}
    top = {i: k for i, k in drawn.items() if not any(i in m for m in inside.values())}
    assert top == {i: kind_of(r) for i, r in rows.items() if r["foldedInto"] is None}
    for capsule, shown in inside.items():
        assert shown == folded_into(rows, capsule)
    for capsule in (i for i, r in rows.items() if r["coversIds"]):
        assert ("expanded" in viewer.classes(capsule)) == (capsule in expanded)


def wait_live(viewer: Viewer) -> None:
    viewer.wait(lambda: viewer.live() == "live", 30, "#live-status to read 'live'")
    time.sleep(0.6)  # the service registers the subscription after reading the session


def test_the_viewer_folds_highlights_renders_and_follows_the_demo_session(viewer, service):
    session = service.demo()  # a fork, a tool call, two compactions, a spawned task
    view = graph_of(service, session)
    rows, capsule = view["rows"], view["activeSummaryId"]
    assert view["summaryStrategy"] == "rolling" and rows[capsule]["coversIds"]

    # The token arrives once in the fragment; the page keeps it and removes it from the URL.
    viewer.open(session, token=service.token)
    viewer.wait(lambda: capsule in viewer.drawn(), what="the session to draw")
    viewer.console()  # from here on, the console stays free of errors
    assert viewer.js("return location.hash") == ""
    assert viewer.js("return location.search") == f"?session={session}"
    assert viewer.js("return sessionStorage.getItem('ctxdag.token')") == service.token
    viewer.wait(lambda: viewer.js("return document.querySelector(`#session-list"
                                  " .selected[data-session-id=\"${arguments[0]}\"]`) !== null",
                                  session), what="the session selected in the list")

    # Collapsed by default: the capsule is drawn, everything folding into it is not.
    assert viewer.drawn()[capsule] == "capsule"
    assert_drawn_as_the_contract_says(viewer, rows, expanded=set())
    assert not set(rows[capsule]["coversIds"]) & set(viewer.drawn())
    relics = [i for i, r in rows.items() if r["supersededSummary"]]
    assert relics and all(viewer.drawn()[i] == "relic" for i in relics)
    assert "head" in viewer.classes(view["headId"])

    # Expanding shows exactly its coversIds rows, in that order; a second click folds them.
    viewer.click_node(capsule)
    viewer.wait(lambda: "expanded" in viewer.classes(capsule), what="the capsule to open")
    assert members(viewer, capsule) == rows[capsule]["coversIds"]
    assert_drawn_as_the_contract_says(viewer, rows, expanded={capsule})
    viewer.click_node(capsule)
    viewer.wait(lambda: "expanded" not in viewer.classes(capsule), what="the capsule to fold")
    assert_drawn_as_the_contract_says(viewer, rows, expanded=set())

    # A call's reads: exactly those nodes light up, the capsule standing in for folded ones.
    calls = service.gql("query($s: ID!) { session(id: $s) { modelCalls(first: 50) {"
                        " nodes { id purpose readIds } } } }", s=session)
    calls = calls["session"]["modelCalls"]["nodes"]
    listed = viewer.js("return [...document.querySelectorAll('[data-call-id]')]"
                       ".map(e => e.dataset.callId)")
    assert listed == [c["id"] for c in reversed(calls)]  # newest first
    chat = max((c for c in calls if c["purpose"] == "CHAT"),
               key=lambda c: sum(rows[i]["foldedInto"] is not None for i in c["readIds"]))
    assert any(rows[i]["foldedInto"] for i in chat["readIds"])
    viewer.click_call(chat["id"])
    expected = {shown_as(rows, i) for i in chat["readIds"]}
    viewer.wait(lambda: viewer.highlighted() == expected,
                what=f"the highlight to be {expected} (it is {viewer.highlighted()})")
    assert capsule in expected
    # Opened, the capsule shows the folded reads themselves.
    viewer.click_node(capsule)
    expected = {shown_as(rows, i, {capsule}) for i in chat["readIds"]}
    viewer.wait(lambda: viewer.highlighted() == expected,
                what=f"the highlight to be {expected} (it is {viewer.highlighted()})")
    viewer.click_node(capsule)
    viewer.wait(lambda: "expanded" not in viewer.classes(capsule), what="the capsule to fold")

    # A node lists the calls that read it.
    read_node = next(i for i in reversed(chat["readIds"])
                     if rows[i]["foldedInto"] is None and rows[i]["role"] != "SUMMARY")
    readers = service.gql("query($n: ID!) { node(id: $n) { ... on Message { readBy(first: 20)"
                          " { edges { node { id } } } } } }", n=read_node)
    readers = [e["node"]["id"] for e in readers["node"]["readBy"]["edges"]]
    viewer.click_node(read_node)
    listed_readers = ("return [...document.querySelectorAll('#detail [data-read-call]')]"
                      ".map(e => e.dataset.readCall)")
    viewer.wait(lambda: viewer.js(listed_readers) == readers, what="the calls that read the node")

    # A tip's render, in prompt order, with the summary stand-in marked and highlighted.
    for tip in view["branches"]:
        tip_id = tip["tip"]["id"]
        render = service.gql("query($s: ID!, $h: ID) { session(id: $s) { render(headId: $h) {"
                             " nodeIds summaryId } } }", s=session, h=tip_id)
        render = render["session"]["render"]
        assert render["summaryId"] == tip["summaryId"]
        viewer.click_node(tip_id)
        want = [{"id": i, "summary": i == render["summaryId"]} for i in render["nodeIds"]]
        viewer.wait(lambda: viewer.render_rows() == want,
                    what=f"the render of {tip_id} in #render-panel")
        highlight = {shown_as(rows, i) for i in render["nodeIds"]}
        viewer.wait(lambda: viewer.highlighted() == highlight, what="the render highlighted")
    assert any(t["summaryId"] == capsule for t in view["branches"])

    # Live: a turn and a compaction written meanwhile appear without a reload.
    viewer.js("window.__notReloaded = true")
    wait_live(viewer)
    turn = service.gql(SEND, s=session, c="One more thing: is the Uffizi open on Mondays?")
    turn = turn["sendMessage"]
    for node in (turn["userNode"]["id"], turn["reply"]["id"]):
        viewer.wait_drawn(node, timeout=20)
    viewer.wait(lambda: "head" in viewer.classes(turn["reply"]["id"]), what="HEAD to move")
    compaction = service.gql(COMPACT, s=session, k=60)["compact"]
    assert compaction["status"] == "COMPACTED"
    fresh = compaction["summary"]["id"]
    viewer.wait(lambda: viewer.drawn().get(fresh) == "capsule", what="the new capsule")
    viewer.wait(lambda: viewer.drawn().get(capsule) == "relic", what="the old capsule a relic")
    assert viewer.js("return window.__notReloaded") is True
    assert_drawn_as_the_contract_says(viewer, graph_of(service, session)["rows"], set())
    assert viewer.live() == "live"
    assert viewer.console("SEVERE") == []


def test_the_viewer_draws_every_capsule_of_the_branch_strategy(viewer, service):
    """Under `branch`, two branches render two summaries: both are capsules, and the turns
    they share fold into the smaller one (the server says which)."""
    session = service.gql("mutation { createSession(title: \"Branch capsules\", systemPrompt:"
                          " \"You are terse.\", summaryStrategy: \"branch\") { id } }")
    session = session["createSession"]["id"]
    turns = [service.gql(SEND, s=session, c=f"Question {i}: " + "tell me more. " * 12)
             ["sendMessage"] for i in range(5)]
    assert service.gql(COMPACT, s=session, k=150)["compact"]["status"] == "COMPACTED"
    service.gql("mutation($s: ID!, $n: ID!) { checkout(sessionId: $s, nodeId: $n) { id } }",
                s=session, n=turns[3]["reply"]["id"])
    for i in range(3):
        service.gql(SEND, s=session, c=f"Fork question {i}: " + "and the other option? " * 8)
    assert service.gql(COMPACT, s=session, k=150)["compact"]["status"] == "COMPACTED"
    view = graph_of(service, session)
    rows = view["rows"]
    capsules = [i for i, r in rows.items() if r["coversIds"]]
    assert len(capsules) == 2 and len({b["summaryId"] for b in view["branches"]}) == 2

    # Without a token the page asks for one, keeps it for the tab, and goes on.
    viewer.open()
    viewer.js("sessionStorage.clear()")
    viewer.open(session)
    viewer.wait(lambda: viewer.js("return document.getElementById('auth').open"),
                what="the token dialog")
    viewer.driver.find_element("id", "auth-token").send_keys(service.token)
    viewer.driver.find_element("css selector", "#auth-form button[type=submit]").click()
    viewer.wait(lambda: set(capsules) <= set(viewer.drawn()), what="both capsules")
    assert viewer.js("return sessionStorage.getItem('ctxdag.token')") == service.token
    assert_drawn_as_the_contract_says(viewer, rows, expanded=set())
    for capsule in capsules:
        viewer.click_node(capsule)
        viewer.wait(lambda: "expanded" in viewer.classes(capsule), what="the capsule to open")
    assert_drawn_as_the_contract_says(viewer, rows, expanded=set(capsules))
    assert all(members(viewer, c) for c in capsules)


def test_the_viewer_draws_a_capsule_per_segment_of_the_segmented_strategy(viewer, service):
    """Under `segmented`, three compactions write three summaries over disjoint segments of
    one chain, all standing in: three capsules, each folding its own segment's rows alone
    (the third written while the page is open); the render panel marks every stand-in."""
    session = service.gql("mutation { createSession(title: \"Segmented capsules\", systemPrompt:"
                          " \"You are terse.\", summaryStrategy: \"segmented\") { id } }")
    session = session["createSession"]["id"]
    segments = []

    def segment(k: int) -> None:
        for i in range(4):
            service.gql(SEND, s=session, c=f"Question {k}.{i}: " + "tell me more. " * 12)
        compaction = service.gql(COMPACT, s=session, k=150)["compact"]
        assert compaction["status"] == "COMPACTED", compaction
        segments.append(compaction["summary"])

    segment(0)
    segment(1)
    viewer.open(session, token=service.token)
    viewer.wait(lambda: {s["id"] for s in segments} <= set(viewer.drawn()), what="two capsules")
    viewer.console()
    wait_live(viewer)
    segment(2)
    capsules = [s["id"] for s in segments]
    viewer.wait(lambda: viewer.drawn().get(capsules[2]) == "capsule", what="the third capsule")

    head = service.gql("query($s: ID!) { session(id: $s) { headId render { nodeIds } } }",
                       s=session)["session"]
    assert head["render"]["nodeIds"][1:4] == capsules  # [ROOT, S1, S2, S3, tail]
    rows = graph_of(service, session)["rows"]
    assert [i for i, r in rows.items() if r["coversIds"]] == capsules
    for summary in segments:
        assert rows[summary["id"]]["coversIds"] == summary["coversIds"]
        assert folded_into(rows, summary["id"]) == summary["coversIds"]
    # The segments hang one below the other: each one's first row from the capsule before.
    for before, summary in zip(capsules, segments[1:]):
        assert rows[summary["coversIds"][0]]["drawnFromId"] == before
    assert [viewer.drawn()[c] for c in capsules] == ["capsule"] * 3
    assert_drawn_as_the_contract_says(viewer, rows, expanded=set())
    # Each capsule opens on its own segment's rows, in chain order, the others staying shut.
    for capsule, summary in zip(capsules, segments):
        viewer.click_node(capsule)
        viewer.wait(lambda: "expanded" in viewer.classes(capsule), what="the capsule to open")
        assert members(viewer, capsule) == summary["coversIds"]
        assert_drawn_as_the_contract_says(viewer, rows, expanded={capsule})
        viewer.click_node(capsule)
        viewer.wait(lambda: "expanded" not in viewer.classes(capsule), what="the capsule to fold")
    for capsule in capsules:
        viewer.click_node(capsule)
        viewer.wait(lambda: "expanded" in viewer.classes(capsule), what="the capsule to open")
    assert_drawn_as_the_contract_says(viewer, rows, expanded=set(capsules))

    # The head's render: each of the three stand-ins is marked as one.
    viewer.click_node(head["headId"])
    want = [{"id": i, "summary": i in capsules} for i in head["render"]["nodeIds"]]
    viewer.wait(lambda: viewer.render_rows() == want, what="the render with its three stand-ins")
    folds = sum(len(s["coversIds"]) for s in segments)
    assert f"3 summaries stand in for {folds} rows" in viewer.js(
        "return document.getElementById('render-head').textContent")
    assert viewer.console("SEVERE") == []


def test_a_thousand_node_session_draws(viewer, service, request):
    """One graph request and one SVG: a 1,000-node session (a long chain with forks and a
    spawned task) draws, then a compaction's capsule with ~900 rows opens. The timings are
    reported, not asserted (beyond a generous bound)."""
    session = service.gql("mutation { createSession(title: \"A thousand nodes\") { id rootId } }")
    session, root = session["createSession"]["id"], session["createSession"]["rootId"]
    append = ("appendMessage(sessionId: $s, role: {role}, content: \"{text}\"{extra}) {{ id }}")
    ids: list[str] = []
    started = time.monotonic()
    while len(ids) < 998:
        batch = [f"m{j}: " + append.format(
            role="USER" if (len(ids) + j) % 2 == 0 else "ASSISTANT",
            text=f"Turn {len(ids) + j}: a line of conversation long enough to preview.",
            extra="") for j in range(min(20, 998 - len(ids)))]
        data = service.gql(f"mutation($s: ID!) {{ {' '.join(batch)} }}", s=session)
        ids += [data[f"m{j}"]["id"] for j in range(len(batch))]
    # Forks off earlier turns (HEAD stays at the tip).
    for k in range(1, 10):
        pred = ids[k * 100]
        service.gql("mutation($s: ID!, $p: ID!) { appendMessage(sessionId: $s, role: ASSISTANT,"
                    " content: \"Another answer.\", predecessorId: $p) { id } }", s=session, p=pred)
    written = time.monotonic() - started
    count = len(graph_of(service, session)["rows"])
    assert count >= 1000

    started = time.monotonic()
    viewer.open(session, token=service.token)
    viewer.wait(lambda: len(viewer.drawn()) == count, 30, f"all {count} nodes to draw")
    loaded = time.monotonic() - started
    page = viewer.js("const g = document.getElementById('graph').dataset;"
                     " return [Number(g.fetchMs), Number(g.layoutMs)]")
    assert viewer.js("return document.querySelectorAll('#graph [data-id]').length") == count
    assert root in viewer.drawn()

    compaction = service.gql(COMPACT, s=session, k=4000)["compact"]
    assert compaction["status"] == "COMPACTED"
    capsule = compaction["summary"]["id"]
    viewer.open(session, token=service.token)
    viewer.wait(lambda: viewer.drawn().get(capsule) == "capsule", 30, "the capsule")
    rows = graph_of(service, session)["rows"]
    started = time.monotonic()
    viewer.click_node(capsule)
    viewer.wait(lambda: len(members(viewer, capsule)) == len(folded_into(rows, capsule)), 30,
                "the capsule to open")
    opened = time.monotonic() - started
    assert_drawn_as_the_contract_says(viewer, rows, expanded={capsule})

    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    line = (f"\n1,000-node session: {count} nodes written in {written:.1f} s; page load to all "
            f"drawn {loaded * 1000:.0f} ms (graph request {page[0]:.0f} ms, layout + SVG "
            f"{page[1]:.0f} ms); a capsule of {len(folded_into(rows, capsule))} rows opened in "
            f"{opened * 1000:.0f} ms")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)
    print(line)


def test_the_sessions_list_pages_last_active_first_and_a_link_opens_a_session(viewer, service):
    for i in range(57):
        service.gql("mutation($t: String) { createSession(title: $t) { id } }", t=f"Listed {i}")
    newest = service.gql("query { sessions(first: 100, orderBy: LAST_ACTIVITY) {"
                         " totalCount nodes { id title } } }")
    total, newest = newest["sessions"]["totalCount"], newest["sessions"]["nodes"]
    listed = ("return [...document.querySelectorAll('#session-list [data-session-id]')]"
              ".map(e => e.dataset.sessionId)")
    viewer.open(token=service.token)
    viewer.wait(lambda: viewer.js(listed), what="the sessions list")
    first_page = viewer.js(listed)
    assert first_page == [s["id"] for s in newest[:len(first_page)]] and len(first_page) < total
    viewer.driver.find_element("id", "more-sessions").click()
    viewer.wait(lambda: len(viewer.js(listed)) > len(first_page), what="the next page")
    assert viewer.js(listed) == [s["id"] for s in newest[:len(viewer.js(listed))]]

    # Picking one draws it and names it in the URL, so the link opens it again.
    pick = newest[3]["id"]
    viewer.driver.find_element("css selector", f'[data-session-id="{pick}"]').click()
    viewer.wait(lambda: viewer.js("return location.search") == f"?session={pick}",
                what="the URL to name the session")
    root = service.gql("query($s: ID!) { session(id: $s) { rootId } }", s=pick)
    viewer.wait_drawn(root["session"]["rootId"])
    link = viewer.js("return location.href")
    viewer.driver.get("about:blank")
    viewer.driver.get(link)
    viewer.wait_drawn(root["session"]["rootId"])


SPILLED = ("const canvas = document.querySelector('.canvas').getBoundingClientRect();"
           " return [...document.querySelectorAll('.canvas-bar input, .canvas-bar button,"
           " .canvas-bar label')].filter(e => { const r = e.getBoundingClientRect();"
           " return r.width && (r.left < canvas.left || r.right > canvas.right); })"
           ".map(e => e.id || e.textContent.trim())")


def test_a_laptops_width_wraps_the_graph_controls_inside_the_canvas(viewer, service):
    session = service.gql("mutation { createSession(title: \"Narrow\") { id rootId } }")
    viewer.open(session["createSession"]["id"], token=service.token)
    viewer.wait_drawn(session["createSession"]["rootId"])
    wide = viewer.driver.get_window_size()
    try:
        for width in (1024, 1280, 1400):
            viewer.driver.set_window_size(wide["width"] - WINDOW[0] + width, wide["height"])
            viewer.wait(lambda: viewer.js("return window.innerWidth") == width,
                        what=f"a window {width} px wide")
            assert viewer.js(SPILLED) == [], f"controls outside the canvas at {width} px"
    finally:
        viewer.driver.set_window_size(wide["width"], wide["height"])


def png(width: int, height: int) -> str:
    """A real PNG of one colour, base64: the service reads its size from the header."""
    import base64
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    raw = b"".join(b"\x00" + b"\xd9\x77\x06" * width for _ in range(height))
    body = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return base64.b64encode(body).decode()


APPEND_BLOCKS = ("mutation($s: ID!, $r: Role!, $b: [ContentBlockInput!]!) {"
                 " appendMessage(sessionId: $s, role: $r, blocks: $b) { id } }")
CARDS = ("return [...document.querySelectorAll(`${arguments[0]} .blk[data-tool-use]`)].map(e =>"
         " ({use: e.dataset.toolUse, kind: e.classList.contains('tool-use') ? 'use' : 'result',"
         " error: e.classList.contains('is-error'), row: e.closest('[data-id]')?.dataset.id,"
         " name: e.querySelector('.blk-name')?.textContent || null}))")


def test_the_viewer_draws_an_agent_session_and_its_tool_pairs_through_a_compaction(viewer, service):
    """Tool calls are cards naming their tool and input, each result card names the call it
    answers (an error drawn as one), thinking is collapsed, an image is a thumbnail; the
    graph marks the pair's edge; a click on a card selects the pair; after a compaction the
    pair folds into the capsule whole, and no render the page shows holds half of one."""
    session = service.gql("mutation { createSession(title: \"Agent session\", systemPrompt:"
                          " \"You are an agent.\") { id } }")["createSession"]["id"]

    def append(role: str, *blocks: dict) -> str:
        return service.gql(APPEND_BLOCKS, s=session, r=role, b=list(blocks))["appendMessage"]["id"]

    image = png(8, 6)
    ask = append("USER", {"text": {"text": "What is in this picture, and is it on the shelf?"}},
                 {"image": {"source": {"base64": {"mediaType": "image/png", "data": image}}}})
    calls = append("ASSISTANT",
                   {"thinking": {"thinking": "The user wants two lookups; run them in parallel.",
                                 "signature": "sig-abc"}},
                   {"text": {"text": "Let me check both."}},
                   {"toolUse": {"id": "toolu_a1", "name": "describe_image", "input": {"detail": "high"}}},
                   {"toolUse": {"id": "toolu_a2", "name": "stock_lookup", "input": {"sku": "ORANGE-8"}}})
    results = append("TOOL",
                     {"toolResult": {"toolUseId": "toolu_a1", "content": "An orange square."}},
                     {"toolResult": {"toolUseId": "toolu_a2", "content": "stock service timed out",
                                     "isError": True}})
    answer = append("ASSISTANT", {"text": {"text": "An orange square; stock is unknown for now."}})
    for i in range(3):
        service.gql(SEND, s=session, c=f"Follow-up {i}: " + "what else should I know? " * 6)

    viewer.open(session, token=service.token)
    viewer.wait(lambda: answer in viewer.drawn(), what="the agent session to draw")
    viewer.console()
    assert "calls-tools" in viewer.classes(calls)
    assert "answers-tools" in viewer.classes(results)
    pair_edges = viewer.js("return document.querySelectorAll('#graph .e.e-pair').length")
    assert pair_edges == 1
    role_line = ("return document.querySelector(`#graph [data-id=\"${arguments[0]}\"]"
                 " .t-role`).textContent")
    assert "2 tool calls" in viewer.js(role_line, calls)
    assert "2 results" in viewer.js(role_line, results)

    # The render from the tool results' message: both halves of each pair, named alike.
    viewer.click_node(results)
    viewer.wait(lambda: [r["id"] for r in viewer.render_rows()][-1:] == [results],
                what="the render of the results' message")
    cards = viewer.js(CARDS, "#render-panel")
    assert cards == [
        {"use": "toolu_a1", "kind": "use", "error": False, "row": calls, "name": "describe_image"},
        {"use": "toolu_a2", "kind": "use", "error": False, "row": calls, "name": "stock_lookup"},
        {"use": "toolu_a1", "kind": "result", "error": False, "row": results, "name": "describe_image"},
        {"use": "toolu_a2", "kind": "result", "error": True, "row": results, "name": "stock_lookup"},
    ]
    assert '"sku": "ORANGE-8"' in viewer.js(
        "return document.querySelector('#render-panel [data-tool-use=\"toolu_a2\"] .blk-json').textContent")
    thinking = viewer.js("const d = document.querySelector('#render-panel details.thinking');"
                         " return d && {open: d.open, text: d.textContent}")
    assert thinking["open"] is False and "run them in parallel" in thinking["text"]
    thumb = viewer.js("const i = document.querySelector(`#render-panel [data-id=\"${arguments[0]}\"]"
                      " img.thumb`); return i && {src: i.src.slice(0, 22), w: i.naturalWidth,"
                      " caption: i.closest('figure').textContent}", ask)
    assert thumb["src"] == "data:image/png;base64," and "8×6" in thumb["caption"]
    viewer.wait(lambda: viewer.js("return document.querySelector(`#render-panel [data-id=\"${arguments[0]}\"]"
                                  " img.thumb`).naturalWidth", ask) == 8, what="the thumbnail to load")

    # A click on a result selects its call too, and lights both messages in the drawing.
    viewer.driver.find_element(
        "css selector", '#render-panel .tool-result[data-tool-use="toolu_a2"] .blk-head').click()
    selected = ("return [...document.querySelectorAll('#render-panel .pair-selected')]"
                ".map(e => e.dataset.toolUse + ':' + e.closest('[data-id]').dataset.id)")
    viewer.wait(lambda: viewer.js(selected) == [f"toolu_a2:{calls}", f"toolu_a2:{results}"],
                what="the pair selected")
    viewer.wait(lambda: viewer.highlighted() == {calls, results}, what="the pair highlighted")

    # The detail card of the call names where it is answered, and draws its cards.
    viewer.click_node(calls)
    viewer.wait(lambda: viewer.js("return document.querySelector('#detail .pair-links [data-goto]')"
                                  "?.dataset.goto") == results, what="the call's detail card")
    assert [c["use"] for c in viewer.js(CARDS, "#detail")] == ["toolu_a1", "toolu_a2"]

    # A compaction covers the pair whole: it folds into the capsule, both halves together.
    compaction = service.gql(COMPACT, s=session, k=120)["compact"]
    assert compaction["status"] == "COMPACTED"
    capsule = compaction["summary"]["id"]
    assert {calls, results} <= set(compaction["summary"]["coversIds"])
    viewer.wait(lambda: viewer.drawn().get(capsule) == "capsule", what="the capsule")
    rows = graph_of(service, session)["rows"]
    assert rows[calls]["foldedInto"] == rows[results]["foldedInto"] == capsule
    assert_drawn_as_the_contract_says(viewer, rows, expanded=set())
    viewer.click_node(capsule)
    viewer.wait(lambda: "expanded" in viewer.classes(capsule), what="the capsule to open")
    assert_drawn_as_the_contract_says(viewer, rows, expanded={capsule})

    # Every head the page renders holds whole pairs only.
    head = service.gql("query($s: ID!) { session(id: $s) { headId } }", s=session)["session"]["headId"]
    for node in (head, results, calls):
        viewer.click_node(node)
        viewer.wait(lambda: [r["id"] for r in viewer.render_rows()][-1:] == [node],
                    what=f"the render of {node}")
        shown = viewer.js(CARDS, "#render-panel")
        uses = [c["use"] for c in shown if c["kind"] == "use"]
        answered = [c["use"] for c in shown if c["kind"] == "result"]
        assert all(u in uses for u in answered), (node, shown)
        if node != calls:  # only a head that is the call itself leaves its calls open
            assert sorted(uses) == sorted(answered), (node, shown)
    open_pills = viewer.js("return [...document.querySelectorAll('#render-panel .p-open')].length")
    assert open_pills == 2  # rendered from the call: both of its tool uses open
    assert viewer.console("SEVERE") == []


def test_labels_and_branch_names_are_drawn_found_and_filtered(viewer, service):
    """A label is a tag on its card, a named branch's tip carries the name; the finder
    highlights what matches a label, a name or the text (Enter goes to the next); the
    labeled-only filter dims everything else; a label set live is drawn without a reload."""
    session = service.gql("mutation { createSession(title: \"Labels\") { id } }"
                          )["createSession"]["id"]
    turns = [service.gql(SEND, s=session, c=f"Question {i}: tell me about topic {i}.")
             ["sendMessage"] for i in range(3)]
    first, last = turns[0]["userNode"]["id"], turns[-1]["reply"]["id"]
    service.gql("mutation($n: ID!) { label(nodeId: $n, text: \"decision: use Neo4j\") { id } }",
                n=first)
    service.gql("mutation($n: ID!) { nameBranch(tipId: $n, name: \"main line\") { name } }",
                n=last)

    viewer.open(session, token=service.token)
    viewer.wait(lambda: last in viewer.drawn(), what="the session to draw")
    tag = ("return [...document.querySelectorAll(`#graph [data-id=\"${arguments[0]}\"] .tag`)]"
           ".map(t => [t.classList[1], t.querySelector('text').textContent])")
    assert viewer.js(tag, first) == [["t-label", "decision: use Neo4j"]]
    assert viewer.js(tag, last) == [["t-branch", "⎇ main line"]]
    assert "labeled" in viewer.classes(first) and "labeled" in viewer.classes(last)
    assert "labeled" not in viewer.classes(turns[1]["userNode"]["id"])

    # The finder: a label, then a branch name, then text found in two previews.
    finder = "const f = document.getElementById('find'); f.value = arguments[0];" \
             " f.dispatchEvent(new Event('input'));"
    viewer.js(finder, "NEO4J")
    viewer.wait(lambda: viewer.highlighted() == {first}, what="the label to be found")
    assert viewer.js("return document.getElementById('find-count').textContent") == "1 of 1"
    viewer.js(finder, "main")
    viewer.wait(lambda: viewer.highlighted() == {last}, what="the branch name to be found")
    viewer.js(finder, "topic 1")
    previews = service.gql("query($s: ID!) { session(id: $s) { graph { nodes { id preview } } } }",
                           s=session)["session"]["graph"]["nodes"]
    found = {n["id"] for n in previews if "topic 1" in n["preview"].lower()}
    assert turns[1]["userNode"]["id"] in found and first not in found
    viewer.wait(lambda: viewer.highlighted() == found, what="the text to be found")
    viewer.js(finder, "nothing like this")
    viewer.wait(lambda: viewer.js("return document.getElementById('find-count').textContent")
                == "none", what="no match")
    viewer.js(finder, "")
    viewer.wait(lambda: viewer.highlighted() == set(), what="the finder to clear")

    # Labeled only: the unlabeled cards are dimmed, the labeled and the HEAD are not.
    viewer.js("const c = document.getElementById('labeled-only'); c.click();")
    opacity = ("return getComputedStyle(document.querySelector("
               "`#graph [data-id=\"${arguments[0]}\"]`)).opacity")
    assert float(viewer.js(opacity, turns[1]["reply"]["id"])) < 0.5
    assert float(viewer.js(opacity, first)) == 1.0 and float(viewer.js(opacity, last)) == 1.0

    # A label written while the page is open is drawn from the event.
    wait_live(viewer)
    middle = turns[1]["reply"]["id"]
    service.gql("mutation($n: ID!) { label(nodeId: $n, text: \"open question\") { id } }",
                n=middle)
    viewer.wait(lambda: viewer.js(tag, middle) == [["t-label", "open question"]],
                what="the new label to be drawn live")
    assert float(viewer.js(opacity, middle)) == 1.0
    viewer.js("document.getElementById('labeled-only').click();")
    assert viewer.console("SEVERE") == []


SEARCH = ("query($q: String!) { search(query: $q, first: 20) { nodes { sessionId sessionTitle"
          " snippet highlights { start end } context { state summaryId }"
          " node { id role readBy(first: 1) { totalCount } } } } }")
HITS = ("return [...document.querySelectorAll('#search-results .search-hit')].map(b => ({"
        " node: b.dataset.nodeId, session: b.dataset.hitSession, state: b.dataset.state,"
        " title: b.querySelector('.sh-session').textContent,"
        " badge: b.querySelector('.sh-state').textContent,"
        " reads: b.querySelector('.sh-reads').textContent,"
        " snippet: b.querySelector('.sh-snippet').textContent,"
        " marks: [...b.querySelectorAll('mark')].map(m => m.textContent),"
        " elements: [...b.querySelectorAll('.sh-snippet *')].map(e => e.tagName) }))")


def test_the_search_box_finds_hits_across_sessions_and_opens_one_lit(viewer, service):
    """The search box lists what `search` answers — session, role, snippet with its matches
    marked, the hit's state at HEAD and its readers — as text (markup in a message stays
    text); a click (or Enter after the arrow keys) opens the hit's session with the node
    highlighted and selected, the capsule folding it opened."""
    from selenium.webdriver.common.keys import Keys

    word = f"zq{uuid.uuid4().hex[:8]}"
    alpha = service.gql("mutation { createSession(title: \"Search alpha\") { id } }"
                        )["createSession"]["id"]
    early = service.gql(SEND, s=alpha, c=f"Decide the {word} schema first.")["sendMessage"]
    for i in range(4):
        service.gql(SEND, s=alpha, c=f"Question {i}: " + "tell me more. " * 12)
    assert service.gql(COMPACT, s=alpha, k=150)["compact"]["status"] == "COMPACTED"
    late = service.gql(SEND, s=alpha, c=f"And the {word} index later.")["sendMessage"]
    beta = service.gql("mutation($t: String) { createSession(title: $t) { id } }",
                       t="Beta <i>notes</i>")["createSession"]["id"]
    markup = f"{word} <img src=x onerror=\"window.__pwned=1\"><b>bold</b>"
    service.gql(SEND, s=beta, c=markup)
    view = graph_of(service, alpha)
    capsule = view["rows"][early["userNode"]["id"]]["foldedInto"]
    assert capsule in view["rows"] and view["rows"][capsule]["coversIds"]

    expected = service.gql(SEARCH, q=word)["search"]["nodes"]
    by_node = {h["node"]["id"]: h for h in expected}
    summarized, verbatim = early["userNode"]["id"], late["userNode"]["id"]
    assert by_node[summarized]["context"]["state"] == "SUMMARIZED"
    assert by_node[verbatim]["context"]["state"] == "IN_CONTEXT"
    assert {h["sessionId"] for h in expected} == {alpha, beta}

    viewer.open(beta, token=service.token)
    viewer.wait(lambda: viewer.drawn(), what="the session to draw")
    viewer.console()
    box = viewer.driver.find_element("id", "search")
    box.send_keys(word, Keys.ENTER)
    viewer.wait(lambda: len(viewer.js(HITS)) == len(expected), what="the hits to be listed")
    shown = viewer.js(HITS)
    assert [h["node"] for h in shown] == [h["node"]["id"] for h in expected]
    for hit, want in zip(shown, expected):
        context = want["context"]
        assert hit["session"] == want["sessionId"] and hit["title"] == want["sessionTitle"]
        assert hit["state"] == context["state"]
        reads = want["node"]["readBy"]["totalCount"]
        assert hit["reads"] == (f"read by {reads} call{'s' if reads != 1 else ''}"
                                if reads else "read by no call")
        assert hit["snippet"] == want["snippet"]
        assert hit["marks"] and all(m.lower() == word for m in hit["marks"])
        assert hit["marks"] == [want["snippet"][r["start"]:r["end"]] for r in want["highlights"]]
        assert hit["elements"] == ["MARK"] * len(hit["marks"])  # nothing else is markup
    badges = {h["node"]: h["badge"] for h in shown}
    assert badges[verbatim] == "in context"
    prefix = "summarized by "
    assert badges[summarized].startswith(prefix)
    assert by_node[summarized]["context"]["summaryId"].startswith(badges[summarized][len(prefix):])
    injected = next(h for h in shown if h["session"] == beta and h["snippet"].startswith(word))
    assert "<b>bold</b>" in injected["snippet"] and "<img" in injected["snippet"]
    assert next(h for h in shown if h["session"] == beta)["title"] == "Beta <i>notes</i>"
    assert viewer.js("return window.__pwned === undefined"
                     " && !document.querySelector('#search-results img, #search-results b,"
                     " #search-results i')")

    # A click on the summarized turn opens its session, the capsule folding it opened.
    viewer.driver.find_element(
        "css selector", f'#search-results [data-node-id="{summarized}"]').click()
    viewer.wait(lambda: viewer.js("return location.search") == f"?session={alpha}",
                what="the hit's session to open")
    viewer.wait(lambda: viewer.highlighted() == {summarized}, what="the hit to be lit")
    assert "expanded" in viewer.classes(capsule)
    assert "selected" in viewer.classes(summarized)
    assert summarized in members(viewer, capsule)

    # The keyboard: ↓ from the box through the hits, Enter opens one.
    box.click()
    box.send_keys(Keys.ARROW_DOWN)
    for _ in range([h["node"] for h in shown].index(verbatim)):
        viewer.driver.switch_to.active_element.send_keys(Keys.ARROW_DOWN)
    assert viewer.js("return document.activeElement.dataset.nodeId") == verbatim
    viewer.driver.switch_to.active_element.send_keys(Keys.ENTER)
    viewer.wait(lambda: viewer.highlighted() == {verbatim}, what="the verbatim hit to be lit")
    assert "selected" in viewer.classes(verbatim)
    assert viewer.console("SEVERE") == []
