"""The import kind of the exchange capability: ``import_file`` (an Office or CSV file in
a blob resource, or in an upload session, converted to a new unit resource), its payload
and result, declared once here (``wharf.operations.registry``)."""
from __future__ import annotations

from wharf.operations.kinds import Shape
from wharf.operations.registry import Collaborators, KindSpec, register

IMPORT_FILE = "import_file"


class ImportFilePayload(Shape, frozen=True):
    """The file to read (the object of the blob resource, or of the upload session the
    import took, as it was at submission; exactly one of ``blob_resource_id`` and
    ``upload_session_id``) and the new unit resource, its ids fixed at submission.
    ``unit_type``: the type the caller asked for (None: the file's format decides)."""

    blob_resource_id: str | None
    object_key: str
    filename: str
    size: int
    space_id: str
    parent_id: str | None
    name: str
    unit_type: str | None
    node_id: str
    resource_id: str
    unit_id: str
    upload_session_id: str | None = None
    #: The blob's published SHA-256 at submission (None: an upload session, or recorded
    #: before imports checked it): the worker checks the bytes it reads against it.
    sha256: str | None = None


class ImportFileResult(Shape, frozen=True):
    node_id: str
    resource_id: str
    unit_id: str


def _import_file(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.exchange.importer import ImportFile
    return ImportFile(c.unitstore, c.blob_store, c.settings)


register(KindSpec(
    name=IMPORT_FILE, payload=ImportFilePayload, result=ImportFileResult,
    handler=_import_file, long=True, object_keys=("object_key",),
    # a failed import from an upload session deleted the session's object: no retry
    failure_consumes_input_if="upload_session_id",
    doc="``import_file``: a spreadsheet, document or presentation in a blob resource or "
        "an upload session imported as a new unit resource (POST /api/imports).",
    result_doc="Once completed: the new node, resource and unit. A failure's `error.code`: "
               "`unsupported_format`, `file_too_complex`, `corrupt_file`, "
               "`conversion_timeout`, `blob_not_found` or `permission_revoked`."))
