"""Writing a takeout's archive as a resumable upload, part by part, from its plan.

Bytes go to a part file on local disk (never the archive, nor a whole blob, in memory);
once it holds ``part_size`` bytes it is stored as the upload's next part and ONE
transaction records the progress (``takeout_runs``: the parts, the bytes written, the
first member not done and, inside a blob or an asset split across parts, the data bytes
done and their running CRC-32) with the facts of the members it completed
(``takeout_items``: offset, CRC-32, size, SHA-256). A part ends only between members or
inside a blob's or an asset's bytes (a range of an immutable object, read again
identically); a unit's document or Office file is rendered whole into one part. A writer
killed anywhere resumes from the last recorded part: the part it was writing is written
again under the same number.

The checkpoint is fenced on the bytes written so far: a writer that finds them moved (a
second worker resumed the same run) stops with a transient error instead of recording
over it. After the last member: ``manifest.json`` (every member's path, size and
SHA-256), the central directory and its end records, the last part, and the upload is
finished into the object.
"""
from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import msgspec
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from storage.blobstore import BlobNotFound, BlobStore
from storage.blobstore.interface import CHUNK
from storage.db import Database
from storage.models import TakeoutItem, TakeoutRun
from storage.results import rowcount
from storage.unitstore import UnitStore
from wharf.exchange import writers, zipstream
from wharf.exchange.takeout_plan import MANIFEST
from wharf.infra.clock import iso
from wharf.infra.errors import TransientFailure

log = logging.getLogger("wharf.exchange.takeout")

PAGE = 500  # members read per query


class Superseded(TransientFailure):
    """Another writer recorded progress on this takeout since this one read it."""


@dataclass
class Written:
    """The archive once stored: its size and SHA-256."""

    size: int
    sha256: str


@dataclass
class _State:
    run: TakeoutRun
    done: list[dict[str, Any]] = field(default_factory=list)  # member facts not recorded
    part: IO[bytes] | None = None
    part_bytes: int = 0
    digest: Any = None  # the whole archive's SHA-256, while this writer wrote all of it


