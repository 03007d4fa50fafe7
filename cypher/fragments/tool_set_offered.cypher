// fragment tool_set_offered: with $offer_tools, `tool_set`, the tool set in force at a new
// node under `pred` (it opens a turn: the call that answers it is offered that set), read
// under the session's lock: the version (as tool_set_in_force returns it) that is the
// session's or anchored on pred's chain (no version can be anchored on the new node);
// otherwise null. A turn offered the session's set while recall may be on names the
// recall tools' names ($tools_to_check): a set in force whose definitions may hold one of
// them (the text holds `"name":"<name>"`; a superset of the sets that do) is the including
// statement's problem 'tools_to_check', and nothing is written: the turn reads the set and
// decides the clash before it writes (service/turns/tool_sets.py).
// Expects s and pred in scope.
WITH *, CASE WHEN $offer_tools AND pred IS NOT NULL THEN COLLECT {
  MATCH (s)-[:TOOL_SET_VERSION]->(v:ToolSetVersion)
  WHERE v.anchor_id IS NULL
     OR EXISTS { (pred)-[:PREDECESSOR*0..]->(:Node {id: v.anchor_id}) }
  OPTIONAL MATCH (v)-[:OFFERS]->(t:ToolSet)
  RETURN v {.*, tools: t.tools} AS version
  ORDER BY v.version DESC LIMIT 1
}[0] END AS tool_set
