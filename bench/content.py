"""Deterministic conversation text: the same turns for ctxdag and for the peer.

A user message is about 160 characters, an assistant reply about 480; each opens
with a short sentence, so the extractive summarizers keep one line per turn.
Words are drawn from a fixed vocabulary with a seeded PRNG, so the text is not
trivially compressible and every run writes the same bytes.
"""
from __future__ import annotations

import json
import random

USER_CHARS = 160
ASSISTANT_CHARS = 480

_WORDS = (
    "graph node edge branch summary context token model prompt reply ledger session "
    "head root chain fork retry edit compaction budget window render provenance call "
    "read write index store page cache latency round trip transaction commit record "
    "tenant cursor metadata content message assistant user system tool depth seq tail "
    "segment cover splice active superseded rolling offline provider estimate cost "
    "benchmark floor ratio median sample warm measure disk bytes growth flat shape"
).split()

# What the offline provider stores on its replies (service/turns/providers.py).
ASSISTANT_METADATA = json.dumps({"model": "offline-echo", "offline": True, "provider": "offline"},
                                sort_keys=True)


def _words(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(_WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def user_text(i: int) -> str:
    rng = random.Random(i * 2 + 1)
    return f"Question {i}: what about the {rng.choice(_WORDS)}? " + _words(rng, USER_CHARS - 40)


def assistant_text(i: int) -> str:
    rng = random.Random(i * 2 + 2)
    return f"Answer {i}. The {rng.choice(_WORDS)} is fine. " + _words(rng, ASSISTANT_CHARS - 40)


def message(k: int) -> tuple[str, str]:
    """The k-th message of a conversation (k from 0): (role, content), user first."""
    turn = k // 2
    return ("user", user_text(turn)) if k % 2 == 0 else ("assistant", assistant_text(turn))
