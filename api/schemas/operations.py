"""Operations (a tagged union keyed by ``kind``, each with its kind's ``result``), their
attempts, unit resources, units and RFC 6902 JSON Patch changesets.

The results and the error shape are the core's own Structs (``wharf.operations.kinds``):
what a handler returns is what the document declares.
"""
from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec

from api.schemas.common import Cursor, Id, IdRef, Limit, Request, Response, Timestamp
from api.schemas.spaces import Node
from storage.enums import AttemptOutcome, OperationStatus, ResourceKind, UnitType, values
from wharf.infra.pagination import DEFAULT_LIMIT
from wharf.operations.kinds import (
    ActivateWorktreeResourceResult,
    AddWorktreeUnitResult,
    CreateBlobResourceResult,
    CreateResourceResult,
    CreateWorktreeResult,
    CreateWorktreeUnitResult,
    DeleteAccountResult,
    DiscardWorktreeResult,
    MergeWorktreeResult,
    OperationError,
    OperationKind,
    PublishAssetResult,
    PurgeTrashResult,
    ReplaceBlobContentResult,
)
from wharf.operations.service import KIND_PATTERN

#: ``?wait=`` accepts up to ``WAIT_ACCEPTED`` seconds; the server waits at most
#: ``MAX_WAIT`` (a larger value counts as ``MAX_WAIT``).
MAX_WAIT = 60.0
WAIT_ACCEPTED = 3600.0


# --- operations --------------------------------------------------------------------------

class _Operation(Response, tag_field="kind"):
    """The fields of every operation; ``kind`` says which ``result`` it carries."""

    id: Id
    status: OperationStatus
    done: Annotated[bool, msgspec.Meta(description="The status is completed or failed.")]
    attempts: Annotated[int, msgspec.Meta(ge=0)]
    max_attempts: int
    created_at: Timestamp
    updated_at: Timestamp
    completed_at: Timestamp | None
    next_attempt_at: Annotated[Timestamp | None, msgspec.Meta(
        description="When the next attempt is due (after a retryable failure).")]
    error: Annotated[OperationError | None, msgspec.Meta(
        description="Why it failed (status failed), or the last retryable failure.")]
    can_retry: Annotated[bool, msgspec.Meta(
        description="`POST /api/operations/{id}/retry` can reopen it: it failed, and its "
                    "kind's failure did not dispose of its input (otherwise the retry "
                    "answers 409 `retry_not_possible` or `operation_state_conflict`; "
                    "submit the request again instead).")]


class CreateResourceOperation(_Operation, tag=OperationKind.CREATE_RESOURCE.value):
    """``create_resource``: a unit resource (POST /api/resources)."""

    result: Annotated[CreateResourceResult | None, msgspec.Meta(
        description="Once completed: the new node, resource and unit.")]


class PurgeTrashOperation(_Operation, tag=OperationKind.PURGE_TRASH.value):
    """``purge_trash``: a trash batch deleted permanently."""

    result: Annotated[PurgeTrashResult | None, msgspec.Meta(
        description="Once completed: what was deleted.")]


class CreateBlobResourceOperation(_Operation, tag=OperationKind.CREATE_BLOB_RESOURCE.value):
    """``create_blob_resource``: a completed upload verified and published."""

    result: Annotated[CreateBlobResourceResult | None, msgspec.Meta(
        description="Once completed: the new node and blob resource.")]


class ReplaceBlobContentOperation(_Operation, tag=OperationKind.REPLACE_BLOB_CONTENT.value):
    """``replace_blob_content``: a blob's bytes replaced."""

    result: Annotated[ReplaceBlobContentResult | None, msgspec.Meta(
        description="Once completed: the blob's new ETag.")]


class PublishAssetOperation(_Operation, tag=OperationKind.PUBLISH_ASSET.value):
    """``publish_asset``: an uploaded unit asset verified and published."""

    result: Annotated[PublishAssetResult | None, msgspec.Meta(
        description="Once completed: the asset and where its bytes are served.")]


