// A branch deletion that took the session's active summary used to leave ACTIVE_SUMMARY
// pointing at it (the ledger then counted no active summary). It now takes the pointer too
// (delete_branch), and `ctxdag check` names a pointer at a deleted summary: this removes the
// pointers earlier deletions left, and marks their summaries superseded, as every summary
// that is not active is. No render changes. A REPLACED edge a later compaction wrote to such
// a summary stays as it is: undoing that compaction restores nothing through it
// (summary_retire), as if it had replaced none. Idempotent.
MATCH (:Session)-[pointer:ACTIVE_SUMMARY]->(active:Node)
WHERE active.deleted_at IS NOT NULL
SET active.superseded_summary = true
DELETE pointer
