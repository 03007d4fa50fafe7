"""Input checks that need no database. Each failure is a BadInput a person can act on."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from ..errors import BadInput
from .models import Role

MAX_ID_LENGTH = 128
MAX_TITLE_LENGTH = 200
APPENDABLE_ROLES = (Role.USER, Role.ASSISTANT, Role.TOOL)
RESERVED_META_PREFIX = "_"


@dataclass(frozen=True)
class Limits:
    max_content_bytes: int = 1024 * 1024
    max_metadata_bytes: int = 64 * 1024


def utf8_size(text: str, what: str) -> int:
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError as e:
        raise BadInput(f"{what} is not valid Unicode text (position {e.start})") from e


def content(text: object, limits: Limits, what: str = "content", allow_empty: bool = False) -> str:
    if not isinstance(text, str):
        raise BadInput(f"{what} must be a string")
    size = utf8_size(text, what)
    if not allow_empty and not text.strip():
        raise BadInput(f"{what} is empty")
    if size > limits.max_content_bytes:
        raise BadInput(
            f"{what} is {size} bytes; the limit is {limits.max_content_bytes} bytes of UTF-8",
            size=size, limit=limits.max_content_bytes,
        )
    return text


def appendable_role(value: object) -> Role:
    try:
        role = Role(value.value if isinstance(value, Role) else value)
    except ValueError:
        allowed = ", ".join(r.value for r in APPENDABLE_ROLES)
        raise BadInput(f"role {value!r} is not one of: {allowed}") from None
    if role not in APPENDABLE_ROLES:
        allowed = ", ".join(r.value for r in APPENDABLE_ROLES)
        raise BadInput(f"role {role.value!r} cannot be appended (allowed: {allowed}); "
                       "ROOT holds the system prompt and summaries are written by compaction")
    return role


def identifier(value: object, what: str) -> str:
    if not isinstance(value, str) or not value or len(value) > MAX_ID_LENGTH:
        raise BadInput(f"{what} must be a non-empty string of at most {MAX_ID_LENGTH} characters")
    utf8_size(value, what)
    return value


def optional_identifier(value: object, what: str) -> str | None:
    return None if value is None else identifier(value, what)


def title(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadInput("title must be a string")
    utf8_size(value, "title")
    if len(value) > MAX_TITLE_LENGTH:
        raise BadInput(f"title is {len(value)} characters; the limit is {MAX_TITLE_LENGTH}")
    return value


def json_object(value: Mapping[str, Any] | None, limits: Limits, what: str) -> str:
    """Serializes a JSON object for storage; refuses anything else or anything too large."""
    if value is None:
        return "{}"
    if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
        raise BadInput(f"{what} must be a JSON object with string keys")
    try:
        text = json.dumps(dict(value), ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as e:
        raise BadInput(f"{what} is not JSON-serializable: {e}") from e
    size = utf8_size(text, what)
    if size > limits.max_metadata_bytes:
        raise BadInput(f"{what} is {size} bytes of JSON; the limit is {limits.max_metadata_bytes}")
    return text


def user_meta_keys(patch: Mapping[str, Any]) -> None:
    reserved = sorted(k for k in patch if isinstance(k, str) and k.startswith(RESERVED_META_PREFIX))
    if reserved:
        raise BadInput(f"extra_meta keys starting with '{RESERVED_META_PREFIX}' are reserved "
                       f"for ctxdag itself: {reserved}")


def page_size(first: object, maximum: int = 100) -> int:
    if not isinstance(first, int) or isinstance(first, bool) or not 1 <= first <= maximum:
        raise BadInput(f"first must be an integer from 1 to {maximum}")
    return first
