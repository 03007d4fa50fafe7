// Turn drafts (docs/guides/agent-runtimes.md, "Bring your own model"): a turn a runtime
// began and completes with its own model's reply. Found by id; a session's expired ones
// are found by their expiry and forgotten.
CREATE CONSTRAINT draft_id IF NOT EXISTS FOR (d:Draft) REQUIRE d.id IS UNIQUE;
CREATE INDEX draft_session_expiry IF NOT EXISTS FOR (d:Draft) ON (d.session_id, d.expires_at)
