"""The per-operation context: who is asking (tenant), their services, fresh DataLoaders."""
from __future__ import annotations

import copy
import hmac
from typing import Callable, Iterator, Mapping

from strawberry.extensions import SchemaExtension
from strawberry.fastapi import BaseContext

from ..errors import Unauthenticated
from ..runtime import Runtime, TenantServices
from .bookmark_seal import BookmarkSeal
from .bookmarks import ClientBookmarks
from .loaders import Loaders


def tenant_for(authorization: str | None, tokens: Mapping[str, str],
               default_tenant: str) -> str | None:
    """The tenant a bearer token maps to; the default tenant when no tokens are configured."""
    if not tokens:
        return default_tenant
    return _listed(authorization, tokens)


def may_redact(authorization: str | None, tokens: Mapping[str, str],
               redact_tokens: Mapping[str, str]) -> bool:
    """Whether the bearer token may redact: one of CTXDAG_REDACT_TOKENS; anyone in
    token-less mode, where the one local user owns every conversation."""
    return not tokens or _listed(authorization, redact_tokens) is not None


def _listed(authorization: str | None, tokens: Mapping[str, str]) -> str | None:
    if not authorization or not authorization.lower().startswith("bearer "):
        return None
    given = authorization[7:].strip()
    for token, tenant in tokens.items():
        if hmac.compare_digest(token.encode(), given.encode()):
            return tenant
    return None


class Context(BaseContext):
    def __init__(self, runtime: Runtime, tenant: str | None,
                 authenticate: Callable[[str | None], str | None] | None = None,
                 bookmarks: ClientBookmarks | None = None, *,
                 bookmark_seal: BookmarkSeal,
                 redactor: Callable[[str | None], bool] = lambda _: False,
                 authorization: str | None = None) -> None:
        """`authenticate`: the tenant an Authorization value names (a websocket may send
        one in its connection_init payload, after the context is made). `bookmarks`: the
        sealed bookmarks the connection holds (bookmarks.py), shared by its operations,
        which `bookmark_seal` opens (the app's one, from the settings). `redactor`: whether
        an Authorization value may redact (`may_redact`), asked of `authorization`."""
        super().__init__()
        self.runtime = runtime
        self.tenant = tenant
        self.authenticate = authenticate or (lambda _: tenant)
        self.bookmarks = bookmarks if bookmarks is not None else ClientBookmarks()
        self.bookmark_seal = bookmark_seal
        self.redactor = redactor
        self.may_redact = redactor(authorization)
        self._services: TenantServices | None = None
        self._loaders: Loaders | None = None

    @property
    def services(self) -> TenantServices:
        if self.tenant is None:
            raise Unauthenticated("a valid bearer token is required "
                                  "(Authorization: Bearer <token>)")
        if self._services is None:
            self._services = self.runtime.for_tenant(self.tenant)
        return self._services

    @property
    def loaders(self) -> Loaders:
        if self._loaders is None:
            self._loaders = Loaders.for_request(self.services.ledger)
        return self._loaders

    def for_operation(self) -> "Context":
        """The same caller with DataLoaders of its own: a websocket runs many operations on
        one connection, and a read after a mutation must not be served from an older cache."""
        fresh = copy.copy(self)
        fresh._loaders = None
        return fresh


class LoadersPerOperation(SchemaExtension):
    def on_operation(self) -> Iterator[None]:
        context = self.execution_context.context
        if isinstance(context, Context):
            self.execution_context.context = context.for_operation()
        yield
