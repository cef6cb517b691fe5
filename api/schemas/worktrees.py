"""Worktrees: isolated drafts of units, merged back into trunk by operations."""
from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar

import msgspec

from api.schemas.common import Cursor, Id, IdRef, Limit, Request, Response, Timestamp
from api.schemas.spaces import _Patch
from storage.enums import PurgeReason, UnitType
from wharf.infra.pagination import DEFAULT_LIMIT
from wharf.worktrees.access import WorktreeCapabilities  # the core's own Struct
from wharf.worktrees.enums import (
    MergeState,
    WorktreeEventKind,
    WorktreeKind,
    WorktreeState,
    WorktreeUnitSource,
    WorktreeVisibility,
)

WorktreeName = Annotated[str, msgspec.Meta(
    min_length=1, max_length=255, examples=["Q3 plan review"],
    description="1-255 characters, no control characters or `/`.")]
WorktreeSummaryText = Annotated[str, msgspec.Meta(
    max_length=10_000, description="Free text (line breaks allowed); blank is null.")]


class WorktreeScope(StrEnum):
    """``active``: not merged or discarded yet; ``processed``: merged or discarded."""

    ACTIVE = "active"
    PROCESSED = "processed"


class TeamSpaceRef(Response):
    id: Id
    name: str


class UserRef(Response):
    id: Id
    username: str




class Worktree(Response):
    """A worktree's summary. A `user` worktree is its creator's alone (always `private`);
    a `team` worktree belongs to a team space, seen by the creator and the space's
    owner and admins, and by every member when its visibility is `space`."""

    id: Id
    kind: WorktreeKind
    name: str
    summary: str | None
    team_space: Annotated[TeamSpaceRef | None, msgspec.Meta(
        description="The team space (null: a user worktree).")]
    visibility: WorktreeVisibility
    state: Annotated[WorktreeState, msgspec.Meta(
        description="`draft` (editable) → `ready` (frozen for review) → `merging` → "
                    "`merged`; `draft|ready` → `discarding` → `discarded`.")]
    creator: UserRef
    unit_count: Annotated[int, msgspec.Meta(ge=0)]
    busy_operation_id: Annotated[Id | None, msgspec.Meta(
        description="The merge or discard under way (states `merging`, `discarding`).")]
    last_merge_operation_id: Id | None
    processed_at: Annotated[Timestamp | None, msgspec.Meta(
        description="When it was merged or discarded (null while active).")]
    created_at: Timestamp
    updated_at: Timestamp
    capabilities: WorktreeCapabilities


class WorktreeTarget(Response):
    space_id: Id
    parent_id: Id | None


class WorktreeUnit(Response):
    """A unit in a worktree: a trunk unit's draft, or a unit new in the worktree."""

    unit_id: Id
    resource_id: Id
    node_id: Id
    source: WorktreeUnitSource
    unit_type: UnitType
    name: str
    target: WorktreeTarget | None
    base_revision: int
    draft_revision: int
    change: Annotated[str, msgspec.Meta(extra_json_schema={
        "enum": ["added", "modified", "unchanged"]})]
    trunk_revision: int | None
    trunk_moved: bool
    merge_state: MergeState
    conflict_count: int
    activation: Annotated[str, msgspec.Meta(extra_json_schema={
        "enum": ["not_applicable", "waiting", "activated", "discarded", "blocked"]})]


class WorktreeDetail(Worktree):
    """The summary and the units (empty when the caller may not review them)."""

    units: list[WorktreeUnit]


class WorktreeList(Response):
    items: list[Worktree]
    next_cursor: str | None


class WorktreeEvent(Response):
    """Something done to the worktree by someone else: the permanent delete of trash
    (by its owner or a space admin, or by the trash retention) took a unit out of it
    (`unit_purged`: its draft is gone) or deleted the folder a unit new in it was to be
    created in (`target_purged`: the merge answers `activation_blocked` for it;
    activate it elsewhere)."""

    id: Id
    kind: WorktreeEventKind
    unit_id: Id
    resource_id: Annotated[Id | None, msgspec.Meta(
        description="The deleted resource (`unit_purged`).")]
    operation_id: Annotated[Id | None, msgspec.Meta(
        description="The `purge_trash` operation.")]
    reason: Annotated[PurgeReason, msgspec.Meta(
        description="`purge`: the trash's owner or a space admin; `retention`: "
                    "WHARF_TRASH_RETENTION.")]
    at: Timestamp


