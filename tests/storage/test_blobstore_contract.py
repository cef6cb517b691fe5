"""One contract, two BlobStores: the filesystem and S3 (moto's server over HTTP)."""
from __future__ import annotations

import hashlib
import io
import os

import pytest

from storage.blobstore import BlobNotFound
from storage.blobstore.interface import MIN_PART
from storage.errors import BlobStoreUnavailable


def chunks_of(data: bytes, size: int = 64 * 1024):
    for i in range(0, len(data), size):
        yield data[i:i + size]


@pytest.mark.parametrize("size", [0, 1, 5 * 1024 * 1024 + 1, 11 * 1024 * 1024 + 3])
def test_round_trip_is_byte_exact(blob_store, size):
    data = os.urandom(size)
    info = blob_store.put_stream("ab/obj", chunks_of(data))
    assert info.size == size
    assert blob_store.head("ab/obj").size == size
    got = b"".join(blob_store.open("ab/obj"))
    assert hashlib.sha256(got).digest() == hashlib.sha256(data).digest()


def test_ranges(blob_store):
    data = bytes(range(256)) * 100
    blob_store.put_stream("r", chunks_of(data, 1000))
    assert b"".join(blob_store.open("r", 10, 19)) == data[10:20]
    assert b"".join(blob_store.open("r", len(data) - 1, len(data) - 1)) == data[-1:]
    assert b"".join(blob_store.open("r", 25000)) == data[25000:]


def test_replace_and_delete_are_idempotent(blob_store):
    blob_store.put_stream("k", [b"one"])
    first = blob_store.head("k").etag
    blob_store.put_stream("k", [b"two!"])
    assert b"".join(blob_store.open("k")) == b"two!"
    assert blob_store.head("k").etag != first
    blob_store.delete("k")
    blob_store.delete("k")  # missing is fine
    with pytest.raises(BlobNotFound):
        blob_store.head("k")


def test_missing_key_is_one_domain_error(blob_store):
    with pytest.raises(BlobNotFound):
        blob_store.head("missing")
    with pytest.raises(BlobNotFound):
        b"".join(blob_store.open("missing"))
    with pytest.raises(BlobNotFound):
        blob_store.read_whole("missing", 1024)


@pytest.mark.parametrize("size", [0, 1, 64 * 1024])
def test_read_whole_gives_head_s_size_and_etag_with_the_bytes(blob_store, size):
    """The small-object read (one request): what ``head`` says, and the whole content
    when it fits the limit; above it, the size and ETag without the bytes."""
    data = os.urandom(size)
    blob_store.put_stream("small/obj", chunks_of(data))
    head = blob_store.head("small/obj")
    info, got = blob_store.read_whole("small/obj", size)
    assert (info.size, info.etag, got) == (head.size, head.etag, data)
    if size:
        info, got = blob_store.read_whole("small/obj", size - 1)
        assert (info.size, info.etag, got) == (head.size, head.etag, None)


def test_failed_stream_keeps_nothing(blob_store):
    def broken():
        yield b"x" * (6 * 1024 * 1024)
        raise ValueError("client went away")

    with pytest.raises(ValueError):
        blob_store.put_stream("partial", broken())
    with pytest.raises(BlobNotFound):
        blob_store.head("partial")
    assert list(blob_store.list_keys()) == []


def test_list_keys(blob_store):
    for k in ("a/1", "a/2", "b/1"):
        blob_store.put_stream(k, [b"x"])
    assert sorted(blob_store.list_keys()) == ["a/1", "a/2", "b/1"]
    assert sorted(blob_store.list_keys("a/")) == ["a/1", "a/2"]


