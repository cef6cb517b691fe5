"""Imports (``import_file``): a file in a blob resource, or the bytes of an upload
session, becomes a new unit resource.

Submission checks that the caller may read the blob (or owns the session, ``uploaded``)
and create in the target folder, and fixes the node, resource and unit ids and the file's
object in the payload; a session is taken (``importing``) in the transaction that records
the operation (:func:`wharf.blobs.take_for_import`). The worker (``perform``) streams the
object to a private temporary file (never the whole file in memory; in a directory named
after the operation, so a rerun removes what a killed attempt left on that host), sniffs
its format, converts it (:mod:`wharf.exchange.readers`) under the ``WHARF_IMPORT_*``
limits and creates the unit in the UnitStore (idempotent on its id: a rerun finds it
there and converts nothing). The completion transaction writes node + resource + unit row
as ``create_resource`` does (:func:`publish_unit_resource`) and, for a session, marks it
``imported`` and queues its object for deletion. A failure (``unsupported_format``,
``file_too_complex``, ``corrupt_file``, ``conversion_timeout``) is permanent:
``on_failed`` marks a session ``failed`` and queues its object for deletion, and
``compensate`` deletes the unit if one was made: nothing is left behind.

An import from a blob is a re-verification of a published blob: the worker hashes the
bytes it reads and compares them with the blob's SHA-256 as it was at submission. Bytes
gone bad (changed or damaged in the store) fail the import with ``verification_failed``
instead of publishing a unit made of them, and ``on_failed`` quarantines the blob
(:func:`wharf.blobs.quarantine.quarantine_corrupt`).
"""
from __future__ import annotations

import hashlib
import hmac
import os
import shutil
import tempfile
from pathlib import Path, PurePath
from typing import Any

import msgspec
from sqlalchemy.orm import Session

from storage.blobstore import BlobStore
from storage.models import Operation
from storage.unitrows import document_size
from storage.unitstore import UnitStore
from wharf import blobs
from wharf.blobs.quarantine import quarantine_corrupt, refuse_if_quarantined
from wharf.blobs.reading import blob_for_read
from wharf.exchange import formats
from wharf.exchange.import_errors import FileTooComplex, Limits, UnsupportedFormat
from wharf.exchange.import_kinds import IMPORT_FILE, ImportFilePayload, ImportFileResult
from wharf.exchange.readers import documents, isolated, legacy, sheets
from wharf.exchange.sniffing import UNIT_TYPE, check_unpacked, sniff
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import ProblemCode, TransientFailure, ValidationFailed
from wharf.infra.ids import new_id
from wharf.infra.settings import Settings
from wharf.infra.validation import clean_name, one_of
from wharf.operations.kinds import payload
from wharf.operations.service import Operations, Submission
from wharf.spaces.nodes import resolve_parent
from wharf.units.resources import publish_unit_resource

KIND = IMPORT_FILE
#: The unit types an import can make.
IMPORT_UNIT_TYPES = ("sheet", "doc", "slide")


