"""The BlobStore: one interface, two implementations chosen by ``WHARF_BLOB_STORE_URL``.

- ``S3BlobStore`` (``s3://bucket[/prefix]``): boto3 with a client config that works with
  S3-compatible servers; large objects go up as multipart uploads with a bounded number of
  parts in memory; a failed upload is aborted, so nothing partial is kept.
- ``FileBlobStore`` (``file:///path``): writes to a temporary file, fsyncs, and renames it
  into place atomically.

Both stream: ``put_stream`` consumes an iterator of chunks, ``open`` yields chunks, and
``list_objects`` yields the stored objects (key, size, last modified) one at a time in
bytewise (UTF-8 binary) key order -- S3's ListObjectsV2 order, which the filesystem store
reproduces by walking one directory at a time -- so a listing can be merged with another
sorted stream without holding either in memory. A missing
key is :class:`BlobNotFound` whatever the backend; an unreachable backend is
:class:`BlobStoreUnavailable` (retryable).
"""
from urllib.parse import unquote, urlsplit

from storage.blobstore.files import FileBlobStore, FileRange
from storage.blobstore.interface import CHUNK, BlobStore, ListedObject, ObjectInfo
from storage.blobstore.s3 import S3BlobStore
from storage.errors import BlobNotFound, BlobStoreUnavailable, BucketNotFound

__all__ = ["CHUNK", "BlobNotFound", "BlobStore", "BlobStoreUnavailable", "BucketNotFound",
           "FileBlobStore", "FileRange", "ListedObject", "ObjectInfo", "S3BlobStore",
           "blob_store_from_url"]


def blob_store_from_url(url: str, *, endpoint_url: str | None = None,
                        region: str | None = None) -> BlobStore:
    parts = urlsplit(url)
    if parts.scheme == "file":
        return FileBlobStore(unquote(parts.path))
    if parts.scheme == "s3":
        return S3BlobStore(parts.netloc, parts.path, endpoint_url=endpoint_url, region=region)
    raise ValueError(f"unsupported blob store URL {url!r}")
