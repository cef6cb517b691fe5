"""Team-space issues under ``/api/spaces/{space_id}/issues`` (wharf.issues).

Every write is one transaction (no operation, no ``Idempotency-Key``): a client unsure
whether a write happened reads the issue or its timeline before trying again.
"""
from __future__ import annotations

from datetime import datetime
from typing import Protocol

import falcon

from api import contract
from api.schemas.common import PageQuery
from api.schemas.issues import (
    AssignByNameRequest,
    CloseIssueRequest,
    Comment,
    CommentRequest,
    CreateIssueRequest,
    CreateLabelRequest,
    EventPayload,
    Issue,
    IssueList,
    IssueQuery,
    IssueSummary,
    Label,
    LabelList,
    LabelSnapshot,
    NodeRef,
    NodeSnapshot,
    Timeline,
    TimelineComment,
    TimelineEntry,
    TimelineEvent,
    UpdateIssueRequest,
    UpdateLabelRequest,
    UserRef,
    UserSnapshot,
)
from api.schemas.spaces import changes
from api.serialize import User, timestamp
from storage.db import Database
from storage.enums import IssueEventKind, IssueState, IssueStateReason, LabelColor
from wharf.identity import people
from wharf.infra.clock import iso
from wharf.issues import service
from wharf.issues.service import IssueFilters, IssueView
from wharf.issues.timeline import TimelineItem

TAGS = ["issues"]
ACCESS = ("404 when the space cannot be discovered; 409 `not_a_team_space` for a personal "
          "space.")
WRITE = ACCESS + (" Writes need membership (403 `not_a_member`); a read-only team space "
                  "takes none (403 `space_read_only`).")


class IssueLabel(Protocol):
    id: str
    space_id: str
    name: str
    color: str
    created_at: datetime
    updated_at: datetime


class IssueComment(Protocol):
    id: str
    issue_id: str
    body: str
    created_at: datetime
    updated_at: datetime


def user_ref(u: User) -> UserRef:
    return UserRef(id=u.id, username=u.username)


def label_body(label: IssueLabel) -> Label:
    return Label(id=label.id, space_id=label.space_id, name=label.name,
                 color=LabelColor(label.color), created_at=timestamp(label.created_at),
                 updated_at=timestamp(label.updated_at))


def _common(v: IssueView) -> dict[str, object]:
    i = v.issue
    return {"id": i.id, "space_id": i.space_id, "number": i.number, "title": i.title,
            "state": IssueState(i.state),
            "state_reason": IssueStateReason(i.state_reason) if i.state_reason else None,
            "author": user_ref(v.author), "labels": [label_body(lb) for lb in v.labels],
            "assignees": [user_ref(u) for u in v.assignees], "comments": v.comments,
            "closed_by": user_ref(v.closed_by) if v.closed_by else None,
            "closed_at": iso(i.closed_at), "created_at": timestamp(i.created_at),
            "updated_at": timestamp(i.updated_at)}


def issue_body(v: IssueView) -> Issue:
    return Issue(body=v.issue.body,
                 node_refs=[NodeRef(node_id=r.node_id, available=r.available, name=r.name)
                            for r in v.node_refs or []],
                 **_common(v))  # type: ignore[arg-type]


def summary_body(v: IssueView) -> IssueSummary:
    return IssueSummary(**_common(v))  # type: ignore[arg-type]


def comment_body(c: IssueComment, author: User) -> Comment:
    return Comment(id=c.id, issue_id=c.issue_id, author=user_ref(author), body=c.body,
                   created_at=timestamp(c.created_at), updated_at=timestamp(c.updated_at))


def _payload(data: dict[str, object]) -> EventPayload:
    """A stored payload as its typed form (unknown keys, if any, are left out)."""
    label, user, node = data.get("label"), data.get("user"), data.get("node")
    reason = data.get("reason")
    return EventPayload(
        reason=IssueStateReason(reason) if isinstance(reason, str) else None,
        from_=data.get("from") if isinstance(data.get("from"), str) else None,  # type: ignore[arg-type]
        to=data.get("to") if isinstance(data.get("to"), str) else None,  # type: ignore[arg-type]
        label=LabelSnapshot(**label) if isinstance(label, dict) else None,
        user=UserSnapshot(**user) if isinstance(user, dict) else None,
        node=NodeSnapshot(**node) if isinstance(node, dict) else None,
        purged=True if data.get("purged") else None)


