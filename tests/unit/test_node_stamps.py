"""A node's canonical timestamp is read as text (records.Stamp), never built as the driver's
DateTime: what its import writes, and what it refuses, are what the DateTime path gives."""
import random

import pytest

from service.errors import BadInput
from service.store import records
from service.store.backup import _properties, _with_datetimes_as_text


def _written(value, stamps):
    """The text nodes_import is given for `value`, or the BadInput message refusing it (on
    reading it, or by the rule of a node's timestamp)."""
    rule = records.NODE["created_at"][1]
    try:
        properties = _properties({"created_at": value}, "node 'n'", stamps=stamps)
        rule(properties["created_at"], properties, None, "created_at")
    except BadInput as e:
        return "refused: " + e.message
    checked = _with_datetimes_as_text({"properties": properties})
    return checked["datetimes"]["created_at"], type(properties["created_at"])


def _some_stamp(pick: random.Random) -> str:
    """A timestamp of the canonical shape, each field now and then out of its range."""
    fields = (pick.choice(["0000", "0001", "0002", "1970", "2025", "9998", "9999"]),
              f"{pick.choice([0, 1, 2, 6, 12, 13]):02d}", f"{pick.choice([0, 1, 28, 29, 30, 31, 32]):02d}",
              f"{pick.choice([0, 12, 23, 24]):02d}", f"{pick.choice([0, 30, 59, 60]):02d}",
              f"{pick.choice([0, 7, 59, 60, 61]):02d}")
    fraction = pick.choice(["", ".5", ".123", ".123456", ".000000001", ".999999999"])
    offset = (pick.choice("+-") + f"{pick.choice([0, 1, 5, 14, 18, 19]):02d}:"
              + f"{pick.choice([0, 30, 45, 59, 60, 99]):02d}")
    return "{}-{}-{}T{}:{}:{}".format(*fields) + fraction + offset


def test_a_canonical_stamp_is_written_and_refused_as_its_datetime_is():
    pick = random.Random(20261206)
    seen = {"text": 0, "refused": 0}
    for _ in range(20_000):
        value = {"datetime": _some_stamp(pick)}
        slow, fast = _written(value, stamps=False), _written(value, stamps=True)
        if isinstance(slow, str):
            assert fast == slow, value
            seen["refused"] += 1
        else:
            assert fast[0] == slow[0], value
            seen["text"] += 1
    assert seen["text"] > 1_000 and seen["refused"] > 1_000, seen


@pytest.mark.parametrize("value", [
    {"datetime": "0001-01-01T00:00:00+05:00"},  # year 0 in UTC
    {"datetime": "9999-12-31T23:00:00-05:00"},  # year 10000 in UTC
    {"datetime": "2025-03-01T10:00:00+18:30"},
    {"datetime": "0000-00-00T00:30:07+00:00"},  # the driver's ZeroDate, no day at all
])
def test_an_edge_stamp_is_refused_as_its_datetime_is(value):
    assert _written(value, stamps=True) == _written(value, stamps=False)
    assert _written(value, stamps=True).startswith("refused: ")


@pytest.mark.parametrize("value", [
    {"datetime": "2025-03-01T10:00:00.5+02:00"},
    {"datetime": "2025-03-01T10:00:00-00:00"},
    {"datetime": "2025-12-31T23:59:59.999999999+18:00"},
])
def test_a_valid_canonical_stamp_is_read_as_text(value):
    text, kind = _written(value, stamps=True)
    assert kind is records.Stamp and text == _written(value, stamps=False)[0]


@pytest.mark.parametrize("value", [
    {"datetime": "٢٠٢٥-03-01T10:00:00+02:00"},  # digits, but not ASCII ones
    {"datetime": "2025-03-01T10:00:00+02:00[Europe/Berlin]"},  # a named zone
    {"datetime": "2025-03-01T10:00:00Z"},
    {"datetime": "2025-03-01T10:00:00+02:00", "note": 1},
])
def test_any_other_timestamp_is_read_as_a_datetime_or_refused(value):
    assert _written(value, stamps=True) == _written(value, stamps=False)
    written = _written(value, stamps=True)
    assert isinstance(written, str) or written[1] is not records.Stamp


def test_only_a_stamp_read_so_passes_as_text():
    with pytest.raises(BadInput, match="must be a datetime"):
        records.NODE["created_at"][1]("2025-03-01T10:00:00.000000000+02:00", {}, None, "t")
