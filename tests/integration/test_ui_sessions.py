"""The viewer's sessions list with a thousand sessions, in a real browser (headless
chromium, as tests/integration/test_ui_browser.py): grouped by project, titled, each with
its tool's badge and how long ago it was last active, a page at a time, and a filter box
that keeps the titles holding its text. The sessions are written in one statement for
speed; what the page shows is compared with what the API answers."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import neo4j
import pytest

from tests.browser import Viewer, browser_for_tests, service_with_token

COUNT = 1000
PROJECTS = ["/work/shop", "/work/blog", "/srv/api", None]
TOOLS = ["claude-code", "codex", "pi", None]
# Sessions as the store holds them (cypher/session_create.cypher, plus an import's listing),
# one per row of $rows: written together, as no API call could write a thousand quickly.
BULK = """
UNWIND $rows AS row
CREATE (s:Session {id: row.id, tenant: $tenant, title: row.title, extra_meta: '{}',
  created_at: row.at, updated_at: row.at, next_seq: 1, summary_strategy: 'rolling',
  recall: false, summary_version: 0, meta_version: 0, next_event_seq: 0,
  events_pruned_through: 0, models: row.models, first_activity_at: row.at,
  last_activity_at: row.at})
SET s.tool = row.tool, s.project = row.project
CREATE (r:Node {id: row.root, session_id: row.id, tenant: $tenant, role: 'system',
  content: '', created_at: row.at, tokens: 0, metadata: '{}', seq: 0, depth: 0,
  side_branch: false})
CREATE (s)-[:ROOT]->(r)
CREATE (s)-[:HEAD]->(r)
"""
LISTED = ("return [...document.querySelectorAll('#session-list > li')].map(e => e.dataset.sessionId"
          " ? {id: e.dataset.sessionId, title: e.querySelector('.s-title').textContent,"
          " badge: e.querySelector('.tool-badge').textContent,"
          " when: e.querySelector('.s-when').textContent}"
          " : {project: e.dataset.project, name: e.querySelector('.pg-name').textContent})")
PAGE = """query($after: String, $text: String) {
  sessions(first: 50, after: $after, orderBy: LAST_ACTIVITY, filter: {text: $text}) {
    totalCount pageInfo { endCursor } nodes { id title project tool } } }"""


@pytest.fixture(scope="module")
def service(neo4j_server):
    yield from service_with_token(neo4j_server, "ui-many")


@pytest.fixture(scope="module")
def browser():
    yield from browser_for_tests()


def write_sessions(neo4j_server, tenant: str) -> None:
    """COUNT sessions, the newest last active three hours ago, one minute apart; every
    hundredth titled with a needle."""
    newest = datetime.now(timezone.utc) - timedelta(hours=3)
    rows = [{"id": f"ses_many{i:04d}{uuid.uuid4().hex[:8]}", "root": f"nod_many{uuid.uuid4().hex}",
             "title": f"Task {i}" + (" needle" if i % 100 == 7 else ""),
             "at": newest - timedelta(minutes=i), "tool": TOOLS[i % 4],
             "project": PROJECTS[(i // 3) % 4],
             "models": ["model-x"] if TOOLS[i % 4] else []} for i in range(COUNT)]
    auth = (neo4j_server.user, neo4j_server.password) if neo4j_server.password else None
    with neo4j.GraphDatabase.driver(neo4j_server.uri, auth=auth) as driver:
        driver.execute_query(BULK, rows=rows, tenant=tenant)


def test_a_thousand_sessions_list_by_project_a_page_at_a_time_and_filter(
        browser, service, neo4j_server):
    write_sessions(neo4j_server, service.tenant)
    viewer = Viewer(browser, service)
    first = service.gql(PAGE, after=None, text=None)["sessions"]
    assert first["totalCount"] == COUNT
    viewer.open(token=service.token)
    shown = viewer.wait(lambda: viewer.js(LISTED), what="the sessions list")
    sessions = [e for e in shown if "id" in e]
    assert len(sessions) == 50  # a page, not the thousand
    # Grouped by project, each group where its most recently active session is, the
    # sessions in it last active first.
    groups: dict[str | None, list[str]] = {}
    for s in first["nodes"]:
        groups.setdefault(s["project"], []).append(s["id"])
    heads = [e for e in shown if "project" in e]
    assert [h["project"] or None for h in heads] == list(groups)
    assert [h["name"] for h in heads] == ["shop", "blog", "api", "No project"]
    assert [e["id"] for e in sessions] == [i for ids in groups.values() for i in ids]
    by_id = {s["id"]: s for s in first["nodes"]}
    badges = {"claude-code": "CC", "codex": "CX", "pi": "π", None: "◆"}
    for e in sessions:
        assert e["title"].endswith(by_id[e["id"]]["title"])
        assert e["badge"] == badges[by_id[e["id"]]["tool"]]
    assert sessions[0]["when"] == "3 h ago"
    assert viewer.js("return document.getElementById('session-count').textContent") == "1000"

    viewer.driver.find_element("id", "more-sessions").click()
    viewer.wait(lambda: len([e for e in viewer.js(LISTED) if "id" in e]) == 100,
                what="the second page")
    second = service.gql(PAGE, after=first["pageInfo"]["endCursor"], text=None)["sessions"]
    loaded = {e["id"] for e in viewer.js(LISTED) if "id" in e}
    assert loaded == {s["id"] for s in first["nodes"] + second["nodes"]}

    box = viewer.driver.find_element("id", "session-filter")
    box.send_keys("NEEDLE")
    needles = service.gql(PAGE, after=None, text="needle")["sessions"]
    assert needles["totalCount"] == 10
    viewer.wait(lambda: {e["id"] for e in viewer.js(LISTED) if "id" in e}
                == {s["id"] for s in needles["nodes"]}, what="the filtered list")
    assert viewer.js("return document.getElementById('session-count').textContent") == "10"
    assert viewer.js("return document.getElementById('more-sessions').hidden") is True
    box.send_keys(" nowhere")
    viewer.wait(lambda: viewer.js("return document.querySelector('#session-list .pane-note')"
                                  "?.textContent") == "No session title holds “NEEDLE nowhere”.",
                what="the empty filtered list")