def submit_import(ops: Operations, ctx: RequestContext, key: str | None,
                  body: dict[str, Any]) -> Submission:
    """``POST /api/imports``: from ``blob_resource_id`` or ``upload_session_id`` (exactly
    one, else 400). 404 for a blob, session or target the caller cannot discover, 403
    without the right to create in the target (as ``create_resource``), 409 for a session
    that is not ``uploaded`` (``upload_session_state``, its state in ``details``)."""
    request = {"blob_resource_id": body.get("blob_resource_id"),
               "space_id": body.get("space_id"), "parent_id": body.get("parent_id"),
               "name": body.get("name"), "unit_type": body.get("unit_type")}
    session_id = body.get("upload_session_id")
    if (session_id is None) == (request["blob_resource_id"] is None):
        raise ValidationFailed("give exactly one of blob_resource_id and upload_session_id",
                               details={"field": "upload_session_id"})
    if session_id is not None:  # (absent from a blob import's fingerprint, as before)
        request["upload_session_id"] = session_id

    def prepare(s: Session, op_id: str) -> tuple[str, ImportFilePayload]:
        name = clean_name(request["name"], "name")
        unit_type = None if request["unit_type"] is None else one_of(
            request["unit_type"], "unit_type", IMPORT_UNIT_TYPES)
        space_id, parent_id = request["space_id"], request["parent_id"]
        if session_id is None:
            blob, _node, _access = blob_for_read(s, ctx, str(request["blob_resource_id"]))
            refuse_if_quarantined(blob)
            space, parent = resolve_parent(s, ctx, space_id, parent_id)
            return space.id, ImportFilePayload(
                blob_resource_id=blob.resource_id, object_key=blob.object_key,
                filename=blob.filename, size=blob.size, space_id=space.id,
                parent_id=parent.id if parent else None, name=name, unit_type=unit_type,
                node_id=new_id(), resource_id=new_id(), unit_id=new_id(), sha256=blob.sha256)
        upload = blobs.take_for_import(s, ctx, str(session_id), op_id)
        space, parent = resolve_parent(s, ctx, space_id, parent_id)
        assert upload.received_size is not None  # uploaded
        return space.id, ImportFilePayload(
            blob_resource_id=None, upload_session_id=upload.id, object_key=upload.object_key,
            filename=upload.filename, size=upload.received_size, space_id=space.id,
            parent_id=parent.id if parent else None, name=name, unit_type=unit_type,
            node_id=new_id(), resource_id=new_id(), unit_id=new_id())

    # A session is taken in the transaction that records the operation: not read-only.
    return ops.submit(ctx, KIND, key, request, prepare,
                      prepare_reads_only=session_id is None)


def convert(path: Path, filename: str, name: str, settings: Settings,
            workdir: Path) -> tuple[str, dict[str, Any]]:
    """The file at ``path`` as ``(unit type, unit document)``. A workbook's body comes as
    the reader child wrote it, JSON text (``msgspec.Raw``) the unit store writes as it
    is (``storage.unitrows.document_size`` measures it)."""
    limits = Limits.from_settings(settings)
    fmt = sniff(path, filename, limits)
    if fmt in legacy.TARGET:
        path = legacy.convert(settings.soffice, path, fmt, settings.import_conversion_timeout,
                              workdir, settings.soffice_network)
        fmt = legacy.TARGET[fmt]
        check_unpacked(path, limits).close()
    body: dict[str, Any] | msgspec.Raw
    if fmt in ("xlsx", "xlsb", "ods", "xls"):
        body = isolated.read_workbook_isolated(
            path, name, limits, fmt, memory=settings.import_max_memory_bytes,
            timeout=settings.import_conversion_timeout,
            hold=os.environ.get(isolated.HOLD) if settings.test_hooks else None)
    elif fmt in ("csv", "tsv"):
        body = sheets.read_delimited(path, fmt, name, limits,
                                     sheet_name=PurePath(filename).stem)
    elif fmt == "docx":
        body = documents.read_docx(path, name, limits)
    else:
        body = documents.read_pptx(path, name, limits)
    unit_type = UNIT_TYPE[fmt]
    return unit_type, formats.unit_document(unit_type, body)


def _workdir(op_id: str) -> Path:
    """A private directory (``mkdtemp``) for one attempt's files, named after its
    operation. A worker killed mid-conversion never removes its own: what an earlier
    attempt of the operation left on this host goes first (the LibreOffice still
    converting there, then the directory)."""
    prefix = f"wharf-import-{op_id}-"
    for stale in Path(tempfile.gettempdir()).glob(prefix + "*"):
        legacy.kill_leftovers(stale)
        shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=prefix))


