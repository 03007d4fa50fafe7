// Sessions you can find (docs/guides/finding-sessions.md): a session carries what its list
// shows and filters — tool, project (working directory), models, first and last activity
// — kept by the writes' own statements. The list reads a tenant's sessions by last
// activity or by project.
CREATE INDEX session_tenant_activity IF NOT EXISTS FOR (s:Session) ON (s.tenant, s.last_activity_at);
CREATE INDEX session_tenant_project IF NOT EXISTS FOR (s:Session) ON (s.tenant, s.project);
// Sessions stored before: their first and last write, and the models of their calls (first
// use first). An imported one gets its tool, project and the rest from its source when its
// file is imported again.
MATCH (s:Session) WHERE s.models IS NULL
SET s.first_activity_at = coalesce(s.first_activity_at, s.created_at),
  s.last_activity_at = coalesce(s.last_activity_at, s.updated_at),
  s.models = COLLECT {
    // started_at named so the seek uses call_session_started (a composite index needs both)
    MATCH (c:Call) WHERE c.session_id = s.id AND c.started_at IS NOT NULL AND c.model IS NOT NULL
    WITH c.model AS model, min(c.started_at) AS first_used
    ORDER BY first_used
    RETURN model
  }
