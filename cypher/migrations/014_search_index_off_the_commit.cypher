// The full-text indexes of search (migration 10) are made eventually consistent: a write's
// commit no longer refreshes Lucene's searcher, which was about 5 ms of every committing
// transaction that touched a message (two per turn; docs/benchmarks.md, "The turn's
// cost"). Neo4j applies the updates in the background; search_hits first waits for every
// committed update to be applied (db.index.fulltext.awaitEventuallyConsistentIndexRefresh),
// so a search still sees every committed write. An index's options cannot be altered:
// each is dropped and created again, and populated from the store before the service
// starts (schema_await_indexes; 38 s for a store of 637,000 nodes on two loaded cores).
DROP INDEX ledger_text IF EXISTS;
CREATE FULLTEXT INDEX ledger_text IF NOT EXISTS
FOR (n:Node|Session) ON EACH [n.content, n.thinking, n.title, n.tenant, n.session_id, n.role]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk', `fulltext.eventually_consistent`: true}};
DROP INDEX label_text IF EXISTS;
CREATE FULLTEXT INDEX label_text IF NOT EXISTS
FOR ()-[l:LABELED]-() ON EACH [l.text, l.tenant, l.session_id]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk', `fulltext.eventually_consistent`: true}}