class ImportFile:
    """The ``import_file`` handler."""

    kind = KIND

    def __init__(self, unitstore: UnitStore, store: BlobStore, settings: Settings):
        self.unitstore = unitstore
        self.store = store
        self.settings = settings

    def authorize(self, session: Session, op: Operation, actor: Principal) -> None:
        p = payload(op, ImportFilePayload)
        ctx = RequestContext(principal=actor)
        if p.blob_resource_id is not None:  # (a session's bytes are the import's own)
            refuse_if_quarantined(blob_for_read(session, ctx, p.blob_resource_id)[0])
        resolve_parent(session, ctx, p.space_id, p.parent_id)

    def perform(self, op: Operation) -> None:
        p = payload(op, ImportFilePayload)
        if self.unitstore.head(p.unit_id) is not None:
            return  # converted by an earlier attempt
        workdir = _workdir(op.id)
        try:
            source = workdir / ("source" + PurePath(p.filename).suffix.lower()[:16])
            digest = hashlib.sha256() if p.sha256 is not None else None
            with source.open("wb") as f:
                for chunk in self.store.open(p.object_key):
                    if digest is not None:
                        digest.update(chunk)
                    f.write(chunk)
            if digest is not None and p.sha256 is not None \
                    and not hmac.compare_digest(digest.hexdigest(), p.sha256):
                # A published blob whose bytes went bad: on_failed quarantines it.
                raise blobs.VerificationFailed(
                    "the file's stored bytes no longer match its SHA-256; it is quarantined",
                    details={"resource_id": p.blob_resource_id})
            unit_type, document = convert(source, p.filename, p.name, self.settings, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        if p.unit_type is not None and p.unit_type != unit_type:
            raise UnsupportedFormat(f"the file is a {unit_type}, not a {p.unit_type}",
                                    details={"unit_type": unit_type})
        size = document_size(document)
        if size > self.settings.unit_max_snapshot_bytes:
            raise FileTooComplex(
                f"the imported document is {size} bytes (at most "
                f"{self.settings.unit_max_snapshot_bytes}, WHARF_UNIT_MAX_SNAPSHOT_BYTES)",
                details={"limit": "snapshot_bytes"})
        self.unitstore.create_unit(p.unit_id, unit_type, document)

    def commit(self, session: Session, op: Operation, ctx: RequestContext) -> ImportFileResult:
        p = payload(op, ImportFilePayload)
        head = self.unitstore.head(p.unit_id)
        if head is None:  # deleted since perform (a compensation racing a rerun)
            raise TransientFailure("the imported unit is missing; converting again")
        source = {"imported_from": p.blob_resource_id}
        if p.upload_session_id is not None:
            if not blobs.importing(session, p.upload_session_id, op.id):
                raise blobs.UploadSessionState("the upload session is no longer importing")
            source = {"imported_from_upload_session": p.upload_session_id}
        publish_unit_resource(session, op, ctx, node_id=p.node_id, resource_id=p.resource_id,
                              unit_id=p.unit_id, unit_type=head.unit_type,
                              space_id=p.space_id, parent_id=p.parent_id, name=p.name,
                              details=source)
        if p.upload_session_id is not None:  # the unit holds the content now
            blobs.finish_import(session, p.upload_session_id, op.id, p.object_key,
                                error_code=None)
        return ImportFileResult(node_id=p.node_id, resource_id=p.resource_id,
                                unit_id=p.unit_id)

    def on_failed(self, session: Session, op: Operation, error: dict[str, Any]) -> None:
        p = payload(op, ImportFilePayload)
        if p.upload_session_id is not None:  # a failed import consumed the session too
            blobs.finish_import(session, p.upload_session_id, op.id, p.object_key,
                                error_code=str(error.get("code") or "import_failed"))
        elif p.blob_resource_id is not None \
                and error.get("code") == ProblemCode.VERIFICATION_FAILED:
            quarantine_corrupt(session, p.blob_resource_id, p.object_key, op.id)

    def compensate(self, op: Operation) -> None:
        self.unitstore.delete_unit(payload(op, ImportFilePayload).unit_id)