class CreateWorktreeOperation(_Operation, tag=OperationKind.CREATE_WORKTREE.value):
    """``create_worktree``: a worktree created (POST /api/worktrees)."""

    result: Annotated[CreateWorktreeResult | None, msgspec.Meta(
        description="Once completed: the new worktree.")]


class DiscardWorktreeOperation(_Operation, tag=OperationKind.DISCARD_WORKTREE.value):
    """``discard_worktree``: a worktree discarded, its assets deleted."""

    result: Annotated[DiscardWorktreeResult | None, msgspec.Meta(
        description="Once completed: what the discard deleted and cancelled.")]


class AddWorktreeUnitOperation(_Operation, tag=OperationKind.ADD_WORKTREE_UNIT.value):
    """``add_worktree_unit``: a trunk unit added to a worktree (its draft forked)."""

    result: Annotated[AddWorktreeUnitResult | None, msgspec.Meta(
        description="Once completed: the unit and the trunk revision its draft starts at.")]


class CreateWorktreeUnitOperation(_Operation, tag=OperationKind.CREATE_WORKTREE_UNIT.value):
    """``create_worktree_unit``: a unit new in a worktree (node created at merge)."""

    result: Annotated[CreateWorktreeUnitResult | None, msgspec.Meta(
        description="Once completed: the unit and its reserved resource and node ids.")]
class MergeWorktreeOperation(_Operation, tag=OperationKind.MERGE_WORKTREE.value):
    """``merge_worktree``: a ready worktree merged into trunk, unit by unit."""

    result: Annotated[MergeWorktreeResult | None, msgspec.Meta(
        description="Once completed: each unit's outcome and the worktree's new state "
                    "(a conflict is an outcome, not a failure); a bounded summary (under "
                    "64 KiB): each unit's conflicts are a clipped sample, read them all "
                    "through the unit's `/conflicts`.")]



class ActivateWorktreeResourceOperation(
        _Operation, tag=OperationKind.ACTIVATE_WORKTREE_RESOURCE.value):
    """``activate_worktree_resource``: the node of a merged unit, blocked at the merge,
    created at its (new) target."""

    result: Annotated[ActivateWorktreeResourceResult | None, msgspec.Meta(
        description="Once completed: the unit and its new node and resource.")]

class DeleteAccountOperation(_Operation, tag=OperationKind.DELETE_ACCOUNT.value):
    """``delete_account``: the submitter's account and everything it owns, deleted
    (``DELETE /api/me``)."""

    result: Annotated[DeleteAccountResult | None, msgspec.Meta(
        description="Once completed: the deleted account's id.")]


Operation = (CreateResourceOperation | PurgeTrashOperation | CreateBlobResourceOperation
             | ReplaceBlobContentOperation | PublishAssetOperation | CreateWorktreeOperation
             | DiscardWorktreeOperation | AddWorktreeUnitOperation
             | CreateWorktreeUnitOperation | MergeWorktreeOperation
             | ActivateWorktreeResourceOperation | DeleteAccountOperation)
#: The Struct of each kind's operations.
OPERATION_TYPES: dict[str, type[_Operation]] = {
    OperationKind.CREATE_RESOURCE.value: CreateResourceOperation,
    OperationKind.PURGE_TRASH.value: PurgeTrashOperation,
    OperationKind.CREATE_BLOB_RESOURCE.value: CreateBlobResourceOperation,
    OperationKind.REPLACE_BLOB_CONTENT.value: ReplaceBlobContentOperation,
    OperationKind.PUBLISH_ASSET.value: PublishAssetOperation,
    OperationKind.CREATE_WORKTREE.value: CreateWorktreeOperation,
    OperationKind.DISCARD_WORKTREE.value: DiscardWorktreeOperation,
    OperationKind.ADD_WORKTREE_UNIT.value: AddWorktreeUnitOperation,
    OperationKind.CREATE_WORKTREE_UNIT.value: CreateWorktreeUnitOperation,
    OperationKind.MERGE_WORKTREE.value: MergeWorktreeOperation,
    OperationKind.ACTIVATE_WORKTREE_RESOURCE.value: ActivateWorktreeResourceOperation,
    OperationKind.DELETE_ACCOUNT.value: DeleteAccountOperation,
}


