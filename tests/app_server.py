"""The real app served by uvicorn on a loopback port, inside the test's event loop."""
from __future__ import annotations

import asyncio
import contextlib
from typing import AsyncIterator

from service.config import Settings
from service.store import Database


@contextlib.asynccontextmanager
async def serve(settings: Settings, database: Database | None = None) -> AsyncIterator[str]:
    """Serves `create_app(settings, database)` until the block ends; yields its URL."""
    import uvicorn

    from service.api.app import create_app
    from service.api.server import server_config
    from service.neo4j_local import free_port

    port = free_port()
    server = uvicorn.Server(server_config(create_app(settings, database), settings,
                                          "127.0.0.1", port, log_level="warning"))
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()
        await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
