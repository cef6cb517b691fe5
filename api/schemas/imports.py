"""The import request (``POST /api/imports``, operation ``import_file``, ``wharf.exchange``)."""
from __future__ import annotations

from typing import Annotated, ClassVar, Literal

import msgspec

from api.schemas.common import IdRef, Request

ImportUnitType = Literal["sheet", "doc", "slide"]


class ImportRequest(Request):
    """Exactly one of ``blob_resource_id`` and ``upload_session_id`` (400
    ``validation_failed`` otherwise)."""

    __example__: ClassVar[dict[str, object]] = {
        "upload_session_id": "7c9e6679742540de944be07fc1f90ae7",
        "space_id": "0f8fad5bd9cb469fa16570867728950e", "name": "Q3 budget"}
    space_id: IdRef
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=255, examples=["Q3 budget"])]
    blob_resource_id: Annotated[IdRef | None, msgspec.Meta(
        description="The blob resource whose file is imported (the caller must be able to "
                    "read it; it stays as it is). Exactly one of this and "
                    "`upload_session_id`.")] = None
    upload_session_id: Annotated[IdRef | None, msgspec.Meta(
        description="The caller's own upload session, `uploaded` (its content PUT, not "
                    "completed): the import takes its bytes. The session becomes "
                    "`importing`, then `imported` (or `failed` with the import's code); "
                    "either way its object is deleted once the import is done. Exactly "
                    "one of this and `blob_resource_id`.")] = None
    parent_id: Annotated[IdRef | None, msgspec.Meta(
        description="The folder to create the unit in (null or absent: the space's root).")] \
        = None
    unit_type: Annotated[ImportUnitType | None, msgspec.Meta(
        description="The unit type expected (absent: the file's format decides; a file of "
                    "another kind fails the import with `unsupported_format`).")] = None
