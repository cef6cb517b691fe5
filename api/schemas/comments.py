"""Comment threads on trunk units (wharf.comments)."""
from __future__ import annotations

from typing import Annotated, Any, ClassVar

import msgspec

from api.schemas.common import Cursor, Id, IdRef, Limit, Request, Response, Timestamp
from api.schemas.issues import UserRef
from wharf.comments.records import ANCHOR_MAX, BODY_MAX
from wharf.infra.pagination import DEFAULT_LIMIT

# The upper bound is the service's (400 ``comment_too_long``), so it is described here
# rather than declared as maxLength (which would answer ``validation_failed``).
Body = Annotated[str, msgspec.Meta(
    min_length=1, description=f"Text, 1 to {BODY_MAX:,} characters (longer: 400 "
                              "`comment_too_long`).", examples=["Is this total right?"])]
Anchor = Annotated[dict[str, Any], msgspec.Meta(
    description=f"Where the thread sits in the document, in the document's own "
                f"coordinates: any JSON object of at most {ANCHOR_MAX:,} bytes as compact "
                "UTF-8 JSON (larger: 413 `anchor_too_large`). Stored and returned as sent.",
    examples=[{"sheet": "s1", "range": "B2:C4"}])]
Generation = Annotated[int, msgspec.Meta(
    ge=1, le=2**31 - 1, description="The generation the client read: the write applies "
                                    "only if it is still the current one (else 409 "
                                    "`comment_conflict`).")]


class UnitComment(Response):
    id: Id
    thread_id: Annotated[str, msgspec.Meta(description="Its thread: the thread's first "
                                                       "comment's id.")]
    author: Annotated[UserRef, msgspec.Meta(
        description="`~deleted` once the author's account was deleted.")]
    body: str
    generation: Annotated[int, msgspec.Meta(ge=1, description="Bumped by every edit.")]
    created_at: Timestamp
    updated_at: Timestamp


class CommentThread(Response):
    thread_id: Id
    anchor: dict[str, Any]
    solved: bool
    generation: Annotated[int, msgspec.Meta(
        ge=1, description="Bumped by every change to the thread: a reply, the solved "
                          "state, an edit, a reply deleted.")]
    created_at: Timestamp
    updated_at: Timestamp
    comments: Annotated[list[UnitComment], msgspec.Meta(
        description="Oldest first; the first one opened the thread.")]


class CommentThreadList(Response):
    items: list[CommentThread]
    next_cursor: str | None


class CommentQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``GET /api/units/{unit_id}/comments``: a filter and a page."""

    solved: Annotated[str, msgspec.Meta(
        pattern="^(true|false)$",
        description="`true`: only solved threads; `false`: only open ones; absent: all.")] \
        | None = None
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor | None = None


class CreateCommentRequest(Request):
    __example__: ClassVar[dict[str, object]] = {
        "anchor": {"sheet": "s1", "range": "B2:C4"}, "body": "Is this total right?"}
    body: Body
    anchor: Annotated[Anchor | None, msgspec.Meta(
        description="Starts a thread here (give this or `thread_id`).")] = None
    thread_id: Annotated[IdRef | None, msgspec.Meta(
        description="Replies in this thread (give this or `anchor`).")] = None


class EditCommentRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"body": "Is this total right? (Q3)",
                                                "generation": 1}
    body: Body
    generation: Generation


class SolvedRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"solved": True, "generation": 2}
    solved: bool
    generation: Generation
