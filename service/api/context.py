"""The per-operation context: who is asking (tenant), their services, fresh DataLoaders."""
from __future__ import annotations

import copy
from typing import Callable, Iterator

from strawberry.extensions import SchemaExtension
from strawberry.fastapi import BaseContext

from ..auth import TOKEN_REQUIRED
from ..errors import Unauthenticated
from ..runtime import Runtime, TenantServices
from .bookmark_seal import BookmarkSeal
from .bookmarks import ClientBookmarks
from .loaders import Loaders


class Context(BaseContext):
    def __init__(self, runtime: Runtime, tenant: str | None,
                 authenticate: Callable[[str | None], str | None] | None = None,
                 bookmarks: ClientBookmarks | None = None, *,
                 bookmark_seal: BookmarkSeal) -> None:
        """`authenticate`: the tenant an Authorization value names (a websocket may send
        one in its connection_init payload, after the context is made). `bookmarks`: the
        sealed bookmarks the connection holds (bookmarks.py), shared by its operations,
        which `bookmark_seal` opens (the app's one, from the settings)."""
        super().__init__()
        self.runtime = runtime
        self.tenant = tenant
        self.authenticate = authenticate or (lambda _: tenant)
        self.bookmarks = bookmarks if bookmarks is not None else ClientBookmarks()
        self.bookmark_seal = bookmark_seal
        self._services: TenantServices | None = None
        self._loaders: Loaders | None = None

    @property
    def services(self) -> TenantServices:
        if self.tenant is None:
            raise Unauthenticated(TOKEN_REQUIRED)
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
