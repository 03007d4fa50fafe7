"""Importing an agent transcript over GraphQL: its input and result types."""
import enum
from typing import Optional

import strawberry
from strawberry.types import Info

from .. import transcripts
from ..transcripts.batch import import_text
from ..model.validate import file_name as checked_file_name
from .types import Session, session_out

TranscriptFormat = strawberry.enum(transcripts.Format, name="TranscriptFormat",
                                   description="A tool whose session files import.")


@strawberry.enum(description="What an import wrote.")
class TranscriptImportOutcome(enum.Enum):
    NEW = "new"  # the transcript's session did not exist: imported whole
    EXTENDED = "extended"  # the session held part of it: only the entries it gained
    UNCHANGED = "unchanged"  # the session held all of it: nothing written


DegradedKind = strawberry.enum(transcripts.DegradedKind, name="DegradedKind",
                              description="What an import did with an entry it could not map.")


@strawberry.type(description="An entry an import skipped or kept only a mention of, and why.")
class DegradedEntry:
    file: str
    line: int
    kind: DegradedKind
    reason: str


@strawberry.type
class TranscriptImport:
    session: Session
    outcome: TranscriptImportOutcome
    written: int = strawberry.field(description="Nodes written by this import.")
    degraded: list[DegradedEntry] = strawberry.field(description=(
        "The entries it could not map, by line: skipped (malformed lines, unknown entry "
        "types) or a text mention in place of a block the ledger refuses. Empty under "
        "`strict`, which refuses the file instead."))


async def import_transcript(info: Info, content: str, format: Optional[transcripts.Format],
                            file_name: Optional[str], strict: bool) -> TranscriptImport:
    ledger = info.context.services.ledger
    file = "" if file_name is None else checked_file_name(file_name, "fileName")
    mode = transcripts.Mode(strict)
    stored = await import_text(ledger, content, file, format.value if format else None, mode,
                               info.context.runtime.readings(ledger, server=True))
    outcome = (TranscriptImportOutcome.NEW if stored.created else
               TranscriptImportOutcome.EXTENDED if stored.changed else
               TranscriptImportOutcome.UNCHANGED)
    return TranscriptImport(session=session_out(await ledger.sessions.get(stored.session_id)),
                            outcome=outcome, written=stored.written, degraded=[
                                DegradedEntry(file=d.file, line=d.line, kind=d.kind,
                                              reason=d.reason) for d in mode.degraded])
