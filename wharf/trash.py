"""Trash: placeholder until the trash capability lands (see submit_due_purges)."""
from __future__ import annotations


def submit_due_purges(db, settings, now, limit: int = 1000) -> int:
    return 0