class OperationList(Response):
    items: list[Operation]
    next_cursor: str | None


class OperationQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?wait=`` of GET /api/operations/{operation_id}."""

    wait: Annotated[float, msgspec.Meta(
        ge=0, le=WAIT_ACCEPTED,
        description=f"Long-poll: answer as soon as the operation is done, or after this "
                    f"many seconds. Up to {WAIT_ACCEPTED:g} is accepted; the server waits "
                    f"at most {MAX_WAIT:g} s (a larger value counts as {MAX_WAIT:g}). "
                    f"0 or absent: answer at once.")] = 0.0


class OperationListQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?limit=&cursor=&status=&kind=`` of GET /api/operations."""

    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor | None = None
    status: OperationStatus | None = None
    kind: Annotated[str, msgspec.Meta(
        pattern=KIND_PATTERN, extra_json_schema={"enum": list(values(OperationKind))},
        description="Only operations of this kind (a kind with no operations gives an "
                    "empty page).")] | None = None


class OperationAttempt(Response):
    number: int
    worker_id: str
    started_at: Timestamp
    finished_at: Timestamp | None
    outcome: AttemptOutcome | None
    error: OperationError | None


class OperationAttemptList(Response):
    items: list[OperationAttempt]


# --- unit resources and units --------------------------------------------------------------

class CreateResourceRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "space_id": "0f8fad5bd9cb469fa16570867728950e", "name": "Q3 plans",
        "unit_type": "doc"}
    space_id: IdRef
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=255, examples=["Q3 plans"])]
    unit_type: UnitType
    parent_id: Annotated[IdRef | None, msgspec.Meta(
        description="The folder to create it in (null or absent: the space's root).")] = None


class ResourceUnit(Response):
    unit_id: Id
    unit_type: UnitType


class Resource(Response):
    id: Id
    kind: ResourceKind
    node_id: Id
    created_by: Id
    created_at: Timestamp
    unit: ResourceUnit | None
    node: Node


class Unit(Response):
    unit_id: Id
    unit_type: UnitType
    revision: Annotated[int, msgspec.Meta(ge=0)]
    snapshot: dict[str, Any]
    resource_id: Id
    node_id: Id
    updated_at: Timestamp


Pointer = Annotated[str, msgspec.Meta(description="An RFC 6901 JSON Pointer.",
                                      examples=["/body/title"])]


class PatchAdd(Response, tag_field="op", tag="add"):
    path: Pointer
    value: Any


class PatchRemove(Response, tag_field="op", tag="remove"):
    path: Pointer


class PatchReplace(Response, tag_field="op", tag="replace"):
    path: Pointer
    value: Any


class PatchMove(Response, tag_field="op", tag="move", rename={"from_": "from"}):
    from_: Pointer
    path: Pointer


class PatchCopy(Response, tag_field="op", tag="copy", rename={"from_": "from"}):
    from_: Pointer
    path: Pointer


class PatchTest(Response, tag_field="op", tag="test"):
    path: Pointer
    value: Any


#: One RFC 6902 operation, keyed by ``op`` (other members are ignored, as the RFC says).
PatchOperation = PatchAdd | PatchRemove | PatchReplace | PatchMove | PatchCopy | PatchTest


class ChangesetRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "base_revision": 0,
        "changes": [{"op": "add", "path": "/body/title", "value": "Hello"}]}
    base_revision: Annotated[int, msgspec.Meta(
        ge=0, description="The revision the changes were made against (409 "
                          "`revision_conflict` if the unit moved on).")]
    changes: Annotated[list[PatchOperation], msgspec.Meta(min_length=1, max_length=10000)]


class ChangesetResult(Response):
    unit_id: Id
    revision: int
    snapshot: dict[str, Any]
