// fragment draft_state: what completeTurn decides by, read after the session's write lock
// (so after any concurrent completion of draft `d` committed): `key_used`, whether the
// draft holds an attempt recorded with $client_key already, and `completed`, whether an
// attempt of it produced a reply. Expects d in scope.
WITH *, EXISTS { (d)-[:ATTEMPT {client_key: $client_key}]->(:Call) } AS key_used,
  EXISTS { (d)-[:ATTEMPT]->(:Call)-[:PRODUCED]->(:Node) } AS completed
