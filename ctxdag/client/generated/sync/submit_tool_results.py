from __future__ import annotations

from pydantic import Field

from .base_model import BaseModel
from .fragments import TurnFields


class SubmitToolResults(BaseModel):
    submit_tool_results: SubmitToolResultsSubmitToolResults = Field(
        alias="submitToolResults"
    )


SubmitToolResultsSubmitToolResults = TurnFields
SubmitToolResults.model_rebuild()
