import pytest

from service.errors import BadInput
from service.store import Limits, Role
from service.model import validate


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


def test_stored_json_is_what_json_object_could_write():
    limits = Limits(max_metadata_bytes=20)
    assert validate.stored_json_object('{"a": 1}', limits, "m") == {"a": 1}
    for text, says in (("not json{", "not valid JSON"), ("[1]", "must be a JSON object"),
                       ('{"a": NaN}', "NaN is not a JSON number"),
                       ('{"a": 1, "a": 2}', "names a key twice"),
                       ("[" * 10, "not valid JSON"), ('{"k": "' + "v" * 20 + '"}', "limit is 20"),
                       ("[" * 5_000 + "]" * 5_000, "limit is 20"), (5, "stored as a string")):
        with pytest.raises(BadInput, match=says):
            validate.stored_json_object(text, limits, "m")
    with pytest.raises(BadInput, match="nests too deeply"):
        validate.stored_json_object("[" * 5_000 + "]" * 5_000, Limits(), "m")


def test_extra_meta_must_be_an_object_before_its_keys_are_read():
    assert validate.extra_meta(None, Limits()) == "{}"
    for bad in (5, True, False, "{}", ["a"]):
        with pytest.raises(BadInput, match="must be a JSON object"):
            validate.extra_meta(bad, Limits())


def test_read_ids_are_bounded_and_named_once():
    from service.store import Purpose

    limits = Limits(max_call_reads=3)
    assert validate.read_ids(["a", "b", "c"], limits, Purpose.EXTERNAL) == ("a", "b", "c")
    assert len(validate.read_ids([str(i) for i in range(5)], limits, Purpose.CHAT)) == 5
    with pytest.raises(BadInput, match="at most 3 nodes"):
        validate.read_ids(["a", "b", "c", "d"], limits, Purpose.EXTERNAL)
    with pytest.raises(BadInput, match="name 1 nodes more than once: a$"):
        validate.read_ids(["a", "b", "a"], limits, Purpose.EXTERNAL)
    for bad in ([], "abc", ["a", ""], None):
        with pytest.raises(BadInput):
            validate.read_ids(bad, limits, Purpose.EXTERNAL)


def test_names_are_short_valid_text():
    assert validate.name("claude-sonnet", "model") == "claude-sonnet"
    for bad in ("", "  ", "m" * 201, "m\ud800", None, 3):
        with pytest.raises(BadInput):
            validate.name(bad, "model")


def test_some_names_the_first_ten_and_counts_the_rest():
    assert validate.some(["a", "b"]) == "a, b"
    assert validate.some([f"n{i}" for i in range(12)]) == (
        "n0, n1, n2, n3, n4, n5, n6, n7, n8, n9 and 2 more")


def test_json_objects_nest_at_most_32_deep():
    def nested(levels):
        value = {}
        for _ in range(levels):
            value = {"a": [value]}
        return value

    assert validate.json_object(nested(15), Limits(), "m")  # 31 levels: 15 pairs and the top
    for levels in (16, 100_000):
        with pytest.raises(BadInput, match="more than 32 deep"):
            validate.json_object(nested(levels), Limits(), "m")
    # Its text counts brackets within strings too; only the value's own nesting counts.
    assert validate.json_object({"a": "{[" * 40}, Limits(), "m")
    deep_and_unwritable, cycle = nested(20), {"a": []}
    deep_and_unwritable["b"] = object()
    cycle["a"].append(cycle)
    for value in (deep_and_unwritable, cycle):  # named by their depth, as before
        with pytest.raises(BadInput, match="more than 32 deep"):
            validate.json_object(value, Limits(), "m")
    with pytest.raises(BadInput, match="not JSON-serializable"):
        validate.json_object({"a": [object()]}, Limits(), "m")


def test_instructions_are_optional_non_blank_and_bounded_in_characters():
    assert validate.instructions(None) is None
    assert validate.instructions("Keep the numbers.") == "Keep the numbers."
    assert validate.instructions("é" * validate.MAX_INSTRUCTIONS_LENGTH) == "é" * 4000
    for blank in ("", "   ", "\n\t"):
        with pytest.raises(BadInput, match="blank"):
            validate.instructions(blank)
    with pytest.raises(BadInput, match="4001 characters; the limit is 4000"):
        validate.instructions("x" * 4001)
    with pytest.raises(BadInput, match="must be a string"):
        validate.instructions(5)
    with pytest.raises(BadInput, match="not valid Unicode"):
        validate.instructions("a\ud800")


def test_a_timestamp_is_one_neo4j_holds_and_the_driver_can_send():
    from datetime import datetime, timedelta, timezone
    from zoneinfo import ZoneInfo

    import pytz
    from neo4j.time import DateTime

    def at(minutes: int) -> timezone:
        return timezone(timedelta(minutes=minutes))

    for good in (datetime(1, 1, 1, tzinfo=timezone.utc), datetime(1, 1, 1, tzinfo=at(-840)),
                 datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc),
                 datetime(9999, 12, 31, 23, tzinfo=at(840)), datetime(2020, 1, 1, tzinfo=at(1080)),
                 datetime(2020, 1, 1, tzinfo=at(-1080)), datetime(2020, 1, 1, tzinfo=at(345)),
                 DateTime(2020, 1, 1, 0, 0, 0, 123456789, tzinfo=at(120)),
                 # An import's named zone (pytz rounds local mean time to whole minutes).
                 pytz.timezone("Europe/Paris").localize(datetime(1800, 1, 1))):
        assert validate.timestamp(good, "t") is good
    for bad, says in ((datetime(2020, 1, 1), "with an offset or zone"),
                      (datetime(1, 1, 1, tzinfo=at(840)), "outside years 1 to 9999"),
                      (datetime(9999, 12, 31, 23, tzinfo=at(-840)), "outside years 1 to 9999"),
                      (DateTime(1, 1, 1, tzinfo=at(1)), "outside years 1 to 9999"),
                      (datetime(2020, 1, 1, tzinfo=at(1081)), "whole minutes within"),
                      (datetime(2020, 1, 1, tzinfo=at(-1410)), "whole minutes within"),
                      (datetime(2020, 1, 1, tzinfo=timezone(timedelta(seconds=1))),
                       "whole minutes within"),
                      # The driver refuses a zone's offset in seconds too (Paris's local
                      # mean time, +00:09:21).
                      (datetime(1800, 1, 1, tzinfo=ZoneInfo("Europe/Paris")),
                       "whole minutes within")):
        with pytest.raises(BadInput, match=says):
            validate.timestamp(bad, "t")
