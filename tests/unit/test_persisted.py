"""The persisted-query cache (service/api/persisted.py): one per tenant, each bounded in
queries and in characters, least recently used first out."""
import hashlib

import pytest

from service.api.persisted import NOT_FOUND, PersistedQueries, PersistedQueryRefused


def sent(query: str) -> dict:
    return {"persistedQuery": {"version": 1,
                               "sha256Hash": hashlib.sha256(query.encode()).hexdigest()}}


def known(cache: PersistedQueries, tenant: str | None, query: str) -> bool:
    try:
        return cache.resolve(tenant, None, sent(query)) == query
    except PersistedQueryRefused as e:
        assert e.code == NOT_FOUND
        return False


def test_each_tenant_has_its_own_queries():
    cache = PersistedQueries()
    assert cache.resolve("a", "{ a }", sent("{ a }")) == "{ a }"
    assert known(cache, "a", "{ a }")
    assert not known(cache, "b", "{ a }") and not known(cache, None, "{ a }")
    assert cache.resolve(None, "{ n }", sent("{ n }")) == "{ n }"  # runs, is not kept
    assert not any(known(cache, t, "{ n }") for t in ("a", "b", None))


def test_a_tenant_keeps_at_most_its_capacity_the_least_recently_used_going_first():
    cache = PersistedQueries(capacity=3, capacity_chars=1_000)
    for q in ("{ q1 }", "{ q2 }", "{ q3 }"):
        cache.resolve("a", q, sent(q))
    cache.resolve("b", "{ q1 }", sent("{ q1 }"))
    assert known(cache, "a", "{ q1 }")  # now the most recently used
    cache.resolve("a", "{ q4 }", sent("{ q4 }"))
    assert [known(cache, "a", q) for q in ("{ q1 }", "{ q2 }", "{ q3 }", "{ q4 }")] == [
        True, False, True, True]
    assert known(cache, "b", "{ q1 }")  # another tenant's traffic evicts nothing of b's


def test_a_tenant_keeps_at_most_its_characters():
    cache = PersistedQueries(capacity=100, capacity_chars=30)
    queries = [f"{{ q{i} }} #xxxxx" for i in range(3)]  # 13 characters each: two fit
    for q in queries:
        cache.resolve("a", q, sent(q))
        cache.resolve("a", q, sent(q))  # sent again, counted once
    assert [known(cache, "a", q) for q in queries] == [False, True, True]


def test_a_hash_that_is_not_the_querys_is_refused_and_not_kept():
    cache = PersistedQueries()
    with pytest.raises(PersistedQueryRefused) as refused:
        cache.resolve("a", "{ b }", sent("{ a }"))
    assert refused.value.code == "BAD_INPUT"
    assert not known(cache, "a", "{ a }") and not known(cache, "a", "{ b }")
