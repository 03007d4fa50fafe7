"""Who a request speaks for: the tenant its bearer token names. The GraphQL API and the
MCP endpoint both decide it here, and refuse a caller without one in the same words."""
from __future__ import annotations

import hmac
from typing import Mapping

TOKEN_REQUIRED = "a valid bearer token is required (Authorization: Bearer <token>)"


def tenant_for(authorization: str | None, tokens: Mapping[str, str],
               default_tenant: str) -> str | None:
    """The tenant a bearer token maps to; the default tenant when no tokens are configured."""
    if not tokens:
        return default_tenant
    if not authorization or not authorization.lower().startswith("bearer "):
        return None
    given = authorization[7:].strip()
    for token, tenant in tokens.items():
        if hmac.compare_digest(token.encode(), given.encode()):
            return tenant
    return None
