// A session's summaries are looked up by the branch strategy's render without scanning its turns.
CREATE INDEX node_session_role IF NOT EXISTS FOR (n:Node) ON (n.session_id, n.role);
