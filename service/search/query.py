"""What a person types, as the Lucene queries of the ledger's two full-text indexes.

The syntax (docs/guides/search.md): words, all of which must match (in one field); a "quoted
phrase"; `-word` or `-"phrase"` excludes; `word*` matches words starting so. Matching is
the index's: case-insensitive, English stop words ignored, Chinese, Japanese and Korean
text by overlapping character pairs, so a run of such characters matches where it occurs
in the text; a single such character matches the pairs that hold it. Everything else a
person types is taken literally: no Lucene syntax reaches the index unescaped.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import Enum
from typing import Iterable, Sequence

from ..errors import BadInput

MAX_QUERY_LENGTH = 1000  # characters
MAX_TERMS = 32


class Field(str, Enum):
    """Where a hit matched (the `kinds` a search may be limited to)."""

    TEXT = "text"  # a node's text: messages, tool calls and results, summaries, ROOT
    THINKING = "thinking"  # the model's thinking blocks
    TITLE = "title"  # a session's title
    LABEL = "label"  # a node's label


# Index fields (cypher/migrations/010_search.cypher) per Field; labels have their own index.
_NODE_FIELDS = {Field.TEXT: "content", Field.THINKING: "thinking", Field.TITLE: "title"}
_LABEL_FIELD = "text"

_TOKEN = re.compile(r'(-?)"([^"]*)"|(\S+)')
_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')


@dataclass(frozen=True)
class Term:
    text: str
    excluded: bool = False
    prefix: bool = False  # `word*`

    def lucene(self) -> str:
        if self.prefix:
            return _LUCENE_SPECIAL.sub(r"\\\1", self.text.lower()) + "*"
        if _is_single_cjk(self.text):
            # The index holds such a character only inside its pairs (or alone).
            escaped = _LUCENE_SPECIAL.sub(r"\\\1", self.text)
            return f"({escaped}* OR *{escaped})"
        return '"' + self.text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Parsed:
    terms: tuple[Term, ...]

    @property
    def wanted(self) -> tuple[Term, ...]:
        """The terms a hit contains (what a snippet shows and highlights)."""
        return tuple(t for t in self.terms if not t.excluded)


def parse(query: str) -> Parsed:
    if not isinstance(query, str) or not query.strip():
        raise BadInput("query must name something to search for")
    if len(query) > MAX_QUERY_LENGTH:
        raise BadInput(f"query is {len(query)} characters; at most {MAX_QUERY_LENGTH}")
    terms: list[Term] = []
    for match in _TOKEN.finditer(query):
        if match.group(3) is not None:
            word = match.group(3)
            excluded = word.startswith("-") and len(word) > 1
            word = word[1:] if excluded else word
            prefix = word.endswith("*") and len(word.rstrip("*")) > 0
            word = word.rstrip("*") if prefix else word
            if _searchable(word):
                terms.append(Term(word, excluded, prefix))
        elif _searchable(match.group(2)):
            terms.append(Term(" ".join(match.group(2).split()), bool(match.group(1))))
    if not any(not t.excluded for t in terms):
        raise BadInput("query must name a word or phrase to find, not only ones to exclude")
    if len(terms) > MAX_TERMS:
        raise BadInput(f"query has {len(terms)} words or phrases; at most {MAX_TERMS}")
    return Parsed(tuple(terms))


def node_query(parsed: Parsed, tenant: str, fields: Iterable[Field],
               session_id: str | None) -> str | None:
    """The query of the nodes' index (`ledger_text`), or None when no field of it is asked."""
    chosen = [_NODE_FIELDS[f] for f in fields if f in _NODE_FIELDS]
    if session_id is not None:
        chosen = [f for f in chosen if f != "title"]  # sessions carry no session_id
    if not chosen:
        return None
    clauses = " ".join(f"{name}:({_all_of(parsed.terms)})" for name in chosen)
    scope = _clause("tenant", tenant)
    if session_id is not None:
        scope += " " + _clause("session_id", session_id)
    return f"{scope} +({clauses})"


def label_query(parsed: Parsed, tenant: str, fields: Iterable[Field],
                session_id: str | None) -> str | None:
    """The query of the labels' index (`label_text`), or None when labels are not asked."""
    if Field.LABEL not in set(fields):
        return None
    scope = _clause("tenant", tenant)
    if session_id is not None:
        scope += " " + _clause("session_id", session_id)
    return f"{scope} +{_LABEL_FIELD}:({_all_of(parsed.terms)})"


def _all_of(terms: Sequence[Term]) -> str:
    return " ".join(("-" if t.excluded else "+") + t.lucene() for t in terms)


def _clause(field: str, value: str) -> str:
    return f'+{field}:"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _searchable(word: str) -> bool:
    """Whether a word holds something the index keeps (a letter, digit or ideograph)."""
    return any(unicodedata.category(c)[0] in "LN" for c in word)


def _is_single_cjk(word: str) -> bool:
    return len(word) == 1 and _is_cjk(word)


def _is_cjk(char: str) -> bool:
    name = unicodedata.name(char, "")
    return name.startswith(("CJK ", "HIRAGANA", "KATAKANA", "HANGUL"))