class ArchiveWriter:
    def __init__(self, db: Database, unitstore: UnitStore, store: BlobStore):
        self.db, self.unitstore, self.store = db, unitstore, store

    # -- the loop ------------------------------------------------------------------------

    def write(self, op_id: str, key: str) -> Written:
        with self.db.read() as s:
            run = s.get(TakeoutRun, op_id)
            assert run is not None, "the plan is made before the archive is written"
            s.expunge(run)
        st = _State(run, digest=hashlib.sha256() if run.written == 0 else None)
        fd, path = tempfile.mkstemp(prefix="wharf-takeout-", suffix=".part")
        os.close(fd)
        try:
            with open(path, "w+b") as part:
                st.part = part
                if run.next_seq <= run.items:  # else: every part stored, not finished
                    self._members(st, op_id, key)
                    self._trailer(st, op_id)
                    self._flush(st, op_id, key, last=True)
        finally:
            os.unlink(path)
        size = st.run.written
        try:
            info = self.store.head(key)
            if info.size != size:
                raise BlobNotFound(f"{key} is not this takeout's archive")
        except BlobNotFound:
            info = self.store.finish_upload(key, run.upload_id,
                                            [(n, tag) for n, tag in st.run.parts])
        if st.digest is not None:
            return Written(info.size, st.digest.hexdigest())
        return Written(info.size, self._hash_back(key))

    def _hash_back(self, key: str) -> str:
        return self.written_back(key).sha256

    def written_back(self, key: str) -> Written:
        """The stored archive's size and SHA-256, read back (a resumed writer did not see
        all of it)."""
        digest, size = hashlib.sha256(), 0
        for chunk in self.store.open(key):
            digest.update(chunk)
            size += len(chunk)
        return Written(size, digest.hexdigest())

    def _items(self, op_id: str, start: int) -> Iterator[TakeoutItem]:
        seq = start
        while True:
            with self.db.read() as s:
                page = list(s.scalars(select(TakeoutItem).where(
                    TakeoutItem.operation_id == op_id, TakeoutItem.seq >= seq)
                    .order_by(TakeoutItem.seq).limit(PAGE)))
                for item in page:
                    s.expunge(item)
            if not page:
                return
            yield from page
            seq = page[-1].seq + 1

    def _members(self, st: _State, op_id: str, key: str) -> None:
        when = st.run.as_of
        for item in self._items(op_id, st.run.next_seq):
            if item.seq == st.run.items:
                break  # the manifest's row (written by _trailer)
            resumed = item.seq == st.run.next_seq and st.run.data_offset > 0
            offset = item.offset if resumed and item.offset is not None else self._at(st)
            if item.source in ("blob", "asset"):
                size = item.size or 0
                if not resumed:
                    self._out(st, zipstream.local_header(item.path, size, when))
                crc, got = self._copy(st, op_id, key, item, size, offset)
                self._finish_member(st, item, offset, crc, got, item.sha256)
            elif item.source == "folder":
                self._out(st, zipstream.local_header(item.path, 0, when))
                self._finish_member(st, item, offset, 0, 0, hashlib.sha256().hexdigest())
            else:
                with self._rendered(item) as (fh, size, sha):
                    self._out(st, zipstream.local_header(item.path, size, when))
                    crc = 0
                    while chunk := fh.read(CHUNK):
                        crc = zlib.crc32(chunk, crc)
                        self._out(st, chunk)
                    self._finish_member(st, item, offset, crc, size, sha)
            if st.part_bytes >= st.run.part_size:
                self._flush(st, op_id, key, next_seq=item.seq + 1)

    def _at(self, st: _State) -> int:
        return st.run.written + st.part_bytes

    def _out(self, st: _State, data: bytes | memoryview) -> None:
        assert st.part is not None
        st.part.write(data)
        st.part_bytes += len(data)
        if st.digest is not None:
            st.digest.update(data)

    def _finish_member(self, st: _State, item: TakeoutItem, offset: int, crc: int,
                       size: int, sha: str | None) -> None:
        self._out(st, zipstream.descriptor(crc, size))
        st.done.append({"s": item.seq, "o": offset, "c": crc, "z": size, "h": sha})

    def _copy(self, st: _State, op_id: str, key: str, item: TakeoutItem,
              size: int, offset: int) -> tuple[int, int]:
        """A blob's or an asset's bytes from where the last part left them, a part stored
        whenever one is full (the member then resumes inside its bytes)."""
        resumed = item.seq == st.run.next_seq
        got = st.run.data_offset if resumed else 0
        crc = st.run.data_crc if resumed else 0
        if got >= size:
            return crc, got
        assert item.ref is not None
        try:
            chunks = self.store.open(item.ref, got)
            for chunk in chunks:
                crc = zlib.crc32(chunk, crc)
                got += len(chunk)
                self._out(st, chunk)
                if st.part_bytes >= st.run.part_size and got < size:
                    self._flush(st, op_id, key, next_seq=item.seq, data=(got, crc),
                                open_offset=(item.seq, offset))
        except BlobNotFound:
            # purged since the plan: the member keeps what was written (the manifest
            # says it is missing: no SHA-256)
            log.warning("takeout %s: %s is gone; its member is cut short", op_id, item.ref)
            item.sha256 = None
        if got != size:
            item.sha256 = None
        return crc, got

    def _rendered(self, item: TakeoutItem) -> Any:
        return _Rendered(self.unitstore, item)

    # -- parts and checkpoints -------------------------------------------------------------

    def _flush(self, st: _State, op_id: str, key: str, *, next_seq: int | None = None,
               data: tuple[int, int] = (0, 0), open_offset: tuple[int, int] | None = None,
               last: bool = False) -> None:
        assert st.part is not None
        if st.part_bytes == 0 and not last:
            return
        number = len(st.run.parts) + 1
        st.part.flush()
        st.part.seek(0)
        tag = self.store.put_part(key, st.run.upload_id, number, st.part, st.part_bytes)
        before = st.run.written
        parts = [*st.run.parts, [number, tag]]
        written = before + st.part_bytes
        seq = st.run.items + 1 if last else next_seq
        assert seq is not None
        with self.db.write() as s:
            moved = rowcount(s.execute(update(TakeoutRun).where(
                TakeoutRun.operation_id == op_id, TakeoutRun.written == before,
                TakeoutRun.next_seq == st.run.next_seq).values(
                parts=parts, written=written, next_seq=seq, data_offset=data[0],
                data_crc=data[1])))
            if moved != 1:
                raise Superseded("another worker went on with this takeout")
            self._record(s, op_id, st.done, open_offset)
        st.done.clear()
        st.run.parts, st.run.written, st.run.next_seq = parts, written, seq
        st.run.data_offset, st.run.data_crc = data
        st.part.seek(0)
        st.part.truncate()
        st.part_bytes = 0

    @staticmethod
    def _record(s: Session, op_id: str, done: list[dict[str, Any]],
                open_offset: tuple[int, int] | None) -> None:
        for fact in done:
            s.execute(update(TakeoutItem).where(
                TakeoutItem.operation_id == op_id, TakeoutItem.seq == fact["s"]).values(
                offset=fact["o"], crc32=fact["c"], size=fact["z"], sha256=fact["h"]))
        if open_offset is not None:
            s.execute(update(TakeoutItem).where(
                TakeoutItem.operation_id == op_id, TakeoutItem.seq == open_offset[0])
                .values(offset=open_offset[1]))

    # -- manifest, central directory -------------------------------------------------------

    def _trailer(self, st: _State, op_id: str) -> None:
        with self.db.write() as s:  # the facts of the last part's members, for the pages
            self._record(s, op_id, st.done, None)
        st.done.clear()
        when = st.run.as_of
        manifest_offset = self._at(st)
        fd, path = tempfile.mkstemp(prefix="wharf-manifest-", suffix=".json")
        try:
            with os.fdopen(fd, "w+b") as fh:
                fh.write(b'{"format":"wharf-takeout","version":1,"as_of":'
                         + msgspec.json.encode(iso(when)) + b',"files":[')
                for n, item in enumerate(self._items(op_id, 0)):
                    if item.seq >= st.run.items:
                        break
                    entry = {"path": item.path, "kind": item.source,
                             "size": item.size or 0, "sha256": item.sha256}
                    if item.revision is not None:
                        entry |= {"unit_id": item.ref, "revision": item.revision}
                    fh.write((b"," if n else b"") + msgspec.json.encode(entry))
                fh.write(b"]}\n")
                size = fh.tell()
                fh.seek(0)
                digest = hashlib.sha256()
                self._out(st, zipstream.local_header(MANIFEST, size, when))
                crc = 0
                while chunk := fh.read(CHUNK):
                    crc = zlib.crc32(chunk, crc)
                    digest.update(chunk)
                    self._out(st, chunk)
                self._out(st, zipstream.descriptor(crc, size))
        finally:
            os.unlink(path)
        start, count = self._at(st), 0
        for item in self._items(op_id, 0):
            if item.seq >= st.run.items:
                break
            assert item.offset is not None and item.crc32 is not None
            self._out(st, zipstream.central_record(zipstream.Entry(
                item.path, item.size or 0, item.crc32, item.offset), when))
            count += 1
        self._out(st, zipstream.central_record(zipstream.Entry(
            MANIFEST, size, crc, manifest_offset), when))
        count += 1
        self._out(st, zipstream.end_records(count, start, self._at(st) - start))


