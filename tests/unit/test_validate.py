import pytest

from service.errors import BadInput
from service.store import Limits, Role
from service.store import validate


def test_content_limit_counts_utf8_bytes():
    limits = Limits(max_content_bytes=10)
    assert validate.content("0123456789", limits) == "0123456789"
    with pytest.raises(BadInput, match="11 bytes"):
        validate.content("é" * 5 + "x", limits)


def test_system_prompt_may_be_empty_but_messages_may_not():
    assert validate.content("", Limits(), allow_empty=True) == ""
    with pytest.raises(BadInput, match="empty"):
        validate.content("   ", Limits())


def test_roles_that_can_be_appended():
    assert validate.appendable_role("tool") is Role.TOOL
    assert validate.appendable_role(Role.USER) is Role.USER
    for bad in ("system", "summary", "USER", "", None):
        with pytest.raises(BadInput):
            validate.appendable_role(bad)


def test_json_object_is_canonical_and_bounded():
    assert validate.json_object({"b": 1, "a": "é"}, Limits(), "m") == '{"a": "é", "b": 1}'
    with pytest.raises(BadInput):
        validate.json_object({"a": object()}, Limits(), "m")
    with pytest.raises(BadInput):
        validate.json_object({1: "a"}, Limits(), "m")
