"""The operation kinds' typed payloads and results: one ``msgspec.Struct`` per shape.

A payload is fixed when the operation is submitted and stored in ``operations.payload``
(a JSON column); a result is what the kind's ``commit`` returns, stored in
``operations.result`` and served as ``Operation.result``. The Structs are the one
declaration of those shapes: submission builds the payload Struct and stores
``to_json(payload)``, handlers read ``payload(op, CreateResourcePayload).unit_id``, and
the API's ``Operation`` schema is a union of the result Structs keyed by ``kind``.

The stored JSON stays what it was before these types existed: fields are declared in the
order the dicts were written, optional fields with a default are omitted when they hold
it (``omit_defaults``), and unknown keys in an old row are ignored on decoding.
"""
from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated, Any, TypeVar

import msgspec

from storage.models import Operation


class OperationKind(StrEnum):
    """What an operation does (``operations.kind``)."""

    CREATE_RESOURCE = "create_resource"
    PURGE_TRASH = "purge_trash"
    CREATE_BLOB_RESOURCE = "create_blob_resource"
    REPLACE_BLOB_CONTENT = "replace_blob_content"
    PUBLISH_ASSET = "publish_asset"
    CREATE_WORKTREE = "create_worktree"
    DISCARD_WORKTREE = "discard_worktree"
    ADD_WORKTREE_UNIT = "add_worktree_unit"
    CREATE_WORKTREE_UNIT = "create_worktree_unit"
    MERGE_WORKTREE = "merge_worktree"
    ACTIVATE_WORKTREE_RESOURCE = "activate_worktree_resource"
    DELETE_ACCOUNT = "delete_account"


CREATE_RESOURCE = OperationKind.CREATE_RESOURCE.value
PURGE_TRASH = OperationKind.PURGE_TRASH.value
CREATE_BLOB_RESOURCE = OperationKind.CREATE_BLOB_RESOURCE.value
REPLACE_BLOB_CONTENT = OperationKind.REPLACE_BLOB_CONTENT.value
PUBLISH_ASSET = OperationKind.PUBLISH_ASSET.value
CREATE_WORKTREE = OperationKind.CREATE_WORKTREE.value
DISCARD_WORKTREE = OperationKind.DISCARD_WORKTREE.value
ADD_WORKTREE_UNIT = OperationKind.ADD_WORKTREE_UNIT.value
CREATE_WORKTREE_UNIT = OperationKind.CREATE_WORKTREE_UNIT.value
MERGE_WORKTREE = OperationKind.MERGE_WORKTREE.value
ACTIVATE_WORKTREE_RESOURCE = OperationKind.ACTIVATE_WORKTREE_RESOURCE.value
DELETE_ACCOUNT = OperationKind.DELETE_ACCOUNT.value


#: Kinds whose failure disposes of the operation's input, so a failed one cannot be
#: retried (submit the request again instead): ``create_blob_resource`` (its session's
#: object is quarantined, or the session sent back to waiting_for_upload),
#: ``replace_blob_content`` (the staged object is queued for deletion), ``publish_asset``
#: (the upload row is deleted and its object queued for deletion), ``discard_worktree``
#: (failing gives the worktree back its state: discard again instead). Read through
#: ``wharf.operations.service.can_retry``.
INPUT_CONSUMED_ON_FAILURE: frozenset[str] = frozenset({
    CREATE_BLOB_RESOURCE, REPLACE_BLOB_CONTENT, PUBLISH_ASSET, DISCARD_WORKTREE})

class _Shape(msgspec.Struct, frozen=True, omit_defaults=True):
    """Base of the stored shapes (immutable; defaults are not written)."""


# --- create_resource (wharf/units/resources.py) ----------------------------------------------

class CreateResourcePayload(_Shape, frozen=True):
    """The new unit resource, its ids fixed at submission."""

    space_id: str
    parent_id: str | None
    name: str
    unit_type: str
    node_id: str
    resource_id: str
    unit_id: str


