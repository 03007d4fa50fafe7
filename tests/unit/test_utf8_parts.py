"""A long text is hashed as UTF-8 a part at a time (service/model/utf8.py), and what
that gives is what encoding it whole gives: at every cut, in the middle of a character of
two, three or four bytes too."""
import hashlib
import random

import pytest

from service.model import utf8
from service.store.transcripts import _imported, _refuse_rewritten, fingerprint
from service.errors import Conflict

TEXTS = ["", "a", "é\n", "line one\nline two\n€ and 𝄞\nlast, still written",
         "".join(random.Random(7).choice("ab\né€𝄞") for _ in range(200))]


@pytest.fixture(params=[1, 2, 3, 1 << 20], autouse=True)
def part_characters(request, monkeypatch):
    monkeypatch.setattr(utf8, "PART_CHARACTERS", request.param)


@pytest.mark.parametrize("text", TEXTS)
def test_parts_and_digest_are_the_text_encoded_whole(text):
    for stop in {None, 0, len(text) // 2, len(text)}:
        whole = text[:stop].encode("utf-8")
        assert b"".join(utf8.parts(text, stop)) == whole
        assert utf8.digest(text, stop) == (len(whole), hashlib.sha256(whole).hexdigest())


@pytest.mark.parametrize("text", TEXTS)
def test_after_is_what_follows_a_prefix_of_bytes_that_hashes_as_kept(text):
    data = text.encode("utf-8")
    for size in range(len(data) + 2):
        sha = hashlib.sha256(data[:size]).hexdigest()
        try:
            expected = data[size:].decode("utf-8") if size <= len(data) else None
        except UnicodeDecodeError:
            expected = None  # a cut inside a character
        assert utf8.after(text, size, sha) == expected, size
        if size <= len(data):
            assert utf8.after(text, size, hashlib.sha256(b"other").hexdigest()) is None


@pytest.mark.parametrize("text", TEXTS)
def test_what_an_import_notes_of_a_text_is_its_complete_lines(text):
    complete = text.encode("utf-8")[:text.encode("utf-8").rfind(b"\n") + 1]
    assert _imported(text) == {"bytes": len(complete),
                               "sha256": hashlib.sha256(complete).hexdigest()}
    body = (text + "\0side").encode("utf-8")
    named = hashlib.sha256(b"f.jsonl\0pi\0" + body).hexdigest()
    assert fingerprint(text, "f.jsonl", "pi", "\0side") == {
        "source_bytes": len(body), "source_prefix_sha256": named}


def test_a_file_that_no_longer_begins_with_what_was_imported_is_refused():
    text = "one €\ntwo 𝄞\nthree"
    source = '{"imported": %s}'
    for kept in ("one €\n", "one €\ntwo 𝄞\n"):
        data = kept.encode("utf-8")
        stored = source % f'{{"bytes": {len(data)}, "sha256": "{hashlib.sha256(data).hexdigest()}"}}'
        _refuse_rewritten(text, "f", "ses_x", stored)  # it only grew
        with pytest.raises(Conflict, match="no longer begins with"):
            _refuse_rewritten(text.replace("one", "One"), "f", "ses_x", stored)
        with pytest.raises(Conflict, match="is shorter than"):
            _refuse_rewritten(kept[:-2], "f", "ses_x", stored)
