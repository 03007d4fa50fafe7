"""Answers encoded in pieces are the bytes strawberry's own encoding gives."""
import asyncio
import json

from service.api.encoding import (
    ON_LOOP_PIECES, RUN, SEND_CHUNK, OffLoopJSONResponse, json_text, pieces,
)


def test_pieces_join_to_strawberrys_encoding():
    answers = [
        {"data": None, "errors": [{"message": "é ☃ \"quoted\"\n", "extensions": {"code": "X"}}]},
        {"data": {"a": [], "b": {}, "c": [[], [{}], [1, 2.5, None, True]], "d": "\ud83d\ude00"}},
        {"data": {"nodes": [{"id": f"nod_{i}", "metadata": {"k": [i, {"deep": [i]}]}}
                            for i in range(3 * ON_LOOP_PIECES)]}},
        [{"data": {"x": 1}}, {"data": {"y": [{"z": "w"}]}}],  # a batch
        {"data": {"runs": [[{"i": i} for i in range(n)] + [[n]] + list(range(n))
                           for n in (RUN - 1, RUN, RUN + 1, 2 * RUN + 3)]}},
        {"data": {"e": [[], {}, [[]], [{}], {"a": []}], "f": 1e300, "g": -0.0}},
        {}, [], "a scalar", [[[[[]]]]], {"a": {"b": {"c": {"d": {}}}}},
    ]
    for answer in answers:
        expected = json.dumps(answer, separators=(",", ":"))
        assert "".join(pieces(answer)) == expected
        assert asyncio.run(json_text(answer)) == expected


def test_a_large_body_goes_out_in_chunks_under_its_whole_length():
    rows = [{"text": "x" * 1000 + str(i)} for i in range(3 * SEND_CHUNK // 1000)]
    answer = {"data": {"rows": rows}}
    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(OffLoopJSONResponse(answer)({"type": "http"}, None, send))
    start, *bodies = sent
    expected = json.dumps(answer, separators=(",", ":")).encode()
    assert dict(start["headers"])[b"content-length"] == str(len(expected)).encode()
    assert b"".join(b["body"] for b in bodies) == expected
    assert [b["more_body"] for b in bodies] == [True] * (len(bodies) - 1) + [False]
    assert len(bodies) == -(-len(expected) // SEND_CHUNK) > 1
