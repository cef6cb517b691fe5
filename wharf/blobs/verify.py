"""Re-checking a stored object before it is published (run by the workers)."""
from __future__ import annotations

import hashlib
import hmac

from storage.blobstore import BlobNotFound, BlobStore
from wharf.blobs.errors import VerificationFailed


def verify_object(store: BlobStore, key: str, size: int, object_etag: str, sha256: str,
                  rehash: bool) -> None:
    """Re-check a stored object: size and ETag always, the SHA-256 when ``rehash``."""
    try:
        info = store.head(key)
    except BlobNotFound:
        raise VerificationFailed("the uploaded object is missing") from None
    if info.size != size:
        raise VerificationFailed(f"stored size {info.size} != uploaded size {size}")
    if not hmac.compare_digest(info.etag, object_etag):
        raise VerificationFailed("the stored object changed since it was uploaded")
    if rehash:
        digest = hashlib.sha256()
        for chunk in store.open(key):
            digest.update(chunk)
        if not hmac.compare_digest(digest.hexdigest(), sha256):
            raise VerificationFailed("the stored bytes do not hash to the uploaded SHA-256")
