"""Search on Neo4j's own full-text index (issue 33): what it finds — English and Chinese
text, thinking, tool calls and results, summaries, labels, session titles — only in its
tenant, and where each hit stands in the model's context at a head."""
import pytest

from service.errors import BadInput, NotFound
from service.model.kinds import Role
from service.search import Field, Filters, State, search
from service.store import Ledger, Limits
from tests.integration.helpers import KEEP_FOUR, chat, run_cypher, tool_results, tool_uses, turns


async def _find(ledger, text, **filters):
    page = await search(ledger, text, Filters(**filters))
    return page.hits


async def _ids(ledger, text, **filters):
    return [h.node.id for h in await _find(ledger, text, **filters)]


async def test_english_and_chinese_text_is_found_with_its_snippet(ledger):
    session = await ledger.sessions.create("notes", "sys")
    english, chinese, japanese = await chat(
        ledger, session, "The deployment runs on Kubernetes with three replicas.",
        "我们使用图数据库存储每一次对话的历史。", "データベースを使って履歴を保存します。")
    assert await _ids(ledger, "kubernetes replicas") == [english.id]
    assert await _ids(ledger, "KUBERNETES") == [english.id]
    assert await _ids(ledger, "图数据库") == [chinese.id]
    assert await _ids(ledger, "历史") == [chinese.id]
    assert await _ids(ledger, "库") == [chinese.id]  # one ideograph: the pairs that hold it
    assert await _ids(ledger, "データベース") == [japanese.id]
    assert await _ids(ledger, "数据图") == []  # the characters, not in that order
    assert await _ids(ledger, '"three replicas"') == [english.id]
    assert await _ids(ledger, '"replicas three"') == []
    assert await _ids(ledger, "kube*") == [english.id]
    assert await _ids(ledger, "kubernetes -replicas") == []
    hit = (await _find(ledger, "图数据库"))[0]
    assert hit.field is Field.TEXT and hit.session_title == "notes"
    start, end = hit.snippet.highlights[0]
    assert hit.snippet.text[start:end] == "图数据库"
    english_hit = (await _find(ledger, "replicas"))[0]
    start, end = english_hit.snippet.highlights[0]
    assert english_hit.snippet.text[start:end] == "replicas"


async def test_lucene_syntax_is_taken_literally(ledger):
    session = await ledger.sessions.create("syntax", "sys")
    node, = await chat(ledger, session, "a:b (c) [d] {e} f~ g^2 h\\ i/j && k || !l")
    for query in ["a:b", "(c)", "[d]", "{e}", "f~", "g^2", "h\\", "i/j", "&& k", "|| !l", "*:*"]:
        if query == "*:*":
            with pytest.raises(BadInput):
                await _ids(ledger, query)
        else:
            assert node.id in await _ids(ledger, query), query


async def test_thinking_tool_calls_results_labels_and_titles_are_found(ledger):
    session = await ledger.sessions.create("Migrating the billing service", "sys")
    user, = await chat(ledger, session, "Check the invoices.")
    thinking = [{"type": "thinking", "thinking": "The ledger reconciliation needs care.",
                 "signature": "c2ln"},
                *tool_uses("toolu_1")]
    thinking[-1]["name"], thinking[-1]["input"] = "grep_invoices", {"pattern": "overdue"}
    assistant = (await ledger.head.append_message(session.id, "assistant", blocks=thinking)).node
    result = tool_results("toolu_1")
    result[0]["content"] = [{"type": "text", "text": "invoice 4471 is overdue"}]
    tool = (await ledger.head.append_message(session.id, "tool", blocks=result)).node
    await ledger.labels.set(user.id, "quarterly audit")
    assert await _ids(ledger, "reconciliation") == [assistant.id]
    assert (await _find(ledger, "reconciliation"))[0].field is Field.THINKING
    assert await _ids(ledger, "grep_invoices") == [assistant.id]
    assert set(await _ids(ledger, "overdue")) == {assistant.id, tool.id}
    assert await _ids(ledger, "4471") == [tool.id]
    audit = await _find(ledger, "quarterly audit")
    assert [h.node.id for h in audit] == [user.id] and audit[0].field is Field.LABEL
    title = await _find(ledger, "billing")
    assert [h.node.role.value for h in title] == ["system"] and title[0].field is Field.TITLE
    assert await _ids(ledger, "reconciliation", fields=(Field.TEXT,)) == []
    assert await _ids(ledger, "overdue", roles=(Role.TOOL,)) == [tool.id]
    assert await _ids(ledger, "billing", session_id=session.id) == []  # titles: across sessions


