"""Who names an object key right now: the one check behind ``wharf fsck``'s confirmation
of orphans and the deletion worker's last look before it deletes an ``fsck_orphaned``
object.

A key is referenced by a row of one of :data:`SOURCES` (each table's ``object_key``), or
by the payload of an operation that is not finished (``pending`` or ``running``, retries
included) whose kind carries object keys (:func:`object_key_fields`): a queued
``replace_blob_content`` releases its staged key's reservation when it is submitted, and
until its worker commits, only ``operations.payload`` names that key. Finished operations
do not count: a completed one moved its key into a table row, a failed one queued the key
for deletion.

Bounded: one query per source and per payload field for a batch of keys (callers pass at
most a few hundred); the operations query reads only open operations (the partial index
``ix_operations_claim``'s rows), its JSON field read with SQLAlchemy's portable JSON access
(``json_extract`` on SQLite, ``->>`` on PostgreSQL).
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from sqlalchemy import select
from sqlalchemy.orm import InstrumentedAttribute, Session

from storage.enums import OPEN_STATUSES, AssetUploadState, UploadState
from storage.models import (
    BlobResource,
    BlobUploadSession,
    Export,
    ObjectDeletionJob,
    Operation,
    UnitAsset,
    UnitAssetUpload,
)
from wharf.operations.registry import KINDS

JOBS = "object_deletion_jobs"
OPERATIONS = "operations"
#: Blob upload session states whose bytes are stored and not yet published (or not yet
#: read by the import that took them).
SESSION_HOLDS_OBJECT = frozenset({UploadState.UPLOADED, UploadState.VERIFYING,
                                  UploadState.IMPORTING})


@dataclass(frozen=True)
class Source:
    table: str
    key: InstrumentedAttribute[str]
    state: InstrumentedAttribute[str] | None
    needs_object: Callable[[str | None], bool]


SOURCES: tuple[Source, ...] = (
    Source("blob_resources", BlobResource.object_key, None, lambda _state: True),
    Source("blob_upload_sessions", BlobUploadSession.object_key, BlobUploadSession.state,
           lambda state: state in SESSION_HOLDS_OBJECT),
    Source("unit_assets", UnitAsset.object_key, None, lambda _state: True),
    Source("unit_asset_uploads", UnitAssetUpload.object_key, UnitAssetUpload.state,
           lambda state: state == AssetUploadState.STORED),
    Source("exports", Export.object_key, None, lambda _state: True),
    Source(JOBS, ObjectDeletionJob.object_key, None, lambda _state: False),
)


def object_key_fields() -> dict[str, tuple[str, ...]]:
    """Per operation kind, the payload fields that hold an object key (each kind's
    ``KindSpec.object_keys``). Read when asked, not on import: the kinds register when
    their capabilities are imported; with none registered it refuses
    (``RegistryEmpty``) rather than answer that no operation references anything."""
    return KINDS.object_keys()


class Ref(NamedTuple):
    key: str
    table: str
    needs: bool


def ref(source: Source, key: str, state: str | None) -> Ref:
    return Ref(key, source.table, source.needs_object(state))


def referenced(s: Session, keys: Sequence[str], *,
               deletion_jobs: bool = True) -> dict[str, list[Ref]]:
    """Every row, and every unfinished operation, that names one of ``keys`` now;
    ``deletion_jobs=False`` leaves out deletion jobs (a job asking whether anything else
    still names its key)."""
    out: dict[str, list[Ref]] = defaultdict(list)
    if not keys:
        return out
    for source in SOURCES:
        if source.table == JOBS and not deletion_jobs:
            continue
        columns = (source.state,) if source.state is not None else ()
        for row in s.execute(select(source.key, *columns).where(source.key.in_(keys))):
            out[row[0]].append(ref(source, row[0],
                                   row[1] if source.state is not None else None))
    by_field: dict[str, list[str]] = defaultdict(list)
    for kind, fields in object_key_fields().items():
        for name in fields:
            by_field[name].append(kind)
    for name, kinds in by_field.items():
        named = Operation.payload[name].as_string()
        for key in s.scalars(select(named).where(
                Operation.status.in_([str(st) for st in OPEN_STATUSES]),
                Operation.kind.in_(kinds), named.in_(keys))):
            out[key].append(Ref(key, OPERATIONS, False))
    return out
