// fragment session_filter: keeps the sessions `s` that $tool, $project, $text (lower case,
// found in the title), $since and $until (last activity at or after / before) name; a null
// one keeps all. Follows the MATCH of `s` by its tenant: naming last_activity_at (which every
// session holds) lets the tenant's sessions be read from session_tenant_activity rather than
// by scanning every tenant's.
WHERE s.last_activity_at IS NOT NULL
  AND ($tool IS NULL OR s.tool = $tool)
  AND ($project IS NULL OR s.project = $project)
  AND ($text IS NULL OR toLower(s.title) CONTAINS $text)
  AND ($since IS NULL OR s.last_activity_at >= $since)
  AND ($until IS NULL OR s.last_activity_at < $until)
