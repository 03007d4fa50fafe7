// fragment draft_attempt: unless `problem` is set, links draft `d` to the call just recorded
// ($call.id) by an ATTEMPT edge naming $client_key, the key a repeated completeTurn is
// answered by; with `completes` (the attempt produced the reply) the draft is kept until
// $keep_until, so a repeated completion finds it. Expects d, problem and completes in scope.
OPTIONAL CALL (d, problem, completes) {
  WITH * WHERE problem IS NULL
  MATCH (attempted:Call {id: $call.id, tenant: d.tenant})
  CREATE (d)-[:ATTEMPT {client_key: $client_key, at: $now}]->(attempted)
  SET d.expires_at = CASE WHEN completes THEN $keep_until ELSE d.expires_at END
  RETURN true AS attempt_written
}
