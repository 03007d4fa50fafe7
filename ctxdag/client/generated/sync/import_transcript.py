from __future__ import annotations

from pydantic import Field

from .base_model import BaseModel
from .enums import DegradedKind, TranscriptImportOutcome
from .fragments import SessionFields


class ImportTranscript(BaseModel):
    import_transcript: ImportTranscriptImportTranscript = Field(
        alias="importTranscript"
    )


class ImportTranscriptImportTranscript(BaseModel):
    session: ImportTranscriptImportTranscriptSession
    outcome: TranscriptImportOutcome
    written: int
    degraded: list[ImportTranscriptImportTranscriptDegraded]


ImportTranscriptImportTranscriptSession = SessionFields


class ImportTranscriptImportTranscriptDegraded(BaseModel):
    file: str
    line: int
    kind: DegradedKind
    reason: str


ImportTranscript.model_rebuild()
ImportTranscriptImportTranscript.model_rebuild()
