"""The kind of Office exports: ``export_unit`` (a trunk unit written to an XLSX, CSV, DOCX
or PPTX file, a temporary object in the blob store), its payload and result, declared
once here (``wharf.operations.registry``)."""
from __future__ import annotations

from typing import Annotated

import msgspec

from wharf.operations.kinds import Shape
from wharf.operations.registry import Collaborators, KindSpec, register

EXPORT_UNIT = "export_unit"


class ExportUnitPayload(Shape, frozen=True):
    """The unit at the revision read at submission, the format (and CSV sheet), and the
    export id and object key fixed then (``exports/<operation id>``: a retry overwrites
    the same object)."""

    unit_id: str
    unit_type: str
    format: str
    revision: int
    export_id: str
    object_key: str
    filename: str
    sheet: str | None = None


class ExportUnitResult(Shape, frozen=True):
    export_id: str
    content_url: Annotated[str, msgspec.Meta(
        description="Where the file is downloaded (the requester, while they may view the "
                    "unit, until `expires_at`).",
        examples=["/api/exports/0f8fad5bd9cb469fa16570867728950e/content"])]
    size: int
    sha256: str
    expires_at: Annotated[str, msgspec.Meta(description="RFC 3339; then the file is gone.")]


def _export_unit(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.exchange.exports import ExportUnit
    return ExportUnit(c.unitstore, c.blob_store, c.settings)


register(KindSpec(
    name=EXPORT_UNIT, payload=ExportUnitPayload, result=ExportUnitResult,
    handler=_export_unit, long=True, object_keys=("object_key",),
    doc="``export_unit``: a trunk unit written to an Office file "
        "(POST /api/units/{unit_id}/exports).",
    result_doc="Once completed: the export and where its file is downloaded."))
