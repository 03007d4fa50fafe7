"""Planning at start: every statement runs once with null parameters, rolled back."""
from tests.integration.helpers import run_cypher


async def _store_counts(db) -> tuple[int, int, int]:
    (row,) = await run_cypher(db, "MATCH (n) WITH count(n) AS nodes "
                                  "OPTIONAL MATCH ()-[r]->() WITH nodes, count(r) AS rels "
                                  "OPTIONAL MATCH (s:Session) WHERE s.id IS NULL "
                                  "RETURN nodes, rels, count(s) AS unnamed")
    return row["nodes"], row["rels"], row["unnamed"]


async def test_planning_every_statement_runs_each_once_and_keeps_nothing(db):
    before = await _store_counts(db)
    trips = db.round_trips.total
    planned = await db.plan_statements()
    assert sorted(planned) == sorted(db.queries)
    assert await _store_counts(db) == before
    assert db.round_trips.total == trips  # not counted as the service's own statements