def entry(item: TimelineItem) -> TimelineEntry:
    who = user_ref(item.user) if item.user is not None else None
    if item.comment is not None:
        c = item.comment
        return TimelineComment(id=c.id, author=who, body=c.body,
                               created_at=timestamp(c.created_at),
                               updated_at=timestamp(c.updated_at))
    e = item.event
    assert e is not None
    return TimelineEvent(id=e.id, kind=IssueEventKind(e.kind), actor=who,
                         payload=_payload(e.payload or {}), created_at=timestamp(e.created_at))


class Issues:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listIssues", summary="Issues of a team space, newest first",
                 tags=TAGS, query=IssueQuery, responses={200: IssueList}, problems=(409,),
                 description="Filters: `state` (`open` by default, `closed`, `all`), `label` "
                             "(a name), `assignee` and `author` (user ids), `q` (text in the "
                             "title, case-insensitive). " + ACCESS)
    def on_get(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        q = contract.read_query(req, IssueQuery)
        filters = IssueFilters(state=None if q.state == "all" else q.state, label=q.label,
                               assignee=q.assignee, author=q.author, q=q.q)
        items, nxt = service.list_issues(self.db, req.context.ctx, space_id, filters, q.limit,
                                         q.cursor)
        resp.media = IssueList(items=[summary_body(v) for v in items], next_cursor=nxt)

    @contract.op(operation_id="createIssue", summary="Open an issue (numbered #N per space)",
                 tags=TAGS, body=CreateIssueRequest, description=WRITE,
                 responses={201: contract.Answer(Issue, "created", headers=("Location",))},
                 problems=(409,))
    def on_post(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        body = contract.read_body(req, CreateIssueRequest)
        v = service.create_issue(self.db, req.context.ctx, space_id, body.title, body.body)
        resp.media = issue_body(v)
        resp.status = falcon.HTTP_201
        resp.location = f"/api/spaces/{v.issue.space_id}/issues/{v.issue.number}"


class IssueItem:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="getIssue", summary="An issue, by its number", tags=TAGS,
                 responses={200: Issue}, problems=(409,),
                 description="Node references the caller cannot read (trashed) say "
                             "`available: false` and carry no name. " + ACCESS)
    def on_get(self, req: falcon.Request, resp: falcon.Response, space_id: str,
               number: str) -> None:
        resp.media = issue_body(service.get_issue(self.db, req.context.ctx, space_id, number))

    @contract.op(operation_id="updateIssue", summary="Edit an issue's title and/or body",
                 tags=TAGS, body=UpdateIssueRequest, responses={200: Issue}, problems=(409,),
                 description="The author, the owner, admins and editors. A new title writes "
                             "a `renamed` event. " + WRITE)
    def on_patch(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                 number: str) -> None:
        body = contract.read_body(req, UpdateIssueRequest)
        resp.media = issue_body(service.update_issue(self.db, req.context.ctx, space_id, number,
                                                     changes(body)))


class IssueClose:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="closeIssue", summary="Close an issue with a reason",
                 tags=TAGS, body=CloseIssueRequest, responses={200: Issue}, problems=(409,),
                 description="The author, the owner, admins and editors; 409 `issue_state` "
                             "when it is closed already. " + WRITE)
    def on_post(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                number: str) -> None:
        body = contract.read_body(req, CloseIssueRequest)
        resp.media = issue_body(service.close_issue(
            self.db, req.context.ctx, space_id, number, str(body.reason), body.comment))


class IssueReopen:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="reopenIssue", summary="Reopen a closed issue", tags=TAGS,
                 responses={200: Issue}, problems=(409,),
                 description="The author, the owner, admins and editors; 409 `issue_state` "
                             "when it is open. " + WRITE)
    def on_post(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                number: str) -> None:
        resp.media = issue_body(service.reopen_issue(self.db, req.context.ctx, space_id, number))


class IssueTimeline:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="issueTimeline", summary="Comments and events of an issue",
                 tags=TAGS, query=PageQuery, responses={200: Timeline}, problems=(409,),
                 description="Oldest first by time; at the same instant comments come before "
                             "events. Events carry the names as they were. " + ACCESS)
    def on_get(self, req: falcon.Request, resp: falcon.Response, space_id: str,
               number: str) -> None:
        q = contract.read_query(req, PageQuery)
        items, nxt = service.issue_timeline(self.db, req.context.ctx, space_id, number, q.limit,
                                       q.cursor)
        resp.media = Timeline(items=[entry(i) for i in items], next_cursor=nxt)


