// Search (docs/guides/search.md): one full-text (Lucene) index over what a person searches of
// the ledger's nodes and sessions, and one over labels; both kept current by the writes'
// own transactions (not eventually consistent), so a search sees every committed write.
// The `cjk` analyzer indexes Han, Kana and Hangul as overlapping character pairs and every
// other script as the standard analyzer does (Unicode words, lower-cased, English stop
// words dropped): one index serves English and Chinese alike. The tenant, session and role
// are indexed too, so a query is bounded to its tenant inside Lucene.
CREATE FULLTEXT INDEX ledger_text IF NOT EXISTS
FOR (n:Node|Session) ON EACH [n.content, n.thinking, n.title, n.tenant, n.session_id, n.role]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk', `fulltext.eventually_consistent`: false}};
CREATE FULLTEXT INDEX label_text IF NOT EXISTS
FOR ()-[l:LABELED]-() ON EACH [l.text, l.tenant, l.session_id]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'cjk', `fulltext.eventually_consistent`: false}};
// A label carries its tenant and session for the index (neither is exported: they are its
// session's).
MATCH (s:Session)-[l:LABELED]->()
WHERE l.tenant IS NULL
SET l.tenant = s.tenant, l.session_id = s.id
