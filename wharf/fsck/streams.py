"""Sorted streams and their merge: how ``wharf fsck`` compares two large sets without
holding either in memory.

Rules:

- Every stream is strictly increasing in its key, compared bytewise (UTF-8 binary order,
  which is also Python's ``str`` order): the order of S3's ListObjectsV2 and of
  :meth:`storage.blobstore.BlobStore.list_objects`.
- A database stream is read in keyset pages, ``WHERE key > :last ORDER BY key LIMIT n``,
  each page in its own short read transaction (no transaction stays open for the run),
  with the key compared bytewise: SQLite's default ``BINARY`` collation already is; on
  PostgreSQL a database whose default collation orders by code point (``C``, ``POSIX``,
  ``C.UTF-8``, the builtin provider) is read in its own order, which its unique indexes
  serve page by page; any other (``en_US.UTF-8`` puts ``a/b`` before ``a-c``) is read
  ``COLLATE "C"``, correct but a sort of the table's rows per page (see the operations
  guide).
- A stream found out of order stops the run (:class:`OutOfOrder`): merged with a wrong
  order, every key past the fault would be reported as orphaned or missing.
"""
from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import groupby
from typing import Any, Generic, TypeVar

from sqlalchemy import ColumnElement, Row, select, text
from sqlalchemy.orm import InstrumentedAttribute

from storage.db import Database

L = TypeVar("L")
R = TypeVar("R")
T = TypeVar("T")
Column = ColumnElement[Any] | InstrumentedAttribute[Any]


class OutOfOrder(RuntimeError):
    """A stream that should be sorted bytewise is not (a backend that lists otherwise)."""


#: Default collations (PostgreSQL, libc provider) that already order by code point.
CODE_POINT_COLLATIONS = frozenset({"C", "POSIX", "C.UTF-8", "C.utf8"})
_native: dict[str, bool] = {}


def native_bytewise(db: Database) -> bool:
    """Whether the database's own string order is bytewise (asked once per database)."""
    if not db.is_postgres:
        return True
    if db.url not in _native:
        with db.read() as s:
            row = s.execute(text(
                "SELECT datcollate, to_jsonb(d) ->> 'datlocprovider' FROM pg_database d "
                "WHERE datname = current_database()")).one()
        collate, provider = row[0], row[1] or "c"
        _native[db.url] = provider == "b" or (provider == "c" and collate in
                                              CODE_POINT_COLLATIONS)
    return _native[db.url]


def bytewise(db: Database, column: Column) -> Column:
    return column if native_bytewise(db) else column.collate("C")


def keyset(db: Database, key: Column, columns: Sequence[Column] = (),
           *, page_size: int) -> Iterator[Row[Any]]:
    """Rows ``(key, *columns)`` of one table in bytewise key order, ``page_size`` at a time;
    ``key`` must be unique in its table."""
    ordered = bytewise(db, key)
    last: str | None = None
    while True:
        query = select(key, *columns)
        if last is not None:
            query = query.where(ordered > last)
        with db.read() as s:
            rows: list[Row[Any]] = list(s.execute(query.order_by(ordered).limit(page_size)))
        yield from rows
        if len(rows) < page_size:
            return
        last = rows[-1][0]


def pages(fetch: Callable[[str | None], Sequence[T]], key: Callable[[T], str]) -> Iterator[T]:
    """Flatten keyset pages: ``fetch(after)`` returns the next page (empty at the end)."""
    after: str | None = None
    while page := fetch(after):
        yield from page
        after = key(page[-1])


def checked(items: Iterable[T], key: Callable[[T], str], name: str) -> Iterator[T]:
    """``items`` as they come, raising :class:`OutOfOrder` at the first that does not
    sort strictly after the one before it."""
    last: str | None = None
    for item in items:
        k = key(item)
        if last is not None and k <= last:
            raise OutOfOrder(f"{name} is not in bytewise key order: {k!r} after {last!r}")
        last = k
        yield item


def grouped(streams: Sequence[Iterable[T]], key: Callable[[T], str]) -> Iterator[
        tuple[str, list[T]]]:
    """Several sorted streams merged into one: each key once, with its items from every
    stream that has it."""
    merged = heapq.merge(*streams, key=key)
    for k, items in groupby(merged, key=key):
        yield k, list(items)


def outer_join(left: Iterable[L], right: Iterable[R], lkey: Callable[[L], str],
               rkey: Callable[[R], str]) -> Iterator[tuple[str, L | None, R | None]]:
    """A full outer merge join of two sorted streams: ``(key, left item or None, right
    item or None)`` in key order."""
    lit, rit = iter(left), iter(right)
    lv, rv = next(lit, None), next(rit, None)
    while lv is not None or rv is not None:
        if rv is None or (lv is not None and lkey(lv) < rkey(rv)):
            assert lv is not None
            yield lkey(lv), lv, None
            lv = next(lit, None)
        elif lv is None or rkey(rv) < lkey(lv):
            yield rkey(rv), None, rv
            rv = next(rit, None)
        else:
            yield lkey(lv), lv, rv
            lv, rv = next(lit, None), next(rit, None)


#: Candidates re-checked per query (orphans and missing alike, on both sides).
CONFIRM_BATCH = 500


class Candidates(Generic[T]):
    """Candidate findings collected from a merge and handed to ``confirm`` a batch at a
    time (:data:`CONFIRM_BATCH`): the re-check costs one query per batch, and nothing
    grows with the store."""

    def __init__(self, confirm: Callable[[list[T]], None]):
        self.confirm = confirm
        self.items: list[T] = []

    def add(self, item: T) -> None:
        self.items.append(item)
        if len(self.items) >= CONFIRM_BATCH:
            self.flush()

    def flush(self) -> None:
        batch, self.items = self.items, []
        self.confirm(batch)

