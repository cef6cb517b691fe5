"""Office exports of units (``export_unit``): the request (the result is the kind's)."""
from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec

from api.schemas.common import Request


class ExportRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"format": "xlsx"}
    format: Annotated[Literal["xlsx", "csv", "docx", "pptx"], msgspec.Meta(
        description="`xlsx` or `csv` for a sheet, `docx` for a doc, `pptx` for a slide; "
                    "another is 400 `validation_failed` (`details.field`: `format`).")]
    sheet: Annotated[str, msgspec.Meta(
        max_length=255, description="CSV only: the sheet (its id, else its name); default "
                                    "the first. An unknown sheet fails the operation "
                                    "(`validation_failed`).")] | None = None
