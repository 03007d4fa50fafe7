"""Sessions: create with ROOT, get, paged listing, title, extra_meta, tenant scoping."""
import pytest

from service.errors import BadInput, NotFound
from service.store import Ledger, Limits, Role


async def test_create_makes_root_with_system_prompt_and_head_on_root(ledger, tenant):
    session = await ledger.sessions.create("Planning", "You are a planner.", {"topic": "trip"})
    assert session.tenant == tenant
    assert session.title == "Planning"
    assert session.extra_meta == {"topic": "trip"}
    assert session.head_id == session.root_id
    root = await ledger.nodes.get(session.root_id)
    assert root.role is Role.SYSTEM
    assert root.content == "You are a planner."
    assert (root.depth, root.seq, root.predecessor_id) == (0, 0, None)
    assert await ledger.sessions.get(session.id) == session


async def test_list_pages_newest_first_without_gaps_or_repeats(ledger):
    created = [await ledger.sessions.create(f"s{i}") for i in range(7)]
    seen, after = [], None
    while True:
        page = await ledger.sessions.list(first=3, after=after)
        seen.extend(s.id for s in page.items)
        if not page.has_next:
            break
        after = page.end_cursor
    assert seen == [s.id for s in reversed(created)]


async def test_list_pages_backwards_from_any_cursor(ledger):
    created = [(await ledger.sessions.create(f"s{i}")).id for i in range(7)]
    newest_first = list(reversed(created))
    last = await ledger.sessions.list(last=3)
    assert [s.id for s in last.items] == newest_first[-3:]
    assert (last.has_previous, last.has_next) == (True, False)
    seen, before = list(last.items), last.start_cursor
    while True:
        page = await ledger.sessions.list(last=3, before=before)
        assert page.has_next
        seen[:0] = page.items
        if not page.has_previous:
            break
        before = page.start_cursor
    assert [s.id for s in seen] == newest_first
    between = await ledger.sessions.list(after=last.cursors[0], before=last.cursors[2])
    assert [s.id for s in between.items] == [newest_first[-2]]
    assert await ledger.sessions.count() == 7


async def test_list_rejects_a_forged_cursor_and_bad_page_size(ledger):
    with pytest.raises(BadInput):
        await ledger.sessions.list(after="not-a-cursor")
    with pytest.raises(BadInput, match="'before' cursor"):
        await ledger.sessions.list(last=2, before="not-a-cursor")
    with pytest.raises(BadInput, match="first or last"):
        await ledger.sessions.list(first=2, last=2)
    for first in (0, -1, 101, "3"):
        with pytest.raises(BadInput):
            await ledger.sessions.list(first=first)


async def test_update_title_and_merge_extra_meta(ledger):
    session = await ledger.sessions.create("old", extra_meta={"a": 1, "b": 2})
    updated = await ledger.sessions.update(session.id, title="new", set_title=True,
                                           extra_meta={"b": None, "c": [1, 2]})
    assert updated.title == "new"
    assert updated.extra_meta == {"a": 1, "c": [1, 2]}
    assert updated.head_id == session.head_id


async def test_concurrent_meta_saves_lose_no_key(ledger):
    """Each round races five first saves on a new session. A save once missed the version
    a concurrent save had just added, and lost its key (about 1 round in 500: migration 005)."""
    import asyncio

    for _ in range(40):
        session = await ledger.sessions.create()
        await asyncio.gather(*(
            ledger.sessions.update(session.id, extra_meta={f"k{i}": i}) for i in range(5)
        ))
        stored = await ledger.sessions.get(session.id)
        assert stored.extra_meta == {f"k{i}": i for i in range(5)}


async def test_a_save_never_merges_into_a_torn_read(ledger, db, monkeypatch):
    """A read beside a committing save can pair its new meta_version with the extra_meta
    before it; a merge into that would drop the key the save added, so it is refused
    and read again."""
    session = await ledger.sessions.create(extra_meta={"a": 1})
    await ledger.sessions.update(session.id, extra_meta={"b": 2})
    read, reads = db.read, []

    async def torn_once(query_name, /, **params):
        rows = await read(query_name, **params)
        if query_name == "session_meta_get" and not reads:
            rows = [{**rows[0], "extra_meta": '{"a": 1}'}]
        reads.append(rows)
        return rows

    monkeypatch.setattr(db, "read", torn_once)
    updated = await ledger.sessions.update(session.id, extra_meta={"c": 3})
    assert updated.extra_meta == {"a": 1, "b": 2, "c": 3}
    assert len(reads) == 2


async def test_reserved_meta_keys_are_refused(ledger):
    session = await ledger.sessions.create()
    with pytest.raises(BadInput, match="reserved"):
        await ledger.sessions.update(session.id, extra_meta={"_last_summary_id": "x"})
    with pytest.raises(BadInput, match="reserved"):
        await ledger.sessions.create(extra_meta={"_last_summary_text": "x"})


async def test_another_tenant_sees_nothing(ledger, db):
    session = await ledger.sessions.create("private")
    (await ledger.head.append_message(session.id, "user", "secret"))
    other = Ledger.open(db, ledger.tenant + "-other", Limits())
    with pytest.raises(NotFound):
        await other.sessions.get(session.id)
    with pytest.raises(NotFound):
        await other.nodes.get(session.root_id)
    with pytest.raises(NotFound):
        await other.branches.list(session.id)
    with pytest.raises(NotFound):
        await other.head.append_message(session.id, "user", "intrusion")
    assert (await other.sessions.list()).items == ()
