"""A trunk unit's history: its revisions (one by one or grouped by editing session), one
revision's changeset, and a restore (``wharf.history``)."""
from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from api.schemas.common import Cursor, Id, Limit, Request, Response, Timestamp
from api.schemas.issues import UserRef
from wharf.infra.pagination import DEFAULT_LIMIT

Revision = Annotated[int, msgspec.Meta(ge=0, le=2**31 - 1)]


class RevisionsQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?limit=&cursor=&group=`` of a unit's history."""

    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor | None = None
    group: Annotated[Literal["session"] | None, msgspec.Meta(description=(
        "`session`: consecutive edits by one author within WHARF_HISTORY_SESSION_GAP "
        "seconds are one entry (`first_revision`..`revision`, `count`)."))] = None


class Origin(Response, omit_defaults=True):
    kind: Annotated[Literal["edit", "merge", "restore"], msgspec.Meta(description=(
        "`edit`: a changeset; `merge`: a worktree merge (`worktree_id`, `operation_id`); "
        "`restore`: a restore of `revision`."))]
    worktree_id: str | None = None
    operation_id: str | None = None
    revision: int | None = None


class RevisionEntry(Response):
    revision: Annotated[int, msgspec.Meta(description="The revision (grouped: the newest).")]
    author: Annotated[UserRef | None, msgspec.Meta(description=(
        "Who wrote it (a deleted account: the `~deleted` placeholder); null: nobody's."))]
    created_at: Timestamp
    origin: Origin
    op_count: Annotated[int, msgspec.Meta(description="RFC 6902 operations (grouped: all).")]
    size: Annotated[int, msgspec.Meta(description=(
        "Bytes of the changeset as compact JSON (grouped: all of them)."))]
    first_revision: Annotated[int, msgspec.Meta(description=(
        "The oldest revision of the entry (ungrouped: `revision`)."))]
    first_created_at: Timestamp
    count: Annotated[int, msgspec.Meta(description="Revisions in the entry (ungrouped: 1).")]


class RevisionList(Response):
    items: list[RevisionEntry]
    next_cursor: str | None
    pruned_through: Annotated[int | None, msgspec.Meta(description=(
        "Revisions up to this one were pruned by retention (WHARF_HISTORY_RETENTION): "
        "the document after it is the oldest that reads; null: the whole history is "
        "here."))] = None


class RevisionDetail(RevisionEntry):
    changes: Annotated[list[dict[str, Any]], msgspec.Meta(description=(
        "The RFC 6902 operations that made this revision from the one before."))]


class RevisionSnapshot(Response):
    unit_id: Id
    revision: int
    snapshot: Annotated[dict[str, Any], msgspec.Meta(description=(
        "The document as it was after this revision."))]


class RestoreRequest(Request):
    revision: Annotated[Revision, msgspec.Meta(description="The revision to restore.")]
    base_revision: Annotated[Revision, msgspec.Meta(description=(
        "The unit's current revision (compare-and-set: 409 `revision_conflict` if stale)."))]
