// name: transcript_extend
// returns: one row {problem, taken_ids, taken_elsewhere, violations, events}; nothing is written when problem is set; no row when the session does not exist
// purpose: adds the entries a transcript gained since it was imported — nodes after the stored ones, with all their edges — moves HEAD to the transcript's head and, when it gained a compaction, makes that the active summary (the one it replaced superseded), updates the session's source (and its title unless the user changed it), sets the labels of $labels and clears those of $unlabeled (a node deleted with its branch keeps its label and takes no new one), tombstones the stored turns of $replaced (the tail an earlier import stored of a file that has grown since: a synthetic result, a message still gaining blocks), whose tool uses the new nodes take over, and writes the stored nodes of $rewritten again as $nodes gives them (ids kept: what names them stays), then checks the invariants the new nodes can break (check_extension_invariants: its cost follows the nodes added, not the session); announces a branch_deleted per group of $replaced, then a node_appended per node (in seq order), head_moved when HEAD moved and node_labeled / node_unlabeled per label written, as native writes do
// params: session_id, tenant, now, expected_next_seq, nodes, referred, media, head_id, active_summary_id, labels, unlabeled, source, title, source_title, replaced, rewritten, listing, source_bytes, source_prefix_sha256
CYPHER replan=skip
// Planning this statement takes seconds (tens on a cold JVM), and Neo4j plans it again
// whenever the store's statistics have moved enough: during a folder import, every few
// files. Its plan is index seeks by id that suit a store of any size: it is kept.
// $source_bytes and $source_prefix_sha256: the file text read (transcript_source_set's;
// null clears them).
// The session's source becomes $source (null: it stays), and its title $title while it is
// still the one the source gave before ($source_title; null: none): a title the user set stays.
// $listing: what the session list shows of it (service/model/listing.py; null: it stays);
// its last activity only moves on, and models the session used in ctxdag stay after the file's.
// $replaced: [{fork_point_id, tip_id, ids}], each a stored branch tail below fork_point_id.
// $rewritten: ids of stored live nodes of the session that rows of $nodes write again (a
// turn the grown file re-hangs, a summary keeping more, what hangs below them), each
// keeping its seq; the other rows are numbered from $expected_next_seq.
// $nodes are backup rows (nodes_import), numbered from $expected_next_seq: the session's
// next_seq when the caller read which nodes it held. A write that landed since is a
// problem (`session_changed`), so two imports of one file never number a node twice; a
// node id held by any node, or a tool use id by a tool use of the session, is one too
// (`ids_exist`; ids of other tenants only counted). The caller rolls back when
// `violations` is not empty.
MATCH (s:Session {id: $session_id, tenant: $tenant})
// include: session_write_lock
WITH s
MATCH (s)-[:HEAD]->(previous_head:Node)
WITH s, previous_head.id AS previous_head_id, COLLECT {
    UNWIND $nodes AS row MATCH (x:Node {id: row.properties.id})
    WHERE NOT (x.id IN $rewritten AND x.session_id = s.id AND x.deleted_at IS NULL)
    RETURN {id: x.id, own: coalesce(x.tenant = $tenant, false)} AS taken
    UNION ALL
    UNWIND $nodes AS row UNWIND row.tool_uses AS tool_use
    MATCH (x:ToolUse {session_id: s.id, id: tool_use.id})
    USING INDEX x:ToolUse(session_id, id)
    WHERE NOT EXISTS { (m:Node)-[:USES]->(x)
                       WHERE m.id IN $rewritten
                         OR any(group IN $replaced WHERE m.id IN group.ids) }
    RETURN {id: x.id, own: true} AS taken
  } AS taken
WITH s, previous_head_id, [t IN taken WHERE t.own | t.id] AS taken_ids,
  size([t IN taken WHERE NOT t.own]) AS taken_elsewhere,
  CASE WHEN s.next_seq <> $expected_next_seq THEN 'session_changed'
       WHEN size(taken) > 0 THEN 'ids_exist' END AS problem
