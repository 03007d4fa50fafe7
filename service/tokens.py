"""The fast token estimate stored on every node (about four characters a token)."""
from __future__ import annotations


def estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4
