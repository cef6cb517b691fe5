"""The bytes of a ZIP archive written front to back, one entry after another, so that a
writer can stop after any entry, or anywhere inside an entry's data, and go on later in
another process from a few numbers (``wharf.exchange.takeout``).

Entries are stored (not compressed: most of a takeout is already compressed, and a stored
entry's bytes are a range of its source, which is what lets a resumed writer continue in
the middle of one). Each local header carries bit 3, so its CRC-32 comes after the data in
a data descriptor: the CRC is a running ``zlib.crc32`` value, a plain int a checkpoint can
keep. Sizes above 4 GiB - 1, offsets past it and more than 65,535 entries use ZIP64
(APPNOTE 6.3.9 §4.3.9, §4.5.3, §4.3.14-15). Names are UTF-8 (bit 11). Every timestamp is
the archive's one ``when``, so the same plan always gives the same bytes.

Hand-written rather than ``zipfile`` or ``stream-zip``: both keep the writer's state in
objects a killed process loses (offsets, CRCs, the central directory so far); here the
state is the caller's rows.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import datetime
from typing import Final

#: Past this a size or an offset needs ZIP64 (the 32-bit field holds 0xFFFFFFFF instead).
LIMIT32: Final = 0xFFFFFFFF
_FLAGS: Final = 0x0808  # bit 3: CRC and sizes in a data descriptor; bit 11: UTF-8 names
_STORED: Final = 0
_MADE_BY: Final = (3 << 8) | 45  # Unix, APPNOTE 4.5
_FILE_MODE: Final = (0o100644 << 16)
_DIR_MODE: Final = (0o40755 << 16) | 0x10


@dataclass(frozen=True, slots=True)
class Entry:
    """One member as the central directory lists it."""

    name: str
    size: int
    crc: int
    offset: int  # of its local header

    @property
    def directory(self) -> bool:
        return self.name.endswith("/")


def dos_time(when: datetime) -> tuple[int, int]:
    """(time, date) in MS-DOS form (2-second resolution, years 1980-2107)."""
    year = min(max(when.year, 1980), 2107)
    return ((when.hour << 11) | (when.minute << 5) | (when.second // 2),
            ((year - 1980) << 9) | (when.month << 5) | when.day)


def _wide(size: int, limit: int) -> bool:
    return size >= limit


def local_header(name: str, size: int, when: datetime, limit: int = LIMIT32) -> bytes:
    """The local file header of a member of ``size`` bytes (CRC and sizes follow in its
    :func:`descriptor`)."""
    raw = name.encode("utf-8")
    t, d = dos_time(when)
    if _wide(size, limit):
        extra = struct.pack("<HHQQ", 0x0001, 16, 0, 0)
        return struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, _FLAGS, _STORED, t, d, 0,
                           LIMIT32, LIMIT32, len(raw), len(extra)) + raw + extra
    return struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, _FLAGS, _STORED, t, d, 0, 0, 0,
                       len(raw), 0) + raw


def descriptor(crc: int, size: int, limit: int = LIMIT32) -> bytes:
    """The data descriptor after a member's bytes (8-byte sizes for a ZIP64 member)."""
    if _wide(size, limit):
        return struct.pack("<IIQQ", 0x08074B50, crc, size, size)
    return struct.pack("<IIII", 0x08074B50, crc, size, size)


def central_record(entry: Entry, when: datetime, limit: int = LIMIT32) -> bytes:
    """The member's central directory header."""
    raw = entry.name.encode("utf-8")
    t, d = dos_time(when)
    wide_size, wide_offset = _wide(entry.size, limit), _wide(entry.offset, limit)
    fields = ([entry.size, entry.size] if wide_size else []) + (
        [entry.offset] if wide_offset else [])
    extra = struct.pack(f"<HH{len(fields)}Q", 0x0001, 8 * len(fields), *fields) \
        if fields else b""
    size32 = LIMIT32 if wide_size else entry.size
    return struct.pack(
        "<IHHHHHHIIIHHHHHII", 0x02014B50, _MADE_BY, 45 if fields else 20, _FLAGS, _STORED,
        t, d, entry.crc, size32, size32, len(raw), len(extra), 0, 0, 0,
        _DIR_MODE if entry.directory else _FILE_MODE,
        LIMIT32 if wide_offset else entry.offset) + raw + extra


def end_records(count: int, directory_offset: int, directory_size: int,
                limit: int = LIMIT32) -> bytes:
    """What follows the central directory: the ZIP64 end record and locator when the
    count, the directory's offset or its end need them, then the end record."""
    end = directory_offset + directory_size
    out = b""
    if count >= 0xFFFF or _wide(directory_offset, limit) or _wide(end, limit):
        out = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, _MADE_BY, 45, 0, 0, count, count,
                          directory_size, directory_offset)
        out += struct.pack("<IIQI", 0x07064B50, 0, end, 1)
        return out + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, LIMIT32,
                                 LIMIT32, 0)
    return struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, directory_size,
                       directory_offset, 0)
