// name: schema_version_set
// returns: one row {version}
// purpose: records that a migration was applied
// params: version, migration
MERGE (m:CtxdagSchema {id: 'ctxdag'})
SET m.version = $version, m.migration = $migration, m.applied_at = datetime()
RETURN m.version AS version
