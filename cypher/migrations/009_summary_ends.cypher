// Each summary's segment end as an edge, (summary)-[:ENDS_AT]->(its covers_last_id turn): the
// segmented render walks up from the head over PREDECESSOR and ENDS_AT, so its reads follow
// the render, never a stand-in's COVERS edges (docs/segmented.md). The same fact as the
// property, no change of meaning. Idempotent.
MATCH (x:Node {role: 'summary'})
WHERE NOT EXISTS { (x)-[:ENDS_AT]->(:Node) }
MATCH (last:Node {id: x.covers_last_id})
WHERE last.session_id = x.session_id
CREATE (x)-[:ENDS_AT]->(last)
