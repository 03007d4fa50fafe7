// fragment session_lock: session_write_lock for a statement that writes a node, which it
// numbers (`seq`, display order only); a node written is the session's last activity.
// include: session_write_lock
SET s.next_seq = s.next_seq + 1, s.last_activity_at = $now
WITH *, s.next_seq - 1 AS seq
