"""A large file's reading kept for its next import with its turns set aside (kept.py,
spill.py, packing.py): the shelf keeps a copy of what was set aside beside the reading, the reading
loaded reads its turns from that copy and reads on as the one kept, and packing it never
takes back what was set aside. A copy gone or not as it was made passes the reading over;
dropping or trimming a reading removes its copies."""
import os
import pickle
import zlib
from pathlib import Path

import pytest

from service.model.validate import Limits
from service.transcripts import detect, document_of, kept, packing, read, reading
from service.transcripts.model import Mode, NoTurns
from service.transcripts.reading import Reading
from service.transcripts.spill import opened

FIXTURES = Path(__file__).parent.parent / "fixtures" / "transcripts"
FILES = sorted(p for p in FIXTURES.rglob("*.jsonl") if "subagents" not in p.parts)


@pytest.fixture(autouse=True)
def every_turn_set_aside(monkeypatch):
    monkeypatch.setattr(reading, "LIVE_TURNS", 0)
    monkeypatch.setattr(kept, "KEPT_FROM_BYTES", 0)


def set_aside_reading(text: str, file: str) -> Reading:
    fed = Reading(file, detect(text, file, False), "t", Limits(), spill=opened())
    fed.feed(text)
    return fed


def turns_set_aside(fed: Reading) -> int:
    """Its turns set aside, building and made alike: each holds no blocks."""
    made = [turn for turn in fed._parsing.made if turn.aside is not None]
    buildings = [b for b in fed._parsing.turns if b.aside is not None]
    assert not any(map(holds_blocks, made + buildings))
    return len(buildings)


def holds_blocks(turn) -> bool:
    try:
        object.__getattribute__(turn, "blocks")
    except AttributeError:
        return False
    return True


