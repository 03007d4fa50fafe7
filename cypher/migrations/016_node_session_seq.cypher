// A session's nodes in seq order, a page at a time from where the last page ended (the
// check's and the export's pages: service/store/invariants.py, backup.py), read from
// this index in its order: a page's cost does not grow with the session.
CREATE INDEX node_session_seq IF NOT EXISTS FOR (n:Node) ON (n.session_id, n.seq);