class CreateResourceResult(_Shape, frozen=True):
    node_id: str
    resource_id: str
    unit_id: str


# --- purge_trash (wharf/trash/service.py) ------------------------------------------------------

class PurgeTrashPayload(_Shape, frozen=True):
    """The batch to delete permanently; ``by_retention`` when the retention sweep
    submitted it (the worker then skips the submitter's permission re-check)."""

    batch_id: str
    root_node_id: str
    space_id: str
    by_retention: bool = False


class PurgeTrashResult(_Shape, frozen=True):
    batch_id: str
    nodes_deleted: int
    resources_deleted: int
    objects_queued: int
    batches_deleted: int
    nested_batch_ids: list[str]


# --- create_blob_resource (wharf/blobs/) ---------------------------------------------

class CreateBlobResourcePayload(_Shape, frozen=True):
    """The verified upload to publish: the session's reserved ids and its object."""

    session_id: str
    space_id: str
    parent_id: str | None
    filename: str
    node_id: str
    resource_id: str
    object_key: str
    size: int
    sha256: str
    mime_type: str
    object_etag: str


class CreateBlobResourceResult(_Shape, frozen=True):
    node_id: str
    resource_id: str


# --- replace_blob_content (wharf/blobs/) ---------------------------------------------

class ReplaceBlobContentPayload(_Shape, frozen=True):
    """The staged object that replaces a blob's content if ``if_match`` still holds."""

    resource_id: str
    node_id: str
    if_match: str
    object_key: str
    size: int
    sha256: str
    mime_type: str
    object_etag: str


class ReplaceBlobContentResult(_Shape, frozen=True):
    resource_id: str
    etag: str


# --- publish_asset (wharf/assets/) ----------------------------------------------------

class PublishAssetPayload(_Shape, frozen=True):
    """The upload to publish: its row, the reserved asset id and object key, and the scope
    (``worktree_id`` None = the trunk unit). ``content_sha256`` is the digest the client
    declared (``Content-SHA256``), when it sent one."""

    upload_id: str
    asset_id: str
    unit_id: str
    object_key: str
    filename: str
    media_type: str
    size: int
    worktree_id: str | None = None
    content_sha256: str | None = None


class AssetDescription(_Shape, frozen=True, kw_only=True):
    """How an asset is described wherever it is shown: in a ``publish_asset`` result and
    in the asset's metadata (``api.schemas.assets.Asset``, which adds its id, name and
    history). Built from the row by ``wharf.assets.describe``."""

    unit_id: str
    worktree_id: Annotated[str | None, msgspec.Meta(
        description="null: a trunk asset (worktree assets arrive with worktrees).")]
    media_type: Annotated[str, msgspec.Meta(
        description="The type declared at upload (its `Content-Type`), served as "
                    "`Content-Type`.", examples=["image/png"])]
    detected_media_type: Annotated[str, msgspec.Meta(
        description="What the server detected from the bytes (HTML, SVG, XML or script "
                    "in either type: always served as an attachment).")]
    size: int
    sha256: str
    content_url: Annotated[str, msgspec.Meta(
        description="The same-origin path of the bytes: the trunk gateway, or the "
                    "worktree's for a worktree asset.",
        examples=["/api/assets/0f8fad5bd9cb469fa16570867728950e/content"])]


class PublishAssetResult(AssetDescription, frozen=True, kw_only=True):
    asset_id: str


# --- create_worktree, discard_worktree (wharf/worktrees/) ---------------------------

class CreateWorktreePayload(_Shape, frozen=True):
    """The new worktree, its id fixed at submission (``team_space_id`` None: a user
    worktree, always ``private``)."""

    worktree_id: str
    kind: str
    name: str
    summary: str | None
    team_space_id: str | None
    visibility: str


class CreateWorktreeResult(_Shape, frozen=True):
    worktree_id: str


