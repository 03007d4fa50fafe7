"""A transcript whose entries hold values of the wrong kind where the format has ids,
types, lists or text (a dict for a parentUuid, a number for a content list, half a
surrogate pair in a key or a system prompt) is read into a document, or refused with a
coded error naming what is wrong, never a crash: every fixture of the suite, its lines
mutated at random (fixed seeds), read whole and checked as the store checks a new
session's document."""
import json
import random
from pathlib import Path

import pytest

from service.errors import CtxdagError
from service.model.validate import Limits
from service.store.transcripts import first_import_check
from service.transcripts import read

FIXTURES = sorted(p for p in (Path(__file__).parent.parent / "fixtures" / "transcripts")
                  .glob("*/*.jsonl"))
# Values of every JSON kind, and text no store takes (half a surrogate pair, NUL).
ODD = [None, 0, -1, 1.5, 2**70, True, "", " ", "\ud800", "xxx", [], {}, [1], {"a": 1},
       "2025-13-45T99:99:99Z", "\x00", -2**63, [None], {"type": None}]
# What names entries and their kinds is changed less often: a file without them is
# refused at its first line, and the paths behind them go untried.
NAMING = ("timestamp", "type", "uuid", "id")
CASES = 250


def mutated(value, rng: random.Random, depth: int = 0) -> None:
    """One value somewhere inside `value` replaced, removed or added."""
    if isinstance(value, dict) and value:
        key = rng.choice(list(value))
        if key in NAMING and rng.random() < 0.9:
            return
        roll = rng.random()
        if roll < 0.15:
            del value[key]
        elif roll < 0.55 and depth < 6 and isinstance(value[key], (dict, list)) and value[key]:
            mutated(value[key], rng, depth + 1)
        else:
            value[key] = rng.choice(ODD)
    elif isinstance(value, list) and value:
        index = rng.randrange(len(value))
        roll = rng.random()
        if roll < 0.15:
            del value[index]
        elif roll < 0.55 and isinstance(value[index], (dict, list)) and value[index]:
            mutated(value[index], rng, depth + 1)
        elif roll < 0.7:
            value.insert(index, rng.choice(ODD))
        else:
            value[index] = rng.choice(ODD)


@pytest.mark.parametrize("seed", range(4))
def test_mutated_entries_are_read_or_refused_with_a_coded_error(seed):
    rng = random.Random(seed)
    texts = {path: path.read_text().splitlines() for path in FIXTURES}
    read_whole = refused = 0
    for _ in range(CASES):
        path = rng.choice(FIXTURES)
        lines = list(texts[path])
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(lines))
            entry = json.loads(lines[at])
            mutated(entry, rng)
            lines[at] = json.dumps(entry)
        text = "\n".join(lines) + "\n"
        try:
            first_import_check(read(text, path.name, None, "t", Limits()), Limits())
            read_whole += 1
        except CtxdagError:
            refused += 1
    assert read_whole > CASES // 3 and refused > 0  # both ways are tried


def test_the_shapes_that_crashed_are_read_or_refused():
    """The mutations that once raised TypeError, AttributeError or UnicodeEncodeError."""
    fixtures = Path(__file__).parent.parent / "fixtures" / "transcripts"

    def outcome(name: str, at: int, change) -> str:
        lines = (fixtures / name).read_text().splitlines()
        entry = json.loads(lines[at])
        change(entry)
        lines[at] = json.dumps(entry)
        try:
            first_import_check(read("\n".join(lines) + "\n", Path(name).name, None, "t",
                                    Limits()), Limits())
            return "read"
        except CtxdagError as e:
            return e.code

    def set_in(*path, to):
        def change(entry):
            for key in path[:-1]:
                entry = entry[key]
            entry[path[-1]] = to
        return change

    claude, pi, codex = "claude_code/session.jsonl", "pi/tree.jsonl", \
        "codex/rollout-2025-09-14T08-00-00-0199a1b2-codex.jsonl"
    assert outcome(claude, 2, set_in("parentUuid", to={"a": 1})) == "read"  # detached
    assert outcome(claude, 1, set_in("uuid", to="u\ud800")) in ("read", "BAD_INPUT")
    assert outcome(pi, 2, set_in("parentId", to=["x"])) == "BAD_INPUT"
    assert outcome(codex, 0, set_in("payload", "base_instructions",
                                    to={"text": "Be \ud800 brief"})) in ("read", "BAD_INPUT")
