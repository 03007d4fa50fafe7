"""The capsule viewer: a static page at /ui (service/ui/), drawn from the GraphQL API."""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

UI_DIR = Path(__file__).resolve().parent.parent / "ui"


def mount_ui(app: FastAPI) -> None:
    @app.get("/ui", include_in_schema=False)
    async def ui_page() -> FileResponse:
        return FileResponse(UI_DIR / "index.html", media_type="text/html")

    @app.get("/", include_in_schema=False)
    async def home() -> RedirectResponse:
        return RedirectResponse("/ui")

    app.mount("/ui/assets", StaticFiles(directory=UI_DIR), name="ui")
