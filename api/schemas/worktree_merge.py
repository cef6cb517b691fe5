"""Merging worktrees: a unit's merge preview, its last merge's conflicts, a rebase with
resolutions (specs/assets-worktrees.md §6.2, §8)."""
from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, ClassVar

import msgspec

from api.schemas.common import Cursor, Id, IdRef, Limit, Request, Response
from wharf.infra.pagination import DEFAULT_LIMIT


class PreviewOutcome(StrEnum):
    UNCHANGED = "unchanged"
    FAST_FORWARD = "fast_forward"
    MERGED = "merged"
    CREATED = "created"
    CONFLICT = "conflict"


class MergeConflictRecord(Response):
    """Both sides changed the value at ``path`` (a JSON Pointer) differently; a side
    that has no value there (deleted, or never added) is left out. Values over 4 KiB of
    JSON are ``{"$truncated": true, "size": N, "sha256": "…"}``."""

    path: str
    base: Any = msgspec.UNSET
    trunk: Any = msgspec.UNSET
    draft: Any = msgspec.UNSET


class MergePreview(Response):
    outcome: PreviewOutcome
    trunk_revision: Annotated[int | None, msgspec.Meta(
        description="The trunk head the preview was computed against (null: a unit new "
                    "in the worktree).")]
    conflict_count: Annotated[int, msgspec.Meta(ge=0)]
    conflicts: Annotated[list[MergeConflictRecord], msgspec.Meta(
        description="The first 100 conflicts.")]
    patch_ops: Annotated[int, msgspec.Meta(
        ge=0, description="How many JSON Patch operations the merge would write to trunk.")]


class ConflictQuery(msgspec.Struct, forbid_unknown_fields=False):
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor | None = None


class ConflictList(Response):
    operation_id: Annotated[Id | None, msgspec.Meta(
        description="The unit's last merge (null: never merged).")]
    conflict_count: Annotated[int, msgspec.Meta(
        ge=0, description="All the conflicts found (at most WHARF_MERGE_MAX_CONFLICTS "
                          "are stored).")]
    items: list[MergeConflictRecord]
    next_cursor: str | None


class Take(StrEnum):
    TRUNK = "trunk"
    DRAFT = "draft"


class Resolution(Request):
    path: Annotated[str, msgspec.Meta(max_length=65_536,
                                      description="A conflict's JSON Pointer.")]
    take: Take


class RebaseRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "draft_revision": 3,
        "resolutions": [{"path": "/sheets/s1/cellData/0/0/v", "take": "draft"}]}

    draft_revision: Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]
    resolutions: Annotated[list[Resolution], msgspec.Meta(max_length=10_000)] = \
        msgspec.field(default_factory=list)


class RebaseResult(Response):
    draft_revision: int
    base_revision: int


class ActivateTargetRequest(Request):
    """Where the node is to be created instead (the right to create there)."""

    space_id: IdRef
    parent_id: Annotated[IdRef | None, msgspec.Meta(
        description="The folder (null: the space's root).")] = None


class ActivateUnitRequest(Request):
    """Re-drive the blocked activation of a unit new in the worktree (its node), at its
    stored target or at ``target``."""

    __example__: ClassVar[dict[str, object]] = {
        "target": {"space_id": "0f8fad5bd9cb469fa16570867728950e", "parent_id": None}}
    target: ActivateTargetRequest | None = None
