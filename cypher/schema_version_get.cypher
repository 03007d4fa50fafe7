// name: schema_version_get
// returns: zero or one row {version}
// purpose: the schema version recorded by the last applied migration
MATCH (m:CtxdagSchema {id: 'ctxdag'})
RETURN m.version AS version
