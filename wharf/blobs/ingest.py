"""Streaming in: count, hash and sniff in one pass; where new objects go, and dropping one
nobody will reference."""
from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from storage.blobstore import BlobStore
from storage.db import Database
from storage.memory import release_free_memory
from wharf.blobs.errors import SizeMismatch
from wharf.deletion import service as deletion
from wharf.infra.ids import ID_PATTERN

log = logging.getLogger("wharf.blobs")

CHUNK = 1024 * 1024
SNIFF_BYTES = 64 * 1024
TRIM_AFTER = 16 * 1024 * 1024  # uploads at least this large hand freed heap back after
#: The small-object threshold, declared once: a body of at most this many bytes is held
#: whole in memory -- an asset upload reads it in one piece, hashes and sniffs it, and
#: stores it with one write (S3: one ``PutObject``); the verifier re-reads such an object
#: with one read (S3: one ``GetObject``, no ``HeadObject``). Anything larger streams in
#: ``CHUNK``-sized pieces and is never held whole.
SMALL_OBJECT = 1024 * 1024


def object_key_for(object_id: str) -> str:
    """The store key of a new object: the bare id. Where objects live is the operator's
    choice, made once in ``WHARF_BLOB_STORE_URL`` (``s3://bucket/objects`` → bucket keys
    ``objects/<id>``; ``file:///srv/blobs`` → ``/srv/blobs/<id>``). Keys recorded by
    earlier releases (``objects/<id>``, under the same URL prefix) stay readable as they are.
    """
    return object_id


def asset_key_for(asset_id: str) -> str:
    """The store key of a new asset's object: ``assets/<id>``."""
    return f"assets/{asset_id}"


#: Every key shape Wharf writes (and ``wharf fsck`` may call an orphan and repair): a
#: blob's bare id (:func:`object_key_for`), an asset's ``assets/<id>``
#: (:func:`asset_key_for`), and ``objects/<id>``, a blob key of earlier releases. Anything
#: else in the store is not Wharf's.
OBJECT_KEY_RE = re.compile(rf"\A(?:assets/|objects/)?{ID_PATTERN.strip('^$')}\Z")


# --- streaming in: count, hash and sniff in one pass -----------------------------------

@dataclass(frozen=True)
class Ingested:
    size: int
    sha256: str
    mime_type: str
    object_etag: str


_RISKY = re.compile(r"^(text/html|application/xhtml|image/svg|text/xml|application/xml|"
                    r"application/javascript|text/javascript|application/ecmascript|"
                    r"text/ecmascript|text/xsl|multipart/x-mixed-replace)")


def risky(media_type: str) -> bool:
    """Whether a browser could run script from content of this type (HTML, XHTML, SVG,
    XML and XSL, JavaScript, multipart/x-mixed-replace): such content is only ever
    served as an attachment."""
    lower = media_type.lower()
    return bool(_RISKY.match(lower)) or lower.split(";", 1)[0].strip().endswith("+xml")


def sniff(head: bytes, filename: str) -> str:
    """The server-detected MIME type, from the first bytes (libmagic via python-magic)."""
    if not head:
        return "application/octet-stream"
    import magic  # here, not at import: loads libmagic and its database on first sniff
    mime = magic.from_buffer(head, mime=True) or "application/octet-stream"
    lower = filename.lower()
    if mime == "text/plain" and lower.endswith(".csv"):
        mime = "text/csv"  # libmagic calls short CSV samples plain text
    if mime in ("application/zip", "application/octet-stream") and lower.endswith(".docx") \
            and b"word/" in head:
        mime = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    return mime


def body_chunks(read: Callable[[int], bytes], size: int) -> Iterator[bytes]:
    """Yield exactly ``size`` bytes of the body; SizeMismatch if it is shorter or longer."""
    received = 0
    while received < size:
        data = read(min(CHUNK, size - received))
        if not data:
            raise SizeMismatch(f"the body ended after {received} of {size} bytes")
        received += len(data)
        if received > size:
            raise SizeMismatch(f"the body is longer than the declared {size} bytes")
        yield data
    if read(1):
        raise SizeMismatch(f"the body is longer than the declared {size} bytes")


def ingest(store: BlobStore, key: str, read: Callable[[int], bytes], size: int,
           filename: str) -> Ingested:
    """Stream exactly ``size`` bytes from ``read`` into ``key``; all or nothing."""
    sha = hashlib.sha256()
    head = bytearray()
    received = 0

    def chunks() -> Iterator[bytes]:
        nonlocal received
        for data in body_chunks(read, size):
            received += len(data)
            sha.update(data)
            if len(head) < SNIFF_BYTES:
                head.extend(data[:SNIFF_BYTES - len(head)])
            yield data

    try:
        info = store.put_stream(key, chunks())
    finally:
        if received >= TRIM_AFTER:
            release_free_memory()
    return Ingested(info.size, sha.hexdigest(), sniff(bytes(head), filename), info.etag)


def _drop(db: Database, key: str) -> None:
    try:
        with db.write() as s:
            deletion.schedule(s, key, "upload_abandoned")
    except Exception:  # the reservation stays and comes due later
        log.warning("could not queue %s for deletion now", key, exc_info=True)