def test_list_objects_streams_bytewise_order_with_size_and_age(blob_store):
    """Keys come out in UTF-8 binary order (S3's ListObjectsV2 order) on both stores: a
    path sort would put ``a/b`` before ``a-c`` ('/' sorts after '-' bytewise)."""
    from datetime import UTC, datetime, timedelta
    keys = ["a/b", "a-c", "a.d", "a/a/z", "b", "A", "a0", "assets/x", "assets-y"]
    before = datetime.now(UTC) - timedelta(seconds=5)
    for i, k in enumerate(keys):
        blob_store.put_stream(k, [b"x" * i])
    listed = list(blob_store.list_objects(page_size=2))
    assert [o.key for o in listed] == sorted(keys, key=lambda k: k.encode())
    assert {o.key: o.size for o in listed} == {k: i for i, k in enumerate(keys)}
    after = datetime.now(UTC) + timedelta(seconds=5)
    assert all(before <= o.modified <= after for o in listed)
    assert [o.key for o in blob_store.list_objects("a/")] == ["a/a/z", "a/b"]
    assert [o.key for o in blob_store.list_objects("assets")] == ["assets-y", "assets/x"]
    assert list(blob_store.list_keys()) == [o.key for o in listed]


def test_invalid_keys_are_refused(blob_store):
    for bad in ("../etc/passwd", "/abs", "a/../../b", ""):
        with pytest.raises(ValueError):
            blob_store.put_stream(bad, [b"x"])


def test_missing_bucket_is_named_and_retryable_not_a_missing_object(s3_server):
    """A bucket that does not exist is a deployment problem: every call says which bucket
    (never ``BlobNotFound``, which would fail verification for good or count a deletion
    as done), and it is retryable like an unreachable store."""
    from storage.blobstore import BlobStoreUnavailable, BucketNotFound, S3BlobStore
    store = S3BlobStore("wharf-no-such-bucket", "objects", endpoint_url=s3_server.endpoint)
    calls = {"head": lambda: store.head("k"), "open": lambda: b"".join(store.open("k")),
             "put": lambda: store.put_stream("k", [b"x"]), "delete": lambda: store.delete("k"),
             "list": lambda: list(store.list_keys()), "ping": store.ping}
    for name, call in calls.items():
        with pytest.raises(BucketNotFound) as info:
            call()
        assert "wharf-no-such-bucket" in str(info.value), name
        assert isinstance(info.value, BlobStoreUnavailable)


def test_resumable_upload_joins_parts_in_order_and_a_resent_part_replaces(blob_store):
    first, second = os.urandom(MIN_PART), os.urandom(MIN_PART + 17)
    upload = blob_store.start_upload("takeouts/a.zip")
    tag1 = blob_store.put_part("takeouts/a.zip", upload, 1, io.BytesIO(b"x" * MIN_PART), MIN_PART)
    # a part sent again (a writer that resumed after a crash): the last one counts
    tag1 = blob_store.put_part("takeouts/a.zip", upload, 1, io.BytesIO(first), MIN_PART)
    last = io.BytesIO(b"tail" + b"!" * 10)
    tag3 = blob_store.put_part("takeouts/a.zip", upload, 3, last, 4)  # only `size` bytes
    tag2 = blob_store.put_part("takeouts/a.zip", upload, 2, io.BytesIO(second), len(second))
    with pytest.raises(BlobNotFound):
        blob_store.head("takeouts/a.zip")  # nothing visible before the finish
    info = blob_store.finish_upload("takeouts/a.zip", upload,
                                    [(1, tag1), (2, tag2), (3, tag3)])
    assert info.size == 2 * MIN_PART + 17 + 4
    assert b"".join(blob_store.open("takeouts/a.zip")) == first + second + b"tail"


def test_aborted_upload_leaves_nothing(blob_store):
    upload = blob_store.start_upload("takeouts/b.zip")
    tag = blob_store.put_part("takeouts/b.zip", upload, 1, io.BytesIO(b"abc"), 3)
    blob_store.abort_upload("takeouts/b.zip", upload)
    blob_store.abort_upload("takeouts/b.zip", upload)  # again: nothing to do
    # files: its parts are gone; S3: NoSuchUpload (moto answers a 500 instead)
    with pytest.raises((BlobNotFound, BlobStoreUnavailable)):
        blob_store.finish_upload("takeouts/b.zip", upload, [(1, tag)])
    with pytest.raises(BlobNotFound):
        blob_store.head("takeouts/b.zip")
    assert list(blob_store.list_keys("takeouts/")) == []
