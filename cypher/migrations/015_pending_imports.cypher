// A large transcript's first import commits its parts a transaction each
// (service/store/transcript_parts.py), its session created by the last: until then its
// nodes belong to no session. The PendingImport claims the session's import (one per
// session: the last import started takes it over) and says when a part was last written,
// so what a killed import left is found and cleared.
CREATE CONSTRAINT pending_import_session IF NOT EXISTS FOR (c:PendingImport) REQUIRE c.session_id IS UNIQUE;
CREATE INDEX pending_import_touched IF NOT EXISTS FOR (c:PendingImport) ON (c.tenant, c.touched_at);
