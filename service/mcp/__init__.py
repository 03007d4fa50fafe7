"""ctxdag over the Model Context Protocol (docs/guides/mcp.md): search, expand, render and trace
as tools any MCP client can call, over stdio (`ctxdag mcp`) and streamable HTTP beside the
GraphQL service (/mcp). A room above search/, recall/, context/ and turns/; api → mcp."""
from .server import TOOL_NAMES, mcp_server

__all__ = ["TOOL_NAMES", "mcp_server"]
