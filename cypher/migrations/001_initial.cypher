// Constraints and indexes of the ledger. Each statement is idempotent.
CREATE CONSTRAINT session_id_unique IF NOT EXISTS FOR (s:Session) REQUIRE s.id IS UNIQUE;
CREATE CONSTRAINT node_id_unique IF NOT EXISTS FOR (n:Node) REQUIRE n.id IS UNIQUE;
CREATE CONSTRAINT call_id_unique IF NOT EXISTS FOR (c:Call) REQUIRE c.id IS UNIQUE;
CREATE CONSTRAINT schema_id_unique IF NOT EXISTS FOR (m:CtxdagSchema) REQUIRE m.id IS UNIQUE;
// Sessions are listed per tenant, newest first.
CREATE INDEX session_tenant_created IF NOT EXISTS FOR (s:Session) ON (s.tenant, s.created_at);
// Branch listing and whole-session scans start from a session's nodes.
CREATE INDEX node_session IF NOT EXISTS FOR (n:Node) ON (n.session_id);
