from __future__ import annotations

from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .enums import ContextState, Role, SearchKind


class Search(BaseModel):
    search: SearchSearch


class SearchSearch(BaseModel):
    nodes: list[SearchSearchNodes]
    page_info: SearchSearchPageInfo = Field(alias="pageInfo")


class SearchSearchNodes(BaseModel):
    session_id: str = Field(alias="sessionId")
    session_title: Optional[str] = Field(alias="sessionTitle")
    score: float
    matched_in: SearchKind = Field(alias="matchedIn")
    snippet: str
    highlights: list[SearchSearchNodesHighlights]
    node: SearchSearchNodesNode
    context: SearchSearchNodesContext


class SearchSearchNodesHighlights(BaseModel):
    start: int
    end: int


class SearchSearchNodesNode(BaseModel):
    id: str
    role: Role
    content: str


class SearchSearchNodesContext(BaseModel):
    state: ContextState
    head_id: str = Field(alias="headId")
    summary_id: Optional[str] = Field(alias="summaryId")


class SearchSearchPageInfo(BaseModel):
    has_next_page: bool = Field(alias="hasNextPage")
    end_cursor: Optional[str] = Field(alias="endCursor")


Search.model_rebuild()
SearchSearch.model_rebuild()
SearchSearchNodes.model_rebuild()
