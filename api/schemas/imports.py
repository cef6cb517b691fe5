"""The import request (``POST /api/imports``, operation ``import_file``, ``wharf.exchange``)."""
from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec

from api.schemas.common import IdRef, Request

ImportUnitType = Literal["sheet", "doc", "slide"]


class ImportRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "blob_resource_id": "7c9e6679742540de944be07fc1f90ae7",
        "space_id": "0f8fad5bd9cb469fa16570867728950e", "name": "Q3 budget"}
    blob_resource_id: Annotated[IdRef, msgspec.Meta(
        description="The blob resource whose file is imported (the caller must be able to "
                    "read it).")]
    space_id: IdRef
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=255, examples=["Q3 budget"])]
    parent_id: Annotated[IdRef | None, msgspec.Meta(
        description="The folder to create the unit in (null or absent: the space's root).")] \
        = None
    unit_type: Annotated[ImportUnitType | None, msgspec.Meta(
        description="The unit type expected (absent: the file's format decides; a file of "
                    "another kind fails the import with `unsupported_format`).")] = None