async def test_a_search_never_sees_another_tenant(db, tenant, events):
    prefix = Ledger.open(db, tenant, Limits())
    mine = Ledger.open(db, tenant + "-mine", Limits())  # the other's name is a word of mine
    other = Ledger.open(db, tenant + "-other", Limits())
    for ledger in (mine, prefix, other):
        session = await ledger.sessions.create("zebra crossing", "sys")
        await chat(ledger, session, "zebra stripes everywhere")
        await ledger.labels.set((await chat(ledger, session, "x"))[0].id, "zebra label")
    for ledger in (mine, prefix, other):
        hits = await _find(ledger, "zebra")
        assert len(hits) == 3  # its own text, label and title
        assert {h.node.session_id for h in hits} == {
            s.id for s in (await ledger.sessions.list()).items}


async def test_each_hit_is_placed_at_the_head(ledger, compactor):
    session = await ledger.sessions.create("places", "sys")
    t = await chat(ledger, session, *turns(8))
    secret = (await chat(ledger, session, "the password is swordfish", "noted"))
    summary = (await compactor.compact(session.id, keep_recent_tokens=KEEP_FOUR)).summary
    t += await chat(ledger, session, *turns(4, start=8))

    async def state(text, roles=(Role.USER,), **filters):
        hit, = await _find(ledger, text, roles=roles, **filters)
        p = hit.placement
        return p.state, p.summary_id, p.summary_rendered

    assert await state("Question 000") == (State.SUMMARIZED, summary.id, True)
    assert await state("swordfish") == (State.IN_CONTEXT, None, None)
    await ledger.pins.set(t[0].id, 10_000)
    assert await state('"Question 000"') == (State.PINNED, summary.id, True)
    await ledger.pins.clear(t[0].id)
    # a retry of an early reply: HEAD moves onto the new branch
    fork = (await ledger.head.retry(t[3].id, "another answer")).node
    assert await state("another answer", (Role.ASSISTANT,)) == (State.IN_CONTEXT, None, None)
    assert await state('"Question 000"') == (State.IN_CONTEXT, None, None)  # no whole segment
    assert await state('"Question 004"') == (State.OTHER_BRANCH, summary.id, False)
    assert await state('"Question 000"', session_id=session.id, head_id=t[-1].id) == (
        State.SUMMARIZED, summary.id, True)
    summary_hits = await _find(ledger, '"Question 000"', roles=(Role.SUMMARY,),
                               session_id=session.id, head_id=t[-1].id)
    assert [(h.node.id, h.placement.state) for h in summary_hits] == [
        (summary.id, State.IN_CONTEXT)]
    summary_hits = await _find(ledger, '"Question 000"', roles=(Role.SUMMARY,))
    assert [h.placement.state for h in summary_hits] == [State.NOT_RENDERED]
    await ledger.summaries.retire(summary.id)
    assert await state('"Question 000"', session_id=session.id, head_id=t[-1].id) == (
        State.IN_CONTEXT, None, None)
    await ledger.head.delete_branch(session.id, t[-1].id)
    assert await state('"Question 010"') == (State.DELETED, None, None)
    assert secret[0].session_id == session.id


async def test_pages_follow_cursors_and_bad_input_is_named(ledger):
    session = await ledger.sessions.create("pages", "sys")
    await chat(ledger, session, *[f"needle number {i}" for i in range(7)])
    first = await search(ledger, "needle", first=3)
    second = await search(ledger, "needle", first=3, after=first.hits[-1].cursor)
    third = await search(ledger, "needle", first=3, after=second.hits[-1].cursor)
    ids = [h.node.id for p in (first, second, third) for h in p.hits]
    assert len(ids) == len(set(ids)) == 7
    assert first.has_next and second.has_next and not third.has_next
    assert not first.has_previous and second.has_previous
    for bad in ["", "   ", "-only", '""']:
        with pytest.raises(BadInput):
            await search(ledger, bad)
    with pytest.raises(BadInput, match="after"):
        await search(ledger, "needle", after="bm90LWEtY3Vyc29y")
    with pytest.raises(BadInput, match="sessionId"):
        await search(ledger, "needle", Filters(head_id=session.root_id))
    with pytest.raises(NotFound):
        await search(ledger, "needle", Filters(session_id="ses_missing"))


SEARCH = """query($q: String!, $s: ID, $h: ID, $kinds: [SearchKind!], $after: String) {
  search(query: $q, sessionId: $s, headId: $h, kinds: $kinds, first: 2, after: $after) {
    pageInfo { hasNextPage endCursor }
    edges { cursor node {
      score matchedIn snippet highlights { start end } sessionId sessionTitle
      session { id title }
      context { state headId summaryId summaryRendered }
      node { id role readBy(first: 1) { totalCount nodes { id } } }
    } }
  }
}"""


