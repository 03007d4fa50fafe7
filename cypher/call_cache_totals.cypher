// name: call_cache_totals
// returns: one row {session_id, tip_id, totals} per scope: the calls' count and summed tokens (prompt, input, output, cache creation and read as reported, shared prefix)
// purpose: prompt-cache accounting summed per session (tip_id null) or per branch (the calls whose head lies on the tip's chain)
// params: scopes, tenant
UNWIND $scopes AS scope
CALL (scope) {
  OPTIONAL MATCH (tip:Node {id: scope.tip_id, tenant: $tenant, session_id: scope.session_id})
  WITH CASE WHEN tip IS NULL THEN null
            ELSE COLLECT { MATCH (tip)-[:PREDECESSOR*0..]->(a:Node) RETURN a.id } END AS chain
  MATCH (c:Call {session_id: scope.session_id, tenant: $tenant})
  WHERE scope.tip_id IS NULL OR c.head_id IN chain
  RETURN {
    calls: count(c),
    prompt_tokens: sum(coalesce(c.prompt_tokens, 0)),
    input_tokens: sum(coalesce(c.input_tokens, 0)),
    output_tokens: sum(coalesce(c.output_tokens, 0)),
    cache_creation_input_tokens: sum(coalesce(c.cache_creation_input_tokens, 0)),
    cache_read_input_tokens: sum(coalesce(c.cache_read_input_tokens, 0)),
    shared_prefix_tokens: sum(coalesce(c.shared_prefix_tokens, 0))
  } AS totals
}
RETURN scope.session_id AS session_id, scope.tip_id AS tip_id, totals
