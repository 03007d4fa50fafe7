"""A hit as plain JSON: what `ctxdag search --json` prints and the MCP `search` tool
returns."""
from __future__ import annotations

from typing import Any

from .find import Hit


def hit_record(hit: Hit) -> dict[str, Any]:
    p = hit.placement
    return {"node_id": hit.node.id, "role": hit.node.role.value, "session_id": hit.session_id,
            "session_title": hit.session_title, "score": hit.score,
            "matched_in": hit.field.value, "snippet": hit.snippet.text,
            "highlights": [list(h) for h in hit.snippet.highlights],
            "state": p.state.value, "head_id": p.head_id, "summary_id": p.summary_id,
            "summary_rendered": p.summary_rendered, "cursor": hit.cursor}
