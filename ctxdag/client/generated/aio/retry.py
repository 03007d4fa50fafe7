from __future__ import annotations

from .base_model import BaseModel
from .fragments import TurnFields


class Retry(BaseModel):
    retry: RetryRetry


RetryRetry = TurnFields
Retry.model_rebuild()
