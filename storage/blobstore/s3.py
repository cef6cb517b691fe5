"""``S3BlobStore`` (``s3://bucket[/prefix]``): boto3 with a client config that works with
S3-compatible servers; large objects go up as multipart uploads with a bounded number of
parts in memory; a failed upload is aborted, so nothing partial is kept."""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC
from typing import IO, TYPE_CHECKING, ParamSpec, TypeVar

from storage.blobstore.interface import CHUNK, BlobStore, ListedObject, ObjectInfo, check_key
from storage.errors import BlobNotFound, BlobStoreUnavailable, BucketNotFound

if TYPE_CHECKING:  # the stubs are a dev dependency
    from botocore.response import StreamingBody
    from types_boto3_s3 import S3Client

P = ParamSpec("P")
T = TypeVar("T")

PING_TIMEOUT = 2  # seconds to connect, and to read, for a health check of the store


class S3BlobStore(BlobStore):
    """S3 through boto3. ``part_size`` bytes per multipart part, at most ``max_parts_in_flight``
    parts in memory (uploading concurrently) at any time per upload.

    Part buffers are reused: chunks are copied once into a ``part_size`` bytearray that goes
    to ``upload_part`` as it is, and up to ``max_parts_in_flight`` idle buffers are kept for
    the next upload. Allocating and freeing a fresh 8 MiB buffer per part fragments the
    allocator's per-thread heaps, so the API process's RSS kept growing with every
    request thread that had served an upload.
    """

    def __init__(self, bucket: str, prefix: str = "", *, endpoint_url: str | None = None,
                 region: str | None = None, part_size: int = 8 * 1024 * 1024,
                 max_parts_in_flight: int = 4, client: S3Client | None = None):
        import boto3
        from botocore.config import Config
        self.bucket = bucket
        self.prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        self.part_size = max(5 * 1024 * 1024, part_size)
        self.max_parts_in_flight = max(1, max_parts_in_flight)
        self._spare: list[bytearray] = []  # idle part buffers, at most max_parts_in_flight
        self._spare_lock = threading.Lock()
        # The health check's own client (short timeouts, one attempt).
        self._pinger: S3Client | None = None
        self.client = client or boto3.client(
            "s3", endpoint_url=endpoint_url, region_name=region or "us-east-1",
            config=Config(request_checksum_calculation="when_required",
                          response_checksum_validation="when_required",
                          s3={"addressing_style": "path"},
                          retries={"max_attempts": 3, "mode": "standard"},
                          connect_timeout=5, read_timeout=60,
                          max_pool_connections=max(10, self.max_parts_in_flight * 2)))

    def _k(self, key: str) -> str:
        return self.prefix + check_key(key)

    def _missing_bucket(self) -> BucketNotFound:
        return BucketNotFound(f"the bucket {self.bucket!r} does not exist "
                              f"(WHARF_BLOB_STORE_URL); create it or fix the URL")

    def _translate(self, exc: Exception, key: str) -> Exception:
        from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError
        from botocore.exceptions import ConnectionError as BCE
        if isinstance(exc, ClientError):
            code = str(exc.response.get("Error", {}).get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            if code == "NoSuchBucket":
                return self._missing_bucket()
            if code in ("404", "NoSuchKey", "NotFound") or status == 404:
                return BlobNotFound(f"no object {key}")
            if status >= 500 or code in ("SlowDown", "RequestTimeout", "InternalError"):
                return BlobStoreUnavailable(f"blob store error {code}")
            return exc
        if isinstance(exc, (BCE, EndpointConnectionError, BotoCoreError, OSError)):
            return BlobStoreUnavailable(f"blob store unreachable: {type(exc).__name__}")
        return exc

    def _call(self, fn: Callable[P, T], key: str, *args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:  # translated to our error family
            translated = self._translate(exc, key)
            if translated is exc:
                raise
            raise translated from exc

    def _buffer(self) -> bytearray:
        with self._spare_lock:
            if self._spare:
                return self._spare.pop()
        return bytearray(self.part_size)

    def _recycle(self, buf: bytearray) -> None:
        with self._spare_lock:
            if len(buf) == self.part_size and len(self._spare) < self.max_parts_in_flight:
                self._spare.append(buf)

    @staticmethod
    def _fill(buf: bytearray, carry: memoryview | None,
              chunks: Iterator[bytes]) -> tuple[int, memoryview | None]:
        """Copy ``carry`` (the rest of the previous chunk), then further chunks, into ``buf``
        until it is full or the chunks end; returns (bytes in ``buf``, the rest of the last
        chunk)."""
        n, size = 0, len(buf)
        while n < size:
            if not carry:
                chunk = next(chunks, None)
                if chunk is None:
                    return n, None
                carry = memoryview(chunk).cast("B")
                continue
            take = min(size - n, len(carry))
            buf[n:n + take] = carry[:take]
            n += take
            carry = carry[take:]
        return n, carry

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ObjectInfo:
        full = self._k(key)
        it = iter(chunks)
        # Fill the first part; a small object goes up in one PUT.
        buf = self._buffer()
        try:
            length, carry = self._fill(buf, None, it)
        except BaseException:
            self._recycle(buf)
            raise
        if length < self.part_size:
            body = bytes(memoryview(buf)[:length])
            self._recycle(buf)
            res = self._call(self.client.put_object, key, Bucket=self.bucket, Key=full, Body=body)
            return ObjectInfo(key, len(body), res["ETag"].strip('"'))
        return self._multipart(key, full, buf, carry, it)

    def _multipart(self, key: str, full: str, first: bytearray, carry: memoryview | None,
                   rest: Iterator[bytes]) -> ObjectInfo:
        try:
            upload_id = self._call(self.client.create_multipart_upload, key,
                                   Bucket=self.bucket, Key=full)["UploadId"]
        except BaseException:
            self._recycle(first)
            raise
        parts: dict[int, str] = {}
        # One slot per part buffer, taken before the buffer is filled: at most
        # max_parts_in_flight buffers (filling or uploading) per upload.
        slots = threading.BoundedSemaphore(self.max_parts_in_flight)
        slots.acquire()  # the first part's, already filled
        size = 0

        def upload(number: int, buf: bytearray, length: int) -> None:
            try:
                if length < len(buf):
                    del buf[length:]  # the last part, sent without a copy (not reused)
                # botocore sends any bytes-like Body; the stubs name only bytes and files.
                res = self._call(self.client.upload_part, key, Bucket=self.bucket, Key=full,
                                 UploadId=upload_id, PartNumber=number,
                                 Body=buf)  # type: ignore[arg-type]
                parts[number] = res["ETag"]
            finally:
                self._recycle(buf)  # botocore holds no reference once upload_part returns
                slots.release()

        pool = ThreadPoolExecutor(self.max_parts_in_flight, thread_name_prefix="s3-part")
        futures = []
        try:
            buf, length, number = first, self.part_size, 0
            while True:
                number += 1
                size += length
                futures.append(pool.submit(upload, number, buf, length))
                for f in [f for f in futures if f.done()]:
                    f.result()  # surface a failed part early
                    futures.remove(f)
                if length < self.part_size:
                    break
                slots.acquire()
                buf = self._buffer()
                try:
                    length, carry = self._fill(buf, carry, rest)
                except BaseException:
                    self._recycle(buf)
                    raise
                if length == 0:
                    self._recycle(buf)
                    slots.release()
                    break
            for f in futures:
                f.result()
            res = self._call(self.client.complete_multipart_upload, key, Bucket=self.bucket,
                             Key=full, UploadId=upload_id,
                             MultipartUpload={"Parts": [{"PartNumber": n, "ETag": parts[n]}
                                                        for n in sorted(parts)]})
            return ObjectInfo(key, size, res["ETag"].strip('"'))
        except BaseException:
            for f in futures:
                f.cancel()
            pool.shutdown(wait=True)
            try:
                self.client.abort_multipart_upload(Bucket=self.bucket, Key=full,
                                                   UploadId=upload_id)
            except Exception:
                pass  # an abandoned upload is cleaned by the bucket's lifecycle rule
            raise
        finally:
            pool.shutdown(wait=True)

    def start_upload(self, key: str) -> str:
        return self._call(self.client.create_multipart_upload, key, Bucket=self.bucket,
                          Key=self._k(key))["UploadId"]

    def put_part(self, key: str, upload_id: str, number: int, body: IO[bytes],
                 size: int) -> str:
        res = self._call(self.client.upload_part, key, Bucket=self.bucket, Key=self._k(key),
                         UploadId=upload_id, PartNumber=number, Body=body,
                         ContentLength=size)
        return res["ETag"]

    def finish_upload(self, key: str, upload_id: str,
                      parts: Sequence[tuple[int, str]]) -> ObjectInfo:
        res = self._call(self.client.complete_multipart_upload, key, Bucket=self.bucket,
                         Key=self._k(key), UploadId=upload_id,
                         MultipartUpload={"Parts": [{"PartNumber": n, "ETag": tag}
                                                    for n, tag in parts]})
        return ObjectInfo(key, self.head(key).size, res["ETag"].strip('"'))

    def abort_upload(self, key: str, upload_id: str) -> None:
        try:
            self._call(self.client.abort_multipart_upload, key, Bucket=self.bucket,
                       Key=self._k(key), UploadId=upload_id)
        except BlobNotFound:
            pass  # NoSuchUpload: already finished or aborted

    def head(self, key: str) -> ObjectInfo:
        try:
            res = self._call(self.client.head_object, key, Bucket=self.bucket,
                             Key=self._k(key))
        except BlobNotFound:
            # A HEAD's 404 has no body: it cannot say whether the key or the bucket is
            # missing. Ask once more before calling an object gone.
            self.check_bucket()
            raise
        return ObjectInfo(key, int(res["ContentLength"]), res["ETag"].strip('"'))

    def open(self, key: str, start: int = 0, end: int | None = None,
             chunk_size: int = CHUNK) -> Iterator[bytes]:
        if start or end is not None:
            res = self._call(self.client.get_object, key, Bucket=self.bucket, Key=self._k(key),
                             Range=f"bytes={start}-{'' if end is None else end}")
        else:
            res = self._call(self.client.get_object, key, Bucket=self.bucket, Key=self._k(key))
        return self._iter(res["Body"], key, chunk_size)

    def read_whole(self, key: str, limit: int) -> tuple[ObjectInfo, bytes | None]:
        """One GET: its headers give size and ETag; the body is read only when it is at
        most ``limit`` bytes (otherwise the response is closed unread)."""
        res = self._call(self.client.get_object, key, Bucket=self.bucket, Key=self._k(key))
        body = res["Body"]
        info = ObjectInfo(key, int(res["ContentLength"]), res["ETag"].strip('"'))
        try:
            if info.size > limit:
                return info, None
            try:
                return info, body.read()
            except Exception as exc:
                raise self._translate(exc, key) from exc
        finally:
            body.close()

    def _iter(self, body: StreamingBody, key: str, chunk_size: int) -> Iterator[bytes]:
        try:
            while True:
                try:
                    data = body.read(chunk_size)
                except Exception as exc:
                    raise self._translate(exc, key) from exc
                if not data:
                    return
                yield data
        finally:
            body.close()

    def delete(self, key: str) -> None:
        try:
            self._call(self.client.delete_object, key, Bucket=self.bucket, Key=self._k(key))
        except BlobNotFound:
            pass

    def list_objects(self, prefix: str = "", page_size: int = 1000) -> Iterator[ListedObject]:
        """ListObjectsV2, one page (at most ``page_size`` keys) at a time: S3 returns keys
        in UTF-8 binary order; the store's prefix, the same on every key, keeps it."""
        paginator = self.client.get_paginator("list_objects_v2")
        try:
            for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix + prefix,
                                           PaginationConfig={"PageSize": page_size}):
                for item in page.get("Contents", []):
                    modified = item["LastModified"]
                    if modified.tzinfo is None:
                        modified = modified.replace(tzinfo=UTC)
                    yield ListedObject(item["Key"][len(self.prefix):], int(item["Size"]),
                                       modified.astimezone(UTC))
        except Exception as exc:
            translated = self._translate(exc, prefix)
            if translated is exc:
                raise
            raise translated from exc

    def check_bucket(self, client: S3Client | None = None) -> None:
        """:class:`BucketNotFound` (naming the bucket) if the bucket does not exist."""
        try:
            self._call((client or self.client).head_bucket, "", Bucket=self.bucket)
        except BlobNotFound as exc:  # a HEAD's 404 has no code: here it can only be the bucket
            raise self._missing_bucket() from exc

    def ping(self) -> None:
        """A health check with a short budget: one attempt, 2 s to connect and 2 s to read
        (the data client retries for minutes against a hung endpoint), on a client of its
        own so a slow storage ties up no request thread for long."""
        self.check_bucket(self._ping_client())

    def _ping_client(self) -> S3Client:
        if self._pinger is None:
            import boto3
            from botocore.config import Config
            meta = self.client.meta
            self._pinger = boto3.client(
                "s3", endpoint_url=meta.endpoint_url, region_name=meta.region_name,
                config=meta.config.merge(Config(
                    connect_timeout=PING_TIMEOUT, read_timeout=PING_TIMEOUT,
                    retries={"total_max_attempts": 1, "mode": "standard"},
                    max_pool_connections=2)))
        return self._pinger

    def ensure_bucket(self) -> None:
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except Exception:
            self._call(self.client.create_bucket, self.bucket, Bucket=self.bucket)
