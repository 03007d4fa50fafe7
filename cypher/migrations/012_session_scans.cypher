// Statements that check or read one session's tool uses, calls or events by `session_id`
// alone (the invariant checks of an import or an extension, a session's deletion) seek
// these indexes: the composite ones, (session_id, id) and (session_id, seq), are not used
// for a predicate on session_id alone, and a label scan costs in proportion to the
// database, so a folder import slowed down as the store grew.
CREATE INDEX tool_use_session IF NOT EXISTS FOR (u:ToolUse) ON (u.session_id);
CREATE INDEX call_session IF NOT EXISTS FOR (c:Call) ON (c.session_id);
CREATE INDEX event_session IF NOT EXISTS FOR (e:Event) ON (e.session_id);
// A transcript file is recognised as imported already by its fingerprint (the sha256 of its
// name, format and text): one seek, however many sessions the tenant holds.
CREATE INDEX session_source_prefix IF NOT EXISTS FOR (s:Session) ON (s.source_prefix_sha256);
