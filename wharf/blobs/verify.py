"""Re-checking a stored object before it is published (run by the workers).

A small object (at most :data:`wharf.blobs.ingest.SMALL_OBJECT` bytes) is re-checked with
one read of the store (S3: one GET, whose headers give size and ETag and whose body is
hashed), where a larger one takes a HEAD and then a streamed read. A worker's batch
re-checks its objects concurrently (``verify_many``), at most :data:`PARALLEL` at once."""
from __future__ import annotations

import hashlib
import hmac
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from storage.blobstore import BlobNotFound, BlobStore
from wharf.blobs.errors import VerificationFailed
from wharf.blobs.ingest import SMALL_OBJECT

#: At most this many objects of a batch are re-checked at once (each holds one store
#: connection, and a small object's bytes, while it runs).
PARALLEL = 8
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _threads() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(PARALLEL, thread_name_prefix="verify")
        return _pool


def verify_many(store: BlobStore, objects: Sequence[tuple[str, int, str, str]],
                rehash: bool) -> None:
    """``verify_object`` for each (key, size, ETag, SHA-256), concurrently; raises the
    first failure (in ``objects`` order) once every check has ended."""
    if len(objects) <= 1:
        for key, size, etag, sha256 in objects:
            verify_object(store, key, size, etag, sha256, rehash)
        return
    futures = [_threads().submit(verify_object, store, key, size, etag, sha256, rehash)
               for key, size, etag, sha256 in objects]
    errors = [f.exception() for f in futures]
    for exc in errors:
        if exc is not None:
            raise exc


def verify_object(store: BlobStore, key: str, size: int, object_etag: str, sha256: str,
                  rehash: bool) -> None:
    """Re-check a stored object: size and ETag always, the SHA-256 when ``rehash``."""
    if rehash and size <= SMALL_OBJECT:
        try:
            info, data = store.read_whole(key, size)
        except BlobNotFound:
            raise VerificationFailed("the uploaded object is missing") from None
        _check(info.size, info.etag, size, object_etag)
        if data is None or not hmac.compare_digest(hashlib.sha256(data).hexdigest(), sha256):
            raise VerificationFailed("the stored bytes do not hash to the uploaded SHA-256")
        return
    try:
        info = store.head(key)
    except BlobNotFound:
        raise VerificationFailed("the uploaded object is missing") from None
    _check(info.size, info.etag, size, object_etag)
    if rehash:
        digest = hashlib.sha256()
        for chunk in store.open(key):
            digest.update(chunk)
        if not hmac.compare_digest(digest.hexdigest(), sha256):
            raise VerificationFailed("the stored bytes do not hash to the uploaded SHA-256")


def _check(stored_size: int, stored_etag: str, size: int, object_etag: str) -> None:
    if stored_size != size:
        raise VerificationFailed(f"stored size {stored_size} != uploaded size {size}")
    if not hmac.compare_digest(stored_etag, object_etag):
        raise VerificationFailed("the stored object changed since it was uploaded")
