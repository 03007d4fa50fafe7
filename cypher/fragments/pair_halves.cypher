// fragment pair_halves: node `p` and the other half of each tool pair it belongs to, as
// rows `held` — the tool message answering its tool uses, or the message whose tool uses it
// answers (docs/concepts/content-blocks.md: no render separates them). The body of a
// `CALL (p) { ... }`; on a branching chain every answer of `p`'s uses is a row.
RETURN p AS held
UNION
MATCH (p)-[:ANSWERS]->(:ToolUse)<-[:USES]-(held:Node)
RETURN DISTINCT held
UNION
MATCH (p)-[:USES]->(:ToolUse)<-[:ANSWERS]-(held:Node)
RETURN DISTINCT held
