"""The piece of a hit's text a person reads: a window around its first match, with every
match in it marked by its character offsets."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from .query import Term

SNIPPET_LENGTH = 200  # characters
_LEAD = 60  # characters shown before the first match


@dataclass(frozen=True)
class Snippet:
    text: str
    highlights: tuple[tuple[int, int], ...]  # [start, end) offsets into `text`


def matches(text: str, terms: Sequence[Term]) -> list[tuple[int, int]]:
    """Where the terms occur in `text`, case-insensitively, in order, not overlapping.
    (The index matches words; this finds the same words as substrings, which is what a
    reader needs to see them.)"""
    folded = text.casefold()
    if len(folded) != len(text):  # a case fold that changes lengths: offsets would drift
        folded = text.lower() if len(text.lower()) == len(text) else text
    found: list[tuple[int, int]] = []
    for term in terms:
        needle = term.text.casefold()
        start = folded.find(needle)
        while needle and start != -1:
            found.append((start, start + len(needle)))
            start = folded.find(needle, start + len(needle))
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def snippet(text: str, terms: Sequence[Term]) -> Snippet:
    found = matches(text, terms)
    start = max(0, found[0][0] - _LEAD) if found else 0
    end = min(len(text), start + SNIPPET_LENGTH)
    window = text[start:end]
    prefix = "…" if start > 0 else ""
    suffix = "…" if end < len(text) else ""
    shift = len(prefix) - start
    marks = tuple((a + shift, min(b, end) + shift) for a, b in found if a < end)
    return Snippet(prefix + window + suffix, marks)