class DiscardWorktreePayload(_Shape, frozen=True):
    """The worktree being discarded and the state it left at submission (restored if
    the operation fails)."""

    worktree_id: str
    from_state: str


class DiscardWorktreeResult(_Shape, frozen=True):
    worktree_id: str
    state: str
    assets_deleted: int
    uploads_cancelled: int
    intents_discarded: int


# --- add_worktree_unit, create_worktree_unit (wharf/worktrees/units.py) ---------------

class AddWorktreeUnitPayload(_Shape, frozen=True):
    """A trunk unit to add to a worktree: its draft is forked from the trunk head."""

    worktree_id: str
    resource_id: str
    unit_id: str
    unit_type: str


class AddWorktreeUnitResult(_Shape, frozen=True):
    worktree_id: str
    unit_id: str
    resource_id: str
    base_revision: int


class CreateWorktreeUnitPayload(_Shape, frozen=True):
    """A unit new in the worktree, its ids fixed at submission (``resource_id`` and
    ``node_id`` are reserved: they exist once a merge activates the unit), where its node
    will be created, and its first document (None: the type's initial snapshot)."""

    worktree_id: str
    unit_id: str
    resource_id: str
    node_id: str
    unit_type: str
    name: str
    space_id: str
    parent_id: str | None
    initial_snapshot: dict[str, Any] | None = None


class CreateWorktreeUnitResult(_Shape, frozen=True):
    worktree_id: str
    unit_id: str
    resource_id: str
    node_id: str
# --- merge_worktree (wharf/worktrees/merging.py) -------------------------------------

class MergeWorktreePayload(_Shape, frozen=True):
    """The worktree being merged (it is ``merging``, held by this operation)."""

    worktree_id: str


class MergeUnitResult(_Shape, frozen=True):
    """One unit's outcome (``unchanged``, ``fast_forward``, ``merged``, ``created``,
    ``conflict`` or ``activation_blocked``); ``conflict_count``: all its conflicts;
    ``conflicts``: a bounded sample (the first 3 of the unit, 10 in the whole result, each
    path and value clipped to 128 bytes of JSON); the full list is the unit's
    ``/conflicts``."""

    unit_id: str
    resource_id: str
    node_id: str | None
    outcome: str
    trunk_revision_before: int | None
    trunk_revision_after: int | None
    conflict_count: int
    conflicts: list[dict[str, Any]]


class MergeWorktreeResult(_Shape, frozen=True):
    """A bounded summary (under 64 KiB): ``counts`` has every unit, ``units`` the first
    200 in ordinal order (``units_truncated`` when there are more)."""

    worktree_id: str
    state: str
    counts: dict[str, int]
    assets_published: int
    units: list[MergeUnitResult]
    units_truncated: bool = False


# --- activate_worktree_resource (wharf/worktrees/activation.py) ------------------------

class ActivateWorktreeResourcePayload(_Shape, frozen=True):
    """A unit new in a worktree, in trunk already, whose node's activation was blocked
    (its target folder went away): its node is created at the intent's (new) target."""

    worktree_id: str
    unit_id: str
    node_id: str
    resource_id: str


class ActivateWorktreeResourceResult(_Shape, frozen=True):
    worktree_id: str
    unit_id: str
    node_id: str
    resource_id: str


# --- delete_account (wharf/accounts/service.py) ------------------------------------------------

class DeleteAccountPayload(_Shape, frozen=True):
    """The account being deleted (``deleting`` since the submission)."""

    user_id: str


class DeleteAccountResult(_Shape, frozen=True):
    user_id: str


# --- errors ------------------------------------------------------------------------------

class OperationError(_Shape, frozen=True):
    """Why an attempt or the operation failed (``operations.error``,
    ``operation_attempts.error``): a problem ``code``, a message, whether the executor
    would retry it, and the problem's ``details`` when it had any."""

    code: str
    message: str
    retryable: bool
    details: dict[str, Any] | None = None