class WorktreeEventList(Response):
    items: list[WorktreeEvent]
    next_cursor: str | None


class WorktreeListQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?scope=&kind=&team_space_id=&limit=&cursor=`` of GET /api/worktrees."""

    scope: Annotated[WorktreeScope, msgspec.Meta(
        description="`active` (default) or `processed` (merged or discarded).")] = \
        WorktreeScope.ACTIVE
    kind: Annotated[WorktreeKind | None, msgspec.Meta(
        description="Only user or only team worktrees.")] = None
    team_space_id: Annotated[IdRef | None, msgspec.Meta(
        description="Only the worktrees of this team space.")] = None
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor | None = None


class CreateWorktreeRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "kind": "team", "name": "Q3 plan review",
        "team_space_id": "0f8fad5bd9cb469fa16570867728950e", "visibility": "space"}
    kind: WorktreeKind
    name: WorktreeName
    summary: WorktreeSummaryText | None = None
    team_space_id: Annotated[IdRef | None, msgspec.Meta(
        description="Required for a team worktree (editor or above in that team space); "
                    "refused for a user worktree.")] = None
    visibility: Annotated[WorktreeVisibility | None, msgspec.Meta(
        description="Team worktrees: `private` (default: the creator, owner and admins) "
                    "or `space` (every member). A user worktree is always `private`.")] \
        = None


class UpdateWorktreeRequest(_Patch):
    __example__: ClassVar[dict[str, object]] = {"name": "Q3 plan review (final)"}
    name: WorktreeName | msgspec.UnsetType = msgspec.UNSET
    summary: WorktreeSummaryText | msgspec.UnsetType | None = msgspec.UNSET
    visibility: Annotated[WorktreeVisibility | msgspec.UnsetType, msgspec.Meta(
        description="Team worktrees only (400 for a user worktree).")] = msgspec.UNSET


# --- units inside a worktree ---------------------------------------------------------------

class WorktreeUnitDetail(WorktreeUnit):
    """A unit in a worktree and its draft's document (the draft head)."""

    snapshot: dict[str, Any]


class WorktreeTargetRequest(Request):
    """Where a unit new in the worktree gets its node when the worktree is merged."""

    space_id: IdRef
    parent_id: Annotated[IdRef | None, msgspec.Meta(
        description="The folder (null: the space's root).")] = None


class AddWorktreeUnitRequest(Request):
    """`{source: "trunk", resource_id}` adds a unit of trunk (its draft starts as trunk's
    head); `{source: "worktree", name, unit_type, target, initial_snapshot?}` creates a
    unit new in the worktree (its node is created by the merge). Ids are the server's."""

    __example__: ClassVar[dict[str, object]] = {
        "source": "trunk", "resource_id": "0f8fad5bd9cb469fa16570867728950e"}
    source: WorktreeUnitSource
    resource_id: Annotated[IdRef | None, msgspec.Meta(
        description="`trunk`: the unit resource to add (editor on it).")] = None
    name: Annotated[WorktreeName | None, msgspec.Meta(
        description="`worktree`: the node's name.")] = None
    unit_type: Annotated[UnitType | None, msgspec.Meta(
        description="`worktree`: the unit's type.")] = None
    target: Annotated[WorktreeTargetRequest | None, msgspec.Meta(
        description="`worktree`: where its node will be created (editor there).")] = None
    initial_snapshot: Annotated[dict[str, Any] | None, msgspec.Meta(
        description="`worktree`: its first document (default: the type's empty one).")] \
        = None


class UpdateWorktreeUnitRequest(_Patch):
    __example__: ClassVar[dict[str, object]] = {"name": "Budget 2027"}
    name: WorktreeName | msgspec.UnsetType = msgspec.UNSET
    target: WorktreeTargetRequest | msgspec.UnsetType = msgspec.UNSET
