// fragment session_create: creates the Session of an imported backup in $tenant from
// $session.properties (and, where an older backup lacks them, from its times and $calls).
// Binds s.
  CREATE (s:Session)
  SET s = $session.properties, s.tenant = $tenant,
    s.meta_version = coalesce($session.properties.meta_version, 0),
    s.summary_version = coalesce($session.properties.summary_version, 0),
    // A backup written before sessions were listed by activity: its times and its calls'.
    s.first_activity_at = coalesce($session.properties.first_activity_at,
                                   $session.properties.created_at),
    s.last_activity_at = coalesce($session.properties.last_activity_at,
                                  $session.properties.updated_at),
    s.models = coalesce($session.properties.models, reduce(models = [], row IN $calls |
      CASE WHEN row.properties.model IS NULL OR row.properties.model IN models THEN models
           ELSE models + row.properties.model END)),
    // Events are not exported: the imported session's sequence starts afresh.
    s.next_event_seq = 0, s.events_pruned_through = 0