PAYLOADS: dict[str, type[msgspec.Struct]] = {
    CREATE_RESOURCE: CreateResourcePayload,
    PURGE_TRASH: PurgeTrashPayload,
    CREATE_BLOB_RESOURCE: CreateBlobResourcePayload,
    REPLACE_BLOB_CONTENT: ReplaceBlobContentPayload,
    PUBLISH_ASSET: PublishAssetPayload,
    CREATE_WORKTREE: CreateWorktreePayload,
    DISCARD_WORKTREE: DiscardWorktreePayload,
    ADD_WORKTREE_UNIT: AddWorktreeUnitPayload,
    CREATE_WORKTREE_UNIT: CreateWorktreeUnitPayload,
    MERGE_WORKTREE: MergeWorktreePayload,
    ACTIVATE_WORKTREE_RESOURCE: ActivateWorktreeResourcePayload,
    DELETE_ACCOUNT: DeleteAccountPayload,
}
RESULTS: dict[str, type[msgspec.Struct]] = {
    CREATE_RESOURCE: CreateResourceResult,
    PURGE_TRASH: PurgeTrashResult,
    CREATE_BLOB_RESOURCE: CreateBlobResourceResult,
    REPLACE_BLOB_CONTENT: ReplaceBlobContentResult,
    PUBLISH_ASSET: PublishAssetResult,
    CREATE_WORKTREE: CreateWorktreeResult,
    DISCARD_WORKTREE: DiscardWorktreeResult,
    ADD_WORKTREE_UNIT: AddWorktreeUnitResult,
    CREATE_WORKTREE_UNIT: CreateWorktreeUnitResult,
    MERGE_WORKTREE: MergeWorktreeResult,
    ACTIVATE_WORKTREE_RESOURCE: ActivateWorktreeResourceResult,
    DELETE_ACCOUNT: DeleteAccountResult,
}

S = TypeVar("S", bound=msgspec.Struct)


def payload(op: Operation, shape: type[S]) -> S:
    """The operation's stored payload as ``shape`` (a ``msgspec.ValidationError`` if the
    row does not hold one)."""
    return msgspec.convert(op.payload, shape)


#: Fields a kind's result gained after rows were written: read older rows with these
#: (from the stored result).
_RESULT_BACKFILL: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    # before nested trash batches, a purge deleted exactly its own batch
    PURGE_TRASH: lambda stored: {"batches_deleted": 1, "nested_batch_ids": []},
    # before results described an asset as its metadata does: a trunk asset unless the
    # row said otherwise, and the declared type (what publishing recorded as detected
    # when detection found nothing)
    PUBLISH_ASSET: lambda stored: {"worktree_id": None,
                                   "detected_media_type": stored.get("media_type")},
}
#: What an error stored without a field reads as (the recovery sweep once wrote a lost
#: attempt's error as only ``{"code": "lease_expired", "retryable": true}``).
_ERROR_BACKFILL: dict[str, Any] = {"code": "internal_error", "message": "", "retryable": False}


def read_result(kind: str, stored: dict[str, Any] | None) -> msgspec.Struct | None:
    """A stored result as its kind's Struct, older rows included."""
    if stored is None:
        return None
    backfill = _RESULT_BACKFILL.get(kind)
    return msgspec.convert({**(backfill(stored) if backfill else {}), **stored}, RESULTS[kind])


def read_error(stored: dict[str, Any] | None) -> OperationError | None:
    """A stored operation or attempt error, older rows included."""
    if stored is None:
        return None
    return msgspec.convert({**_ERROR_BACKFILL, **stored}, OperationError)


def to_json(value: msgspec.Struct | dict[str, Any]) -> dict[str, Any]:
    """What is stored in a JSON column for a payload, result or error Struct (a plain
    dict passes through unchanged)."""
    if isinstance(value, dict):
        return value
    out: dict[str, Any] = msgspec.to_builtins(value)
    return out
