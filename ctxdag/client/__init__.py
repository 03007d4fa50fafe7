"""A typed Python client of ctxdag's GraphQL API, sync (`Client`) and async (`AsyncClient`).

Their methods return the generated models (generated/, from schema.graphql and
operations/ by ariadne-codegen: `make client`); every error is a CtxdagError carrying the
service's code. docs/client.md has the walk-through."""
from .aio import AsyncClient
from .errors import CtxdagError, TurnFailed
from .sync import Client
from .tools import Tool, ToolResult, tool_uses

__all__ = ["AsyncClient", "Client", "CtxdagError", "Tool", "ToolResult", "TurnFailed",
           "tool_uses"]
