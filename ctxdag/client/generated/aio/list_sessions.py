from __future__ import annotations

from typing import Optional

from pydantic import Field

from .base_model import BaseModel
from .fragments import SessionFields


class ListSessions(BaseModel):
    sessions: ListSessionsSessions


class ListSessionsSessions(BaseModel):
    total_count: int = Field(alias="totalCount")
    nodes: list[ListSessionsSessionsNodes]
    page_info: ListSessionsSessionsPageInfo = Field(alias="pageInfo")


ListSessionsSessionsNodes = SessionFields


class ListSessionsSessionsPageInfo(BaseModel):
    has_next_page: bool = Field(alias="hasNextPage")
    end_cursor: Optional[str] = Field(alias="endCursor")


ListSessions.model_rebuild()
ListSessionsSessions.model_rebuild()
