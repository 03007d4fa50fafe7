from enum import Enum


class ContextState(str, Enum):
    IN_CONTEXT = "IN_CONTEXT"
    PINNED = "PINNED"
    SUMMARIZED = "SUMMARIZED"
    NOT_RENDERED = "NOT_RENDERED"
    OTHER_BRANCH = "OTHER_BRANCH"
    DELETED = "DELETED"


class DegradedKind(str, Enum):
    MALFORMED_LINE = "MALFORMED_LINE"
    UNKNOWN_ENTRY = "UNKNOWN_ENTRY"
    INVALID_BLOCK = "INVALID_BLOCK"
    DETACHED = "DETACHED"
    INVALID_TOOL = "INVALID_TOOL"


class ModelErrorCode(str, Enum):
    MODEL_ERROR = "MODEL_ERROR"
    MODEL_UNAVAILABLE = "MODEL_UNAVAILABLE"
    CONTEXT_OVERFLOW = "CONTEXT_OVERFLOW"


class Purpose(str, Enum):
    CHAT = "CHAT"
    SUMMARIZE = "SUMMARIZE"
    TASK = "TASK"
    EXTERNAL = "EXTERNAL"


class RequestFormat(str, Enum):
    ANTHROPIC_MESSAGES = "ANTHROPIC_MESSAGES"
    OPENAI_CHAT = "OPENAI_CHAT"


class Role(str, Enum):
    SYSTEM = "SYSTEM"
    USER = "USER"
    ASSISTANT = "ASSISTANT"
    TOOL = "TOOL"
    SUMMARY = "SUMMARY"
    CARRY = "CARRY"


class SearchKind(str, Enum):
    TEXT = "TEXT"
    THINKING = "THINKING"
    TITLE = "TITLE"
    LABEL = "LABEL"


class SessionOrder(str, Enum):
    CREATED = "CREATED"
    LAST_ACTIVITY = "LAST_ACTIVITY"


class ToolChoiceMode(str, Enum):
    AUTO = "AUTO"
    ANY = "ANY"
    NONE = "NONE"
    TOOL = "TOOL"


class TranscriptFormat(str, Enum):
    CLAUDE_CODE = "CLAUDE_CODE"
    PI = "PI"
    CODEX = "CODEX"


class TranscriptImportOutcome(str, Enum):
    NEW = "NEW"
    EXTENDED = "EXTENDED"
    UNCHANGED = "UNCHANGED"