def copies(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.aside"))


def side_texts(path: Path) -> dict[str, str]:
    side = path.parent / path.stem / "subagents"
    return {str(p): p.read_text() for p in side.iterdir()} if side.exists() else {}


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_a_reading_kept_with_its_turns_set_aside_reads_on_as_the_one_kept(path, tmp_path):
    texts = side_texts(path)
    lines = path.read_text().splitlines(keepends=True)
    whole = read("".join(lines), str(path), None, "t", Limits(), texts.__getitem__)
    shelf = kept.Shelf(tmp_path, "store", "t", Limits())
    kept_some = 0
    for cut in range(1, len(lines)):
        text = "".join(lines[:cut])
        fed = set_aside_reading(text, str(path))
        try:
            document_of(fed, text, texts.__getitem__, Mode())
        except NoTurns:
            continue
        aside = turns_set_aside(fed)
        shelf.keep(str(path), False, kept.kept_of(fed, None, text))
        assert turns_set_aside(fed) == aside  # packing it took none of them back
        if aside:
            kept_some += 1
            assert len(copies(tmp_path)) == 1, f"cut after line {cut}"
        taken = shelf.take(str(path), False, "".join(lines))
        assert taken is not None, f"cut after line {cut}"
        loaded, gained = taken
        assert turns_set_aside(loaded.reading) == aside
        loaded.reading.feed(gained)
        assert document_of(loaded.reading, "".join(lines), texts.__getitem__, Mode()) \
            == whole, f"cut after line {cut}"
    assert kept_some
    # Another file's text: nothing taken, and the reading and its copies let go.
    assert shelf.take(str(path), False, "{}\n" + "".join(lines)) is None
    assert list(tmp_path.iterdir()) == []


def longest() -> Path:
    return max(FILES, key=lambda p: len(p.read_text().splitlines()))


def kept_half(tmp_path: Path) -> tuple[kept.Shelf, Path, list[str]]:
    path = longest()
    lines = path.read_text().splitlines(keepends=True)
    text = "".join(lines[:len(lines) // 2])
    shelf = kept.Shelf(tmp_path / "shelf", "store", "t", Limits())
    fed = set_aside_reading(text, str(path))
    document_of(fed, text, side_texts(path).__getitem__, Mode())
    assert turns_set_aside(fed) > 0
    shelf.keep(str(path), False, kept.kept_of(fed, None, text))
    return shelf, path, lines


def test_a_reading_read_on_and_kept_again_keeps_one_copy_and_reuses_an_unchanged_one(tmp_path):
    shelf, path, lines = kept_half(tmp_path)
    (first,) = copies(shelf.folder)
    loaded = shelf.load(str(path), False)
    assert loaded is not None and loaded.reading.spill is not None
    assert loaded.reading.spill.read_only
    # Kept again with nothing more set aside: the copy it was read from is named again.
    shelf.keep(str(path), False, loaded)
    assert copies(shelf.folder) == [first]
    # Read on: its new turns go to a file of its own, copied beside the first; kept again
    # once more, its copies are the two its turns name.
    text = "".join(lines)
    loaded = shelf.load(str(path), False)
    loaded.reading.feed("".join(lines[len(lines) // 2:]))
    document_of(loaded.reading, text, side_texts(path).__getitem__, Mode())
    assert not loaded.reading.spill.read_only
    shelf.keep(str(path), False, kept.kept_of(loaded.reading, None, text))
    assert first in copies(shelf.folder) and len(copies(shelf.folder)) == 2
    again = shelf.load(str(path), False)
    assert document_of(again.reading, text, side_texts(path).__getitem__, Mode()) == \
        read(text, str(path), None, "t", Limits(), side_texts(path).__getitem__)
    shelf.drop(str(path), False)
    assert list(shelf.folder.iterdir()) == []


@pytest.mark.parametrize("harm", ["gone", "cut", "grown", "open to others"])
def test_a_copy_not_as_it_was_made_passes_the_reading_over(tmp_path, harm):
    shelf, path, _ = kept_half(tmp_path)
    (copy,) = copies(shelf.folder)
    if harm == "gone":
        copy.unlink()
    elif harm == "cut":
        os.truncate(copy, copy.stat().st_size - 1)
    elif harm == "grown":
        with copy.open("ab") as f:
            f.write(b"\0")
    else:
        copy.chmod(0o666)
    assert shelf.load(str(path), False) is None


def test_a_reading_naming_a_file_that_is_not_its_copy_is_passed_over(tmp_path):
    shelf, path, _ = kept_half(tmp_path)
    (copy,) = copies(shelf.folder)
    reading_file = next(shelf.folder.glob("*.reading"))
    other = shelf.folder / ("0" * 64 + copy.name[64:])
    copy.rename(other)  # a copy of another reading's, or any other file: never opened
    body = reading_file.read_bytes()
    reading_file.write_bytes(zlib.compress(zlib.decompress(body).replace(
        copy.name.encode(), other.name.encode())))
    assert shelf.load(str(path), False) is None


def test_a_reading_with_turns_set_aside_is_packed_only_with_its_copies(tmp_path):
    path = longest()
    text = path.read_text()
    fed = set_aside_reading(text, str(path))
    assert turns_set_aside(fed) > 0
    assert kept.packed(kept.kept_of(fed, None, text)) is None
    with pytest.raises(pickle.PicklingError):
        packing.packed(fed)


def test_a_copy_that_cannot_be_written_leaves_nothing_behind(tmp_path, monkeypatch):
    path = longest()
    text = path.read_text()
    fed = set_aside_reading(text, str(path))
    document_of(fed, text, side_texts(path).__getitem__, Mode())
    shelf = kept.Shelf(tmp_path, "store", "t", Limits())
    copy_into = type(fed.spill).copy_into

    def full(self, f):
        f.write(b"part")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(type(fed.spill), "copy_into", full)
    shelf.keep(str(path), False, kept.kept_of(fed, None, text))
    assert list(tmp_path.iterdir()) == []
    monkeypatch.setattr(type(fed.spill), "copy_into", copy_into)
    shelf.keep(str(path), False, kept.kept_of(fed, None, text))
    assert len(copies(tmp_path)) == 1 and shelf.load(str(path), False) is not None


def test_trimming_the_shelf_removes_a_reading_with_its_copies(tmp_path):
    shelf, path, lines = kept_half(tmp_path)
    old = sorted(shelf.folder.iterdir())
    assert len(old) == 2
    for f in old:
        os.utime(f, (1, 1))
    small = kept.Shelf(shelf.folder, "store", "t", Limits(), shelf_bytes=100)
    small.put("another.jsonl", False, b"another reading")
    assert sorted(shelf.folder.iterdir()) == [small._path("another.jsonl", False)]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(FIXTURES)) for p in FILES])
def test_a_reading_whose_rows_are_not_kept_is_kept_without_its_turns_made(path, tmp_path):
    """A large file's reading (its rows built a part at a time, none kept) is packed
    without the Turns made of its turns, which its next document makes again; one whose
    rows are kept (a file read whole) keeps them, as its rows are taken by their Turn."""
    texts = side_texts(path)
    lines = path.read_text().splitlines(keepends=True)
    cut = len(lines) // 2
    text, whole = "".join(lines[:cut]), "".join(lines)
    shelf = kept.Shelf(tmp_path, "store", "t", Limits())
    for rows_kept in (False, True):
        fed = set_aside_reading(text, str(path))
        try:
            if rows_kept:
                document_of(fed, text, texts.__getitem__, Mode())
            else:
                fed.plan(Mode(), None)
        except NoTurns:
            return
        assert fed._parsing.made and bool(fed.memo.rows) == rows_kept
        shelf.keep(str(path), False, kept.kept_of(fed, None, text))
        assert fed._parsing.made  # the reading packed is not changed
        loaded, gained = shelf.take(str(path), False, whole)
        assert bool(loaded.reading._parsing.made) == rows_kept
        loaded.reading.feed(gained)
        assert document_of(loaded.reading, whole, texts.__getitem__, Mode()) == \
            read(whole, str(path), None, "t", Limits(), texts.__getitem__)
