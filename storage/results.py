"""What a DML statement run through ``Session.execute`` tells about its rows.

``Session.execute`` is typed to return ``Result``; for an INSERT, UPDATE or DELETE it
returns a ``CursorResult``, the class that has ``rowcount``. This narrows it once, here.
"""
from __future__ import annotations

from sqlalchemy import CursorResult


def rowcount(result: object) -> int:
    """The number of rows an UPDATE or DELETE matched."""
    if not isinstance(result, CursorResult):
        raise TypeError(f"not the result of a DML statement: {type(result).__name__}")
    return result.rowcount
