// fragment session_lock: takes session `s`'s write lock with the first SET on it, and numbers
// the node the statement writes (`seq`, display order only). A write that decides by what
// it reads of the session (HEAD, the active summary) includes it before reading: concurrent
// writes to one session are serialized here, and each reads what the one before committed.
SET s.next_seq = s.next_seq + 1, s.updated_at = $now
WITH *, s.next_seq - 1 AS seq
