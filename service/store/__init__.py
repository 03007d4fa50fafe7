"""The ledger in Neo4j. The only package that talks to the database."""
from .db import Database, open_driver
from .ledger import Ledger
from ..model.models import (
    Appended, Branch, Call, CallRecord, Carried, DeletedBranch, HeadMove, Node, Purpose, Redaction,
    Rendered, Role, Session, Summary, SummaryStrategy,
)
from .paging import Page, Window
from .tool_sets import ToolSetVersion
from ..model.validate import Limits

__all__ = [
    "Appended", "Branch", "Call", "CallRecord", "Carried", "Database", "Purpose", "DeletedBranch", "HeadMove", "Ledger", "Limits", "Node",
    "Page", "Redaction", "Rendered", "Role", "Session", "Summary", "SummaryStrategy", "ToolSetVersion", "Window", "open_driver",
]
