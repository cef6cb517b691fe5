"""The takeout's ZIP writer (``wharf.exchange.zipstream``): what it writes opens with
``zipfile`` (CRC-32 checked, UTF-8 names, folders, the fixed timestamp), and so does the
ZIP64 form it switches to past 4 GiB, exercised here with a tiny limit (the same code
paths: 0xFFFFFFFF in the 32-bit fields, the sizes and offsets in ZIP64 extras, 8-byte
descriptors, the ZIP64 end record and locator)."""
from __future__ import annotations

import io
import zipfile
import zlib
from datetime import datetime

import pytest

from wharf.exchange import zipstream as z

WHEN = datetime(2026, 12, 7, 5, 30, 12)
MEMBERS = [("Reports/", b""), ("Reports/café ☕.txt", b"hello " * 1000),
           ("b.bin", bytes(range(256)) * 50), ("empty.txt", b"")]


def build(limit: int) -> bytes:
    out, entries = io.BytesIO(), []
    for name, data in MEMBERS:
        offset = out.tell()
        out.write(z.local_header(name, len(data), WHEN, limit))
        out.write(data)
        crc = zlib.crc32(data)
        out.write(z.descriptor(crc, len(data), limit))
        entries.append(z.Entry(name, len(data), crc, offset))
    start = out.tell()
    for entry in entries:
        out.write(z.central_record(entry, WHEN, limit))
    out.write(z.end_records(len(entries), start, out.tell() - start, limit))
    return out.getvalue()


@pytest.mark.parametrize("limit", [z.LIMIT32, 100], ids=["zip32", "zip64"])
def test_the_archive_opens_with_every_member_and_crc(limit):
    data = build(limit)
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.testzip() is None
    assert [(i.filename, i.file_size, i.date_time) for i in archive.infolist()] == [
        (name, len(body), (2026, 12, 7, 5, 30, 12)) for name, body in MEMBERS]
    for name, body in MEMBERS:
        assert archive.read(name) == body
    assert archive.getinfo("Reports/").is_dir()
    if limit != z.LIMIT32:
        assert b"PK\x06\x06" in data and b"PK\x06\x07" in data  # the ZIP64 end records


def test_the_same_members_give_the_same_bytes():
    assert build(z.LIMIT32) == build(z.LIMIT32)
