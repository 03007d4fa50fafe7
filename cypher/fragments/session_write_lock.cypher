// fragment session_write_lock: takes session `s`'s write lock, and stamps `updated_at`. Every
// statement that changes a session includes it before it reads what it decides by (HEAD,
// the active summary, meta_version), so concurrent writes to one session are serialized
// here and each reads what the one before committed.
// The lock is taken on the session's ROOT relationship, which nothing else ever changes,
// and not on the session node: Neo4j's lock manager reported false deadlocks when writers
// queued on the session node's lock while its holder created or deleted a relationship on
// that node (HEAD, ACTIVE_SUMMARY). `s` may be null (the including statement reports why).
// A property read after the lock must exist from the session's creation on (migration 005):
// a read positioned on `s` before a concurrent write committed can miss one that write added.
OPTIONAL MATCH (s)-[write_lock:ROOT]->(:Node)
SET write_lock.last_write_at = $now
SET s.updated_at = $now
