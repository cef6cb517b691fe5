"""The kind of takeouts: ``export_takeout`` (a zip of a team space, or of every space a
user owns, written to the blob store as a temporary object), its payload, declared once
here (``wharf.operations.registry``). Its result is an export's
(:class:`ExportUnitResult`): the same download and expiry."""
from __future__ import annotations

from typing import Literal

from wharf.exchange.export_kinds import ExportUnitResult
from wharf.operations.kinds import Shape
from wharf.operations.registry import Collaborators, KindSpec, register

EXPORT_TAKEOUT = "export_takeout"


class ExportTakeoutPayload(Shape, frozen=True):
    """What the archive holds (``space``: the space ``space_id``; ``user``: every space
    the actor owns) and the export id and object key fixed at submission
    (``exports/<operation id>``)."""

    scope: Literal["space", "user"]
    space_id: str | None
    export_id: str
    object_key: str
    filename: str


def _export_takeout(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.exchange.takeout import ExportTakeout
    return ExportTakeout(c.db, c.unitstore, c.blob_store, c.settings)


register(KindSpec(
    name=EXPORT_TAKEOUT, payload=ExportTakeoutPayload, result=ExportUnitResult,
    handler=_export_takeout, long=True, object_keys=("object_key",),
    doc="``export_takeout``: a zip of a space (POST /api/spaces/{space_id}/exports) or of "
        "every space the caller owns (POST /api/me/exports): each node at its path, units "
        "as JSON and as Office files, blobs and assets as their bytes, and manifest.json.",
    result_doc="Once completed: the archive and where it is downloaded. A failure's "
               "`error.code`: `file_too_complex` (more files than WHARF_TAKEOUT_MAX_FILES) "
               "or `permission_revoked`."))
