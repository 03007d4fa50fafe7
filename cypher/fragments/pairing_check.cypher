// fragment pairing_check: the tool-pair rule for a node about to follow `pred` (README,
// "Tool calls"). An assistant message that opens tool uses ($tool_uses, [{id, name}]) must
// be followed by the one message answering every one of them ($answers, the tool_use ids
// its tool_result blocks name) and by nothing else; a result answers only a tool use of
// the message it directly follows; a tool use id is used once in a session (a prompt may
// name it only once). Media the blocks name by hash ($media_refs) must be stored for the
// tenant or come with the write ($media). Binds `open_tool_uses` (pred's tool use ids),
// `unanswered` (those $answers leaves open), `unmatched_results` (answers to nothing
// open), `taken_tool_uses` (ids already used in session s), `missing_media`.
// Expects s and pred in scope.
WITH *, coalesce(pred.tool_use_ids, []) AS open_tool_uses
WITH *, [i IN open_tool_uses WHERE NOT i IN $answers] AS unanswered,
  [i IN $answers WHERE NOT i IN open_tool_uses] AS unmatched_results
CALL (s) {
  UNWIND $tool_uses AS tool_use
  MATCH (taken:ToolUse {session_id: s.id, id: tool_use.id})
  USING INDEX taken:ToolUse(session_id, id)
  RETURN collect(DISTINCT taken.id) AS taken_tool_uses
}
CALL (s) {
  UNWIND $media_refs AS digest
  OPTIONAL MATCH (stored:Media {tenant: s.tenant, sha256: digest})
  WITH digest, stored WHERE stored IS NULL AND NOT digest IN [m IN $media | m.sha256]
  RETURN collect(digest) AS missing_media
}