class IssueComments:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="createIssueComment", summary="Comment on an issue", tags=TAGS,
                 body=CommentRequest, responses={201: contract.Answer(Comment, "created")},
                 problems=(409,), description=WRITE)
    def on_post(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                number: str) -> None:
        body = contract.read_body(req, CommentRequest)
        comment, author = service.create_comment(self.db, req.context.ctx, space_id, number,
                                                 body.body)
        resp.media = comment_body(comment, author)
        resp.status = falcon.HTTP_201


class IssueCommentItem:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="updateIssueComment", summary="Edit your comment", tags=TAGS,
                 body=CommentRequest, responses={200: Comment}, problems=(409,),
                 description="Its author only. " + WRITE)
    def on_patch(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                 number: str, comment_id: str) -> None:
        body = contract.read_body(req, CommentRequest)
        comment, author = service.update_comment(self.db, req.context.ctx, space_id, number,
                                                 comment_id, body.body)
        resp.media = comment_body(comment, author)

    @contract.op(operation_id="deleteIssueComment", summary="Delete a comment", tags=TAGS,
                 responses={204: contract.Answer(None, "deleted")}, problems=(409,),
                 description="Its author, the owner or an admin. " + WRITE)
    def on_delete(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                  number: str, comment_id: str) -> None:
        service.delete_comment(self.db, req.context.ctx, space_id, number, comment_id)
        resp.status = falcon.HTTP_204


class Labels:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="listIssueLabels", summary="The issue labels of a space",
                 tags=TAGS, responses={200: LabelList}, problems=(409,),
                 description="At most 100, by name. " + ACCESS)
    def on_get(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        resp.media = LabelList(items=[label_body(lb) for lb in
                                      service.list_labels(self.db, req.context.ctx, space_id)])

    @contract.op(operation_id="createIssueLabel", summary="Define a label", tags=TAGS,
                 body=CreateLabelRequest, responses={201: contract.Answer(Label, "created")},
                 problems=(409,),
                 description="The owner or an admin. Names are unique per space, "
                             "case-insensitive (409 `label_name_taken`); at most 100 per "
                             "space (409 `label_limit`). " + WRITE)
    def on_post(self, req: falcon.Request, resp: falcon.Response, space_id: str) -> None:
        body = contract.read_body(req, CreateLabelRequest)
        label = service.create_label(self.db, req.context.ctx, space_id, body.name,
                                     str(body.color))
        resp.media = label_body(label)
        resp.status = falcon.HTTP_201


class LabelItem:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="updateIssueLabel", summary="Rename or recolour a label",
                 tags=TAGS, body=UpdateLabelRequest, responses={200: Label}, problems=(409,),
                 description="The owner or an admin; 409 `label_name_taken`. " + WRITE)
    def on_patch(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                 label_id: str) -> None:
        body = contract.read_body(req, UpdateLabelRequest)
        found = {k: str(v) for k, v in changes(body).items()}
        resp.media = label_body(service.update_label(self.db, req.context.ctx, space_id,
                                                     label_id, dict(found)))

    @contract.op(operation_id="deleteIssueLabel", summary="Delete a label", tags=TAGS,
                 responses={204: contract.Answer(None, "deleted")}, problems=(409,),
                 description="The owner or an admin. Issues lose the label; their history "
                             "keeps its name and colour. " + WRITE)
    def on_delete(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                  label_id: str) -> None:
        service.delete_label(self.db, req.context.ctx, space_id, label_id)
        resp.status = falcon.HTTP_204


class IssueLabelLink:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="addIssueLabel", summary="Put a label on an issue", tags=TAGS,
                 responses={200: Issue}, problems=(409,),
                 description="The owner, admins and editors. Already there: unchanged. At "
                             "most 20 per issue (409 `issue_label_limit`). " + WRITE)
    def on_put(self, req: falcon.Request, resp: falcon.Response, space_id: str, number: str,
               label_id: str) -> None:
        resp.media = issue_body(service.add_label(self.db, req.context.ctx, space_id, number,
                                                  label_id))

    @contract.op(operation_id="removeIssueLabel", summary="Take a label off an issue",
                 tags=TAGS, responses={200: Issue}, problems=(409,),
                 description="The owner, admins and editors. " + WRITE)
    def on_delete(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                  number: str, label_id: str) -> None:
        resp.media = issue_body(service.remove_label(self.db, req.context.ctx, space_id, number,
                                                     label_id))


