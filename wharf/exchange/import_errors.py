"""The problems an import fails with (each a failed ``import_file`` operation's ``error``),
and the limits it reads files under (``WHARF_IMPORT_*``)."""
from __future__ import annotations

from dataclasses import dataclass

from wharf.infra.errors import WharfError
from wharf.infra.settings import Settings


class UnsupportedFormat(WharfError):
    """Not a format Wharf imports (or a legacy one with no converter configured)."""

    code = "unsupported_format"
    title = "Unsupported format"


class FileTooComplex(WharfError):
    """The file is past one of the import limits (cells, sheets, string length, unpacked
    size, the resulting document's size)."""

    code = "file_too_complex"
    title = "File too complex"


class CorruptFile(WharfError):
    """The file claims a format but cannot be parsed as it."""

    code = "corrupt_file"
    title = "Corrupt file"


class ConversionTimeout(WharfError):
    """The legacy conversion (LibreOffice) took longer than its time limit."""

    code = "conversion_timeout"
    title = "Conversion timeout"


@dataclass(frozen=True)
class Limits:
    """What one import may read."""

    max_cells: int = 2_000_000
    max_sheets: int = 200
    max_string_length: int = 32767
    max_unpacked_bytes: int = 512 * 1024 * 1024

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        return cls(max_cells=settings.import_max_cells,
                   max_sheets=settings.import_max_sheets,
                   max_string_length=settings.import_max_string_length,
                   max_unpacked_bytes=settings.import_max_unpacked_bytes)

    @property
    def max_area(self) -> int:
        """The largest used range (rows by columns, first to last cell) a sheet may span:
        calamine holds a sheet as a dense grid of it, so four times the cell limit."""
        return 4 * self.max_cells

    def text(self, value: str, where: str) -> str:
        if len(value) > self.max_string_length:
            raise FileTooComplex(
                f"{where}: a text of {len(value)} characters (at most "
                f"{self.max_string_length})", details={"limit": "string_length"})
        return value

    def sheets(self, count: int, what: str = "sheets") -> None:
        if count > self.max_sheets:
            raise FileTooComplex(f"{count} {what} (at most {self.max_sheets})",
                                 details={"limit": "sheets"})

    def cells(self, count: int) -> None:
        if count > self.max_cells:
            raise FileTooComplex(f"more than {self.max_cells} cells",
                                 details={"limit": "cells"})