OPTIONAL CALL (s, problem) {
  WITH s WHERE problem IS NULL
  SET s.next_seq = s.next_seq + size($nodes) - size($rewritten), s.source = coalesce($source, s.source),
    s.source_bytes = $source_bytes, s.source_prefix_sha256 = $source_prefix_sha256,
    s.title = CASE WHEN $source IS NOT NULL AND coalesce(s.title, '') = coalesce($source_title, '')
                   THEN $title ELSE s.title END
  SET s.tool = coalesce($listing.tool, s.tool),
    s.tool_version = coalesce($listing.tool_version, s.tool_version),
    s.project = coalesce($listing.project, s.project),
    s.git_branch = coalesce($listing.git_branch, s.git_branch),
    s.source_file = coalesce($listing.source_file, s.source_file),
    s.models = CASE WHEN $listing IS NULL THEN s.models
                    ELSE $listing.models + [m IN coalesce(s.models, []) WHERE NOT m IN $listing.models] END,
    s.first_activity_at = coalesce($listing.first_activity_at, s.first_activity_at),
    s.last_activity_at = CASE WHEN s.last_activity_at >= $listing.last_activity_at THEN s.last_activity_at
                              ELSE coalesce($listing.last_activity_at, s.last_activity_at) END
  WITH s
  // A replaced turn is tombstoned, as a deleted branch's are; a tool use id the new nodes
  // hold again is theirs now (a ToolUse is one message's).
  CALL (s) {
    UNWIND $replaced AS group
    UNWIND group.ids AS id
    MATCH (x:Node {id: id, session_id: s.id}) WHERE x.deleted_at IS NULL
    SET x.deleted_at = $now
    WITH s, x
    CALL (s, x) {
      MATCH (s)-[named:NAMES]->(x)
      DELETE named
    }
    CALL (x) {
      MATCH (x)-[:USES]->(u:ToolUse)
      WHERE any(row IN $nodes WHERE any(t IN row.tool_uses WHERE t.id = u.id))
      DETACH DELETE u
    }
  }
  // A rewritten node loses the edges it was imported with, and its tool uses; nodes_import
  // writes them again from its row.
  CALL (s) {
    UNWIND $rewritten AS id
    MATCH (x:Node {id: id, session_id: s.id}) WHERE x.deleted_at IS NULL
    CALL (x) {
      MATCH (x)-[e:PREDECESSOR|CALLER|COVERS|CARRIES_OVER|ENDS_AT|ABSORBED|REPLACED|ANSWERS|CARRIES]->()
      DELETE e
    }
    CALL (x) {
      MATCH (x)-[:USES]->(u:ToolUse)
      DETACH DELETE u
    }
  }
  // include: nodes_import
  // include: branch_names_follow
  CALL (s) {
    MATCH (s)-[old:HEAD]->(was:Node)
    MATCH (h:Node {id: $head_id, session_id: s.id})
    WITH s, old, h, was WHERE was <> h
    DELETE old
    CREATE (s)-[:HEAD]->(h)
  }
  CALL (s) {
    MATCH (a:Node {id: $active_summary_id, session_id: s.id})
    WHERE NOT EXISTS { (s)-[:ACTIVE_SUMMARY]->(a) }
    OPTIONAL MATCH (s)-[old:ACTIVE_SUMMARY]->(was:Node)
    SET was.superseded_summary = true, a.superseded_summary = false,
      s.summary_version = s.summary_version + 1
    DELETE old
    CREATE (s)-[:ACTIVE_SUMMARY]->(a)
  }
  CALL (s) {
    UNWIND $labels AS row
    MATCH (n:Node {id: row.node_id, session_id: s.id}) WHERE n.deleted_at IS NULL
    MERGE (s)-[l:LABELED]->(n)
    SET l = row.properties, l.tenant = s.tenant, l.session_id = s.id
    RETURN collect({type: 'node_labeled', node_id: n.id, label: l.text}) AS labeled
  }
  CALL (s) {
    UNWIND $unlabeled AS id
    MATCH (s)-[l:LABELED]->(n:Node {id: id}) WHERE n.deleted_at IS NULL
    DELETE l
    RETURN collect({type: 'node_unlabeled', node_id: n.id}) AS unlabeled
  }
  OPTIONAL CALL (s) {
    // include: check_extension_invariants
  }
  RETURN collect(violation) AS violations, labeled + unlabeled AS relabeled
}
WITH s, problem, taken_ids, taken_elsewhere, violations, relabeled, CASE WHEN problem IS NULL THEN
    [group IN $replaced | {type: 'branch_deleted', tip_id: group.tip_id,
                           fork_point_id: group.fork_point_id, deleted_ids: group.ids}]
    + [row IN $nodes | {type: 'node_appended', node_id: row.properties.id,
                        role: row.properties.role, predecessor_id: row.predecessor_id}]
    + CASE WHEN previous_head_id <> $head_id
        THEN [{type: 'head_moved', previous_head_id: previous_head_id, head_id: $head_id}]
        ELSE [] END
    + relabeled
  ELSE [] END AS announced
// include: events_write
RETURN problem, taken_ids, taken_elsewhere, violations, events
