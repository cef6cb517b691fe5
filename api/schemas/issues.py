"""Team-space issues: issues, comments, the timeline, labels (wharf.issues)."""
from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from api.schemas.common import Cursor, Id, Limit, Request, Response, Timestamp
from api.schemas.spaces import _Patch
from storage.enums import IssueEventKind, IssueState, IssueStateReason, LabelColor
from wharf.infra.pagination import DEFAULT_LIMIT
from wharf.issues.records import BODY_MAX, LABEL_NAME_MAX, SEARCH_MAX, TITLE_MAX

Title = Annotated[str, msgspec.Meta(min_length=1, max_length=TITLE_MAX,
                                    examples=["Totals row is off by one"])]
Body = Annotated[str, msgspec.Meta(max_length=BODY_MAX,
                                   description="Markdown (at most 65,536 characters).")]
CommentBody = Annotated[str, msgspec.Meta(min_length=1, max_length=BODY_MAX,
                                          description="Markdown (1 to 65,536 characters).")]
LabelName = Annotated[str, msgspec.Meta(min_length=1, max_length=LABEL_NAME_MAX,
                                        examples=["bug"])]


class UserRef(Response):
    id: Id
    username: str


class Label(Response):
    id: Id
    space_id: Id
    name: str
    color: LabelColor
    created_at: Timestamp
    updated_at: Timestamp


class LabelList(Response):
    items: list[Label]


class NodeRef(Response):
    node_id: Id
    available: Annotated[bool, msgspec.Meta(
        description="False when the node is in the trash or the caller cannot read it "
                    "(then `name` is null).")]
    name: str | None


class IssueSummary(Response):
    id: Id
    space_id: Id
    number: Annotated[int, msgspec.Meta(ge=1, description="`#N`, per space.")]
    title: str
    state: IssueState
    state_reason: IssueStateReason | None
    author: UserRef
    labels: list[Label]
    assignees: list[UserRef]
    comments: Annotated[int, msgspec.Meta(ge=0, description="How many comments it has.")]
    closed_by: UserRef | None
    closed_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp


class IssueList(Response):
    items: list[IssueSummary]
    next_cursor: str | None


class Issue(Response):
    id: Id
    space_id: Id
    number: Annotated[int, msgspec.Meta(ge=1, description="`#N`, per space.")]
    title: str
    body: str
    state: IssueState
    state_reason: IssueStateReason | None
    author: UserRef
    labels: list[Label]
    assignees: list[UserRef]
    node_refs: list[NodeRef]
    comments: Annotated[int, msgspec.Meta(ge=0, description="How many comments it has.")]
    closed_by: UserRef | None
    closed_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp


class Comment(Response):
    id: Id
    issue_id: Id
    author: UserRef
    body: str
    created_at: Timestamp
    updated_at: Timestamp


class LabelSnapshot(Response):
    id: Id
    name: str
    color: str


class UserSnapshot(Response):
    id: Id
    username: str


class NodeSnapshot(Response):
    id: Id
    name: Annotated[str | None, msgspec.Meta(
        description="The node's name when the event happened (null: not readable then).")]


class EventPayload(Response, omit_defaults=True):
    """What the event recorded, with the names as they were then."""

    reason: IssueStateReason | None = None  # closed
    from_: Annotated[str | None, msgspec.Meta(description="renamed: the old title")] = \
        msgspec.field(default=None, name="from")
    to: str | None = None  # renamed: the new title
    label: LabelSnapshot | None = None  # labeled, unlabeled
    user: UserSnapshot | None = None  # assigned, unassigned
    node: NodeSnapshot | None = None  # node_referenced, node_unreferenced
    purged: bool | None = None  # node_unreferenced because the node was deleted


class TimelineComment(Response, tag_field="type", tag="comment"):
    id: Id
    author: UserRef | None
    body: str
    created_at: Timestamp
    updated_at: Timestamp


class TimelineEvent(Response, tag_field="type", tag="event"):
    id: Id
    kind: IssueEventKind
    actor: Annotated[UserRef | None, msgspec.Meta(description="null: the system.")]
    payload: EventPayload
    created_at: Timestamp


TimelineEntry = TimelineComment | TimelineEvent


class Timeline(Response):
    items: list[TimelineEntry]
    next_cursor: str | None


# --- requests ---------------------------------------------------------------------------
class CreateIssueRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"title": "Totals row is off by one",
                                                "body": "Steps to reproduce: ..."}
    title: Title
    body: Body = ""


class UpdateIssueRequest(_Patch):
    __example__: ClassVar[dict[str, object]] = {"title": "Totals row is off by two"}
    title: Title | msgspec.UnsetType = msgspec.UNSET
    body: Body | msgspec.UnsetType = msgspec.UNSET


class CloseIssueRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"reason": "completed",
                                                "comment": "Fixed in the Q3 sheet."}
    reason: IssueStateReason = IssueStateReason.COMPLETED
    comment: Annotated[CommentBody | None, msgspec.Meta(
        description="Written with the close, shown just before the `closed` event.")] = None


class CommentRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"body": "I can reproduce this."}
    body: CommentBody


class AssignByNameRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"username": "bob"}
    username: Annotated[str, msgspec.Meta(min_length=1, max_length=64, description=(
        "The user's name, any case (404 `user_not_found` when no user has it)."))]


class CreateLabelRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"name": "bug", "color": "red"}
    name: LabelName
    color: LabelColor = LabelColor.GRAY


class UpdateLabelRequest(_Patch):
    __example__: ClassVar[dict[str, object]] = {"color": "orange"}
    name: LabelName | msgspec.UnsetType = msgspec.UNSET
    color: LabelColor | msgspec.UnsetType = msgspec.UNSET


class IssueQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``GET .../issues``: filters and a page."""

    state: Annotated[str, msgspec.Meta(
        pattern="^(open|closed|all)$", description="`open` (default), `closed` or `all`.")] \
        = "open"
    label: Annotated[str, msgspec.Meta(
        max_length=LABEL_NAME_MAX, description="A label name (case-insensitive).")] | None \
        = None
    assignee: Annotated[str, msgspec.Meta(
        max_length=64, description="A user id: issues assigned to them.")] | None = None
    author: Annotated[str, msgspec.Meta(
        max_length=64, description="A user id: issues they opened.")] | None = None
    q: Annotated[str, msgspec.Meta(
        max_length=SEARCH_MAX,
        description="Text the title contains (case-insensitive).")] | None = None
    limit: Limit = DEFAULT_LIMIT
    cursor: Cursor | None = None
