"""``FileBlobStore`` (``file:///path``): writes to a temporary file, fsyncs, and renames it
into place atomically; ``FileRange`` reads a range of a stored file."""
from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from storage.blobstore.interface import CHUNK, BlobStore, ListedObject, ObjectInfo, check_key
from storage.errors import BlobNotFound


def _tag(st: os.stat_result) -> str:
    """A change-detecting tag: size + mtime in nanoseconds + inode (every write renames a
    new file into place, so a rewrite always changes it)."""
    return f"{st.st_size:x}-{st.st_mtime_ns:x}-{st.st_ino:x}"


#: A temporary part this old was left by a process killed mid-write (no write takes a
#: day): a store opening the directory deletes it.
STALE_PART_SECONDS = 24 * 3600


class FileBlobStore(BlobStore):
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.tmp = self.root / ".tmp"
        self.tmp.mkdir(exist_ok=True)
        self.remove_stale_parts()

    def remove_stale_parts(self, older_than: float = STALE_PART_SECONDS) -> int:
        """Delete the temporary parts of writes that never finished (a kill -9 between
        the first byte and the rename) and are older than ``older_than`` seconds; a part
        a live process is writing is younger. Returns how many went."""
        limit = datetime.now(UTC).timestamp() - older_than
        removed = 0
        for entry in os.scandir(self.tmp):
            try:
                if entry.name.endswith(".part") and entry.stat().st_mtime < limit:
                    os.unlink(entry.path)
                    removed += 1
            except FileNotFoundError:
                continue  # renamed or removed meanwhile
        return removed

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def put_stream(self, key: str, chunks: Iterable[bytes]) -> ObjectInfo:
        target = self._path(key)
        tmp = self.tmp / f"{uuid.uuid4().hex}.part"
        try:
            with open(tmp, "wb") as fh:
                for chunk in chunks:
                    if chunk:
                        fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, target)
            dir_fd = os.open(target.parent, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return self.head(key)

    def _part(self, upload_id: str, number: int) -> Path:
        if not (upload_id.isalnum() and 1 <= number <= 10_000):
            raise ValueError(f"invalid upload {upload_id!r} part {number}")
        # In the temporary directory, named like every part: a crashed upload's parts go
        # with the stale ones (remove_stale_parts) if nobody finishes or aborts it.
        return self.tmp / f"up-{upload_id}-{number:05d}.part"

    def start_upload(self, key: str) -> str:
        check_key(key)
        return uuid.uuid4().hex

    def put_part(self, key: str, upload_id: str, number: int, body: IO[bytes],
                 size: int) -> str:
        target = self._part(upload_id, number)
        digest = hashlib.md5(usedforsecurity=False)
        self._write_part(target, _limited(body, size, digest))
        return digest.hexdigest()

    def _write_part(self, target: Path, chunks: Iterable[bytes]) -> None:
        tmp = self.tmp / f"{uuid.uuid4().hex}.part"
        try:
            with open(tmp, "wb") as fh:
                for chunk in chunks:
                    fh.write(chunk)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise

    def finish_upload(self, key: str, upload_id: str,
                      parts: Sequence[tuple[int, str]]) -> ObjectInfo:
        paths = [self._part(upload_id, n) for n, _tag in parts]
        missing = [n for (n, _), path in zip(parts, paths, strict=True) if not path.exists()]
        if missing:
            raise BlobNotFound(f"upload {upload_id} has no part {missing[0]}")

        def joined() -> Iterator[bytes]:
            for path in paths:
                with open(path, "rb") as fh:
                    while chunk := fh.read(CHUNK):
                        yield chunk

        info = self.put_stream(key, joined())
        self.abort_upload(key, upload_id)
        return info

    def abort_upload(self, key: str, upload_id: str) -> None:
        if not upload_id.isalnum():
            return
        for entry in os.scandir(self.tmp):
            if entry.name.startswith(f"up-{upload_id}-"):
                Path(entry.path).unlink(missing_ok=True)

    def head(self, key: str) -> ObjectInfo:
        path = self._path(key)
        try:
            st = path.stat()
        except FileNotFoundError:
            raise BlobNotFound(f"no object {key}") from None
        return ObjectInfo(key, st.st_size, _tag(st))

    def read_whole(self, key: str, limit: int) -> tuple[ObjectInfo, bytes | None]:
        """One open: the tag from the open file's own ``fstat`` (a rename replacing the
        key meanwhile cannot mix two files), the bytes when at most ``limit``."""
        try:
            fh = open(self._path(key), "rb")
        except FileNotFoundError:
            raise BlobNotFound(f"no object {key}") from None
        with fh:
            st = os.fstat(fh.fileno())
            info = ObjectInfo(key, st.st_size, _tag(st))
            return info, (fh.read() if st.st_size <= limit else None)

    def open(self, key: str, start: int = 0, end: int | None = None,
             chunk_size: int = CHUNK) -> FileRange:
        try:
            fh = open(self._path(key), "rb")
        except FileNotFoundError:
            raise BlobNotFound(f"no object {key}") from None
        return FileRange(fh, start, end, chunk_size)

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def list_objects(self, prefix: str = "", page_size: int = 1000) -> Iterator[ListedObject]:
        """A depth-first walk that holds one directory's entries at a time. Each directory
        is sorted by name, a subdirectory as ``name + "/"``: every key under it starts with
        that, so the keys come out in the same bytewise order as S3's listing (``a-b``
        before ``a/b``, which a plain path sort gets wrong)."""
        yield from self._walk(self.root, "", prefix)

    def _walk(self, directory: Path, base: str, prefix: str) -> Iterator[ListedObject]:
        try:
            with os.scandir(directory) as it:
                entries = [(e.name + "/" if e.is_dir(follow_symlinks=False) else e.name, e)
                           for e in it]
        except FileNotFoundError:  # removed while we walked
            return
        for name, entry in sorted(entries, key=lambda pair: pair[0]):
            key = base + name
            if name.endswith("/"):
                if (not base and entry.name == self.tmp.name) or not (
                        key.startswith(prefix) or prefix.startswith(key)):
                    continue
                yield from self._walk(Path(entry.path), key, prefix)
            elif key.startswith(prefix):
                try:
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:  # deleted since the directory was read
                    continue
                yield ListedObject(key, st.st_size,
                                   datetime.fromtimestamp(st.st_mtime, UTC))


def _limited(body: IO[bytes], size: int, digest: Any) -> Iterator[bytes]:
    """Exactly ``size`` bytes of ``body``, in chunks, hashed into ``digest`` on the way."""
    left = size
    while left > 0:
        chunk = body.read(min(CHUNK, left))
        if not chunk:
            raise ValueError(f"the part ended {left} bytes short")
        digest.update(chunk)
        left -= len(chunk)
        yield chunk


class FileRange:
    """Bytes ``start..end`` of an open file: iterable in chunks, and file-like too.

    Being file-like (``read``/``seek``/``tell``, reads bounded to the range) lets a WSGI
    server send it with ``wsgi.file_wrapper``: waitress then streams it from its event loop
    and no request thread stays busy while a slow client reads a large download.
    """

    def __init__(self, fh: IO[bytes], start: int, end: int | None, chunk_size: int = CHUNK):
        self._fh, self._chunk = fh, chunk_size
        if end is None:
            end = os.fstat(fh.fileno()).st_size - 1
        self._stop = max(start, end + 1)  # absolute offset just past the range
        fh.seek(start)

    def read(self, size: int | None = -1) -> bytes:
        left = self._stop - self._fh.tell()
        if left <= 0:
            return b""
        return self._fh.read(left if size is None or size < 0 else min(size, left))

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        # Offsets are those of the file; the end is the end of the range.
        if whence == 2:
            return self._fh.seek(self._stop + offset)
        return self._fh.seek(offset, whence)

    def tell(self) -> int:
        return self._fh.tell()

    def close(self) -> None:
        self._fh.close()

    def __iter__(self) -> Iterator[bytes]:
        try:
            while data := self.read(self._chunk):
                yield data
        finally:
            self.close()