async def test_search_over_graphql_names_the_calls_that_read_each_hit(api):
    client, other = api.client, api.other
    sid = (await client('mutation { createSession(title: "密码 audit", systemPrompt: "Terse.")'
                        " { id } }"))["createSession"]["id"]
    for text in ("The launch code is 0000.", "我的密码是天王盖地虎。", "Nothing here."):
        await client("mutation($s: ID!, $c: String!) { sendMessage(sessionId: $s, content: $c)"
                     " { reply { id } } }", s=sid, c=text)
    page = (await client(SEARCH, q="天王盖地虎 密码", kinds=["TEXT"]))["search"]
    hits = [e["node"] for e in page["edges"]]
    text_hit = next(h for h in hits if h["node"]["role"] == "USER")
    assert text_hit["node"]["role"] == "USER" and text_hit["sessionTitle"] == "密码 audit"
    assert text_hit["session"] == {"id": sid, "title": "密码 audit"}
    start, end = text_hit["highlights"][0]["start"], text_hit["highlights"][0]["end"]
    assert text_hit["snippet"][start:end] == "密码"
    assert text_hit["context"]["state"] == "IN_CONTEXT" and text_hit["context"]["summaryId"] is None
    # the turn after it read it: the reply's call, and the next turn's
    assert text_hit["node"]["readBy"]["totalCount"] == 2
    assert (await other(SEARCH, q="密码"))["search"]["edges"] == []
    titles = (await client(SEARCH, q="密码", kinds=["TITLE"]))["search"]["edges"]
    assert [e["node"]["matchedIn"] for e in titles] == ["TITLE"]
    only_titles = (await client(SEARCH, q="audit", kinds=["TITLE"]))["search"]["edges"]
    assert [e["node"]["node"]["role"] for e in only_titles] == ["SYSTEM"]
    errors = await client.errors(SEARCH, q="-alone")
    assert errors[0]["extensions"]["code"] == "BAD_INPUT"


async def test_ctxdag_search_prints_hits_with_their_state(db, tenant, capsys):
    from tests.integration.helpers import run_command, runtime_for

    runtime = runtime_for(db, tenant)
    session = await runtime.ledger.sessions.create("cli search", "sys")
    node, = await chat(runtime.ledger, session, "remember the blue teapot")
    assert await run_command(runtime, "search", "teapot") == 0
    out = capsys.readouterr().out
    assert "1 hit\n" in out and node.id in out and "in_context" in out and "[[teapot]]" in out
    assert await run_command(runtime, "search", "teapot", "--json") == 0
    import json
    row = json.loads(capsys.readouterr().out)
    assert row["node_id"] == node.id and row["state"] == "in_context"


async def test_a_reply_no_render_reads_is_found_but_not_rendered(ledger, db):
    from pathlib import Path

    from service.transcripts.batch import import_text

    fixture = Path(__file__).parent.parent / "fixtures" / "transcripts" / "pi" / "aborted.jsonl"
    await import_text(ledger, fixture.read_text(), fixture.name, "pi")
    hit, = await _find(ledger, '"Let me look at"')
    assert hit.node.out_of_context and hit.placement.state is State.NOT_RENDERED
    title, = await _find(ledger, "checkout", fields=(Field.TITLE,))
    assert title.session_title and "checkout" in title.session_title.lower()


async def test_a_search_right_after_each_write_finds_it(ledger, db):
    # The indexes are eventually consistent (migration 14): a search must first wait for
    # every committed update to reach them, or it would miss the write just made.
    indexes = await run_cypher(
        db, "SHOW FULLTEXT INDEXES YIELD name, options "
        "WHERE name IN ['ledger_text', 'label_text'] "
        "RETURN name, options.indexConfig['fulltext.eventually_consistent'] AS eventual")
    assert {row["name"]: row["eventual"] for row in indexes} == \
        {"ledger_text": True, "label_text": True}
    session = await ledger.sessions.create("fresh writes", "sys")
    for i in range(25):
        word = f"zephyr{i:02d}quartz"
        node, = await chat(ledger, session, f"the {word} note")
        assert await _ids(ledger, word) == [node.id], i
        await ledger.labels.set(node.id, f"label{i:02d}umber")
        assert await _ids(ledger, f"label{i:02d}umber", fields=(Field.LABEL,)) == [node.id], i