class _Rendered:
    """A unit member rendered to a temporary file: (file, size, SHA-256)."""

    def __init__(self, unitstore: UnitStore, item: TakeoutItem):
        self.unitstore, self.item = unitstore, item
        self.path: str | None = None

    def __enter__(self) -> tuple[IO[bytes], int, str]:
        item = self.item
        assert item.ref is not None and item.revision is not None
        found = self.unitstore.document_at(item.ref, item.revision)
        document = found[1] if found is not None else b"null"
        fd, self.path = tempfile.mkstemp(prefix="wharf-takeout-",
                                         suffix="." + (item.format or "json"))
        os.close(fd)
        if item.source == "unit_json":
            with open(self.path, "wb") as f:
                f.write(document)
        else:
            doc = msgspec.json.decode(document)
            body = doc.get("body") if isinstance(doc, dict) else None
            assert item.unit_type is not None and item.format is not None
            writers.write(item.unit_type, item.format, body if isinstance(body, dict) else {},
                          self.path, None)
        digest = hashlib.sha256()
        self.fh = open(self.path, "rb")
        while chunk := self.fh.read(CHUNK):
            digest.update(chunk)
        size = self.fh.tell()
        self.fh.seek(0)
        return self.fh, size, digest.hexdigest()

    def __exit__(self, *exc: object) -> None:
        self.fh.close()
        if self.path:
            os.unlink(self.path)
