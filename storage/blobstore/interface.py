"""The BlobStore's interface: what every store does, the objects it describes, and the key
rule every store checks."""
from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

CHUNK = 1024 * 1024
KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9/_.-]{0,1000}$")


@dataclass(frozen=True)
class ObjectInfo:
    key: str
    size: int
    etag: str


@dataclass(frozen=True)
class ListedObject:
    """One object of a listing: its key, size and last-modified time (UTC)."""
    key: str
    size: int
    modified: datetime


def check_key(key: str) -> str:
    if not KEY_RE.match(key) or ".." in key.split("/"):
        raise ValueError(f"invalid object key {key!r}")
    return key


class BlobStore(ABC):
    @abstractmethod
    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ObjectInfo:
        """Store the concatenated chunks under ``key`` (replacing it); all or nothing."""

    @abstractmethod
    def head(self, key: str) -> ObjectInfo:
        """Size and ETag of ``key``; :class:`BlobNotFound` if missing."""

    @abstractmethod
    def open(self, key: str, start: int = 0, end: int | None = None,
             chunk_size: int = CHUNK) -> Iterable[bytes]:
        """Yield bytes ``start..end`` (inclusive) of ``key``; :class:`BlobNotFound` if missing."""

    @abstractmethod
    def delete(self, key: str) -> None:
        """Delete ``key``; deleting a missing key succeeds."""

    def list_keys(self, prefix: str = "") -> Iterator[str]:
        """Every key under ``prefix``, in bytewise order (see :meth:`list_objects`)."""
        return (obj.key for obj in self.list_objects(prefix))

    @abstractmethod
    def list_objects(self, prefix: str = "", page_size: int = 1000) -> Iterator[ListedObject]:
        """Every object under ``prefix``, streamed in bytewise (UTF-8 binary) key order,
        with its size and last-modified time (``wharf fsck`` merges it with the database's
        references and ages orphans by it). ``page_size``: keys per listing request, where
        the backend pages."""

    def ping(self) -> None:
        list(zip(range(1), self.list_keys()))
