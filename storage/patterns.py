"""LIKE patterns built from user text: the text matches itself, not as a pattern."""
from __future__ import annotations


def escape_like(value: str) -> str:
    """``value`` as a LIKE pattern matching itself (escape character ``\\``; pass
    ``escape="\\\\"`` to ``like``)."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
