"""The BlobStore's interface: what every store does, the objects it describes, and the key
rule every store checks."""
from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import IO

CHUNK = 1024 * 1024
#: The smallest part of a resumable upload but its last (S3's rule, kept by every store).
MIN_PART = 5 * 1024 * 1024
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

    def read_whole(self, key: str, limit: int) -> tuple[ObjectInfo, bytes | None]:
        """Size, ETag and, when the object is at most ``limit`` bytes, its whole content
        (None when it is larger: nothing beyond ``limit`` is read into memory).
        :class:`BlobNotFound` if missing. Stores that can do it in one request (S3: one
        GET; a file: one open) override this; the default asks twice (HEAD, then read)."""
        info = self.head(key)
        if info.size > limit:
            return info, None
        return info, b"".join(self.open(key, end=info.size - 1)) if info.size else b""

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

    # -- resumable uploads: parts that outlive the process that wrote them ------------------
    # The caller keeps the upload id and the parts' tags (durably); after a crash it goes on
    # with the next part. Parts may be sent again under the same number (the last one
    # counts). Every part but the last is at least MIN_PART bytes.

    @abstractmethod
    def start_upload(self, key: str) -> str:
        """Begin a resumable upload to ``key``; its upload id."""

    @abstractmethod
    def put_part(self, key: str, upload_id: str, number: int, body: IO[bytes],
                 size: int) -> str:
        """Store ``size`` bytes read from ``body`` as part ``number`` (1..10000) of the
        upload; the part's tag, which :meth:`finish_upload` needs."""

    @abstractmethod
    def finish_upload(self, key: str, upload_id: str,
                      parts: Sequence[tuple[int, str]]) -> ObjectInfo:
        """Join ``parts`` (number, tag), in order, into the object ``key``."""

    @abstractmethod
    def abort_upload(self, key: str, upload_id: str) -> None:
        """Drop the upload's parts (an unknown or finished upload: nothing to do)."""

    def ping(self) -> None:
        list(zip(range(1), self.list_keys()))