class IssueAssignee:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="addIssueAssignee", summary="Assign a user to an issue",
                 tags=TAGS, responses={200: Issue}, problems=(409,),
                 description="The owner, admins and editors. The user must be the owner or "
                             "a member (409 `assignee_not_member`); at most 10 (409 "
                             "`assignee_limit`). Assignees who leave the space stay. " + WRITE)
    def on_put(self, req: falcon.Request, resp: falcon.Response, space_id: str, number: str,
               user_id: str) -> None:
        resp.media = issue_body(service.add_assignee(self.db, req.context.ctx, space_id, number,
                                                     user_id))

    @contract.op(operation_id="removeIssueAssignee", summary="Unassign a user", tags=TAGS,
                 responses={200: Issue}, problems=(409,),
                 description="The owner, admins and editors. " + WRITE)
    def on_delete(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                  number: str, user_id: str) -> None:
        resp.media = issue_body(service.remove_assignee(self.db, req.context.ctx, space_id,
                                                        number, user_id))


class IssueAssignees:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="addIssueAssigneeByUsername",
                 summary="Assign a user, named by username, to an issue", tags=TAGS,
                 body=AssignByNameRequest, responses={200: Issue}, problems=(409, 429),
                 description="`PUT …/assignees/{user_id}` naming the user by `username` "
                             "(exact, any case; 404 `user_not_found`; 429 `rate_limited`, "
                             "counted with `GET /api/users?username=`). " + WRITE)
    def on_put(self, req: falcon.Request, resp: falcon.Response, space_id: str,
               number: str) -> None:
        body = contract.read_body(req, AssignByNameRequest)
        people.take_lookup(self.db, req.context.ctx)
        resp.media = issue_body(service.add_assignee(self.db, req.context.ctx, space_id, number,
                                                     None, body.username))


class IssueNodeRef:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="addIssueNodeRef", summary="Reference a node from an issue",
                 tags=TAGS, responses={200: Issue}, problems=(409,),
                 description="The owner, admins and editors. The node must be in the same "
                             "space (409 `node_in_other_space`) and not in the trash (409 "
                             "`node_trashed`); at most 20 (409 `node_ref_limit`). A purged "
                             "node's references go, with a `node_unreferenced` event. " + WRITE)
    def on_put(self, req: falcon.Request, resp: falcon.Response, space_id: str, number: str,
               node_id: str) -> None:
        resp.media = issue_body(service.add_node_ref(self.db, req.context.ctx, space_id, number,
                                                     node_id))

    @contract.op(operation_id="removeIssueNodeRef", summary="Drop a node reference",
                 tags=TAGS, responses={200: Issue}, problems=(409,),
                 description="The owner, admins and editors. " + WRITE)
    def on_delete(self, req: falcon.Request, resp: falcon.Response, space_id: str,
                  number: str, node_id: str) -> None:
        resp.media = issue_body(service.remove_node_ref(self.db, req.context.ctx, space_id,
                                                        number, node_id))


def mount(app: contract.App, db: Database) -> None:
    """The issue routes (``api.app``)."""
    base = "/api/spaces/{space_id}/issues"
    app.add_route(base, Issues(db))
    app.add_route(base + "/labels", Labels(db))
    app.add_route(base + "/labels/{label_id}", LabelItem(db))
    app.add_route(base + "/{number}", IssueItem(db))
    app.add_route(base + "/{number}/close", IssueClose(db))
    app.add_route(base + "/{number}/reopen", IssueReopen(db))
    app.add_route(base + "/{number}/timeline", IssueTimeline(db))
    app.add_route(base + "/{number}/comments", IssueComments(db))
    app.add_route(base + "/{number}/comments/{comment_id}", IssueCommentItem(db))
    app.add_route(base + "/{number}/labels/{label_id}", IssueLabelLink(db))
    app.add_route(base + "/{number}/assignees", IssueAssignees(db))
    app.add_route(base + "/{number}/assignees/{user_id}", IssueAssignee(db))
    app.add_route(base + "/{number}/node-refs/{node_id}", IssueNodeRef(db))
