"""Issues and their comments, inside the caller's transaction (``wharf.issues.service``
opens it): open, read, list, edit, close, reopen; comment, edit and delete a comment."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import exists, select
from sqlalchemy.orm import Session

from storage.enums import IssueEventKind, IssueState
from storage.models import (
    Issue,
    IssueAssignee,
    IssueComment,
    IssueLabel,
    IssueLabelLink,
    User,
)
from storage.patterns import escape_like
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, Forbidden, InvalidCursor, NotFound, ValidationFailed
from wharf.infra.ids import is_id, new_id
from wharf.infra.pagination import decode_cursor, page
from wharf.infra.validation import one_of, storable
from wharf.issues.access import resolve
from wharf.issues.records import (
    REASONS,
    SEARCH_MAX,
    STATES,
    IssueView,
    _audit,
    _event,
    _next_number,
    _users,
    _views,
    clean_body,
    clean_title,
    issue_in,
    parse_number,
    view,
)


# --- issues -----------------------------------------------------------------------------
def create_issue(s: Session, ctx: RequestContext, space_id: str, title: object,
                 body: object) -> IssueView:
    acc = resolve(s, ctx.principal, space_id).require_member()
    clean = clean_title(title)
    text = clean_body(body)
    now = utcnow()
    issue = Issue(id=new_id(), space_id=acc.space.id, number=_next_number(s, acc.space.id),
                  title=clean, title_key=clean.lower(), body=text, state=IssueState.OPEN.value,
                  state_reason=None, author_user_id=acc.user_id, created_at=now,
                  updated_at=now, comment_count=0)
    s.add(issue)
    s.flush()
    _audit(s, ctx, "issue.create", issue)
    return view(s, ctx.principal, issue)


def get_issue(s: Session, ctx: RequestContext, space_id: str, number: str) -> IssueView:
    acc = resolve(s, ctx.principal, space_id)
    return view(s, ctx.principal, issue_in(s, acc, number))


@dataclass(frozen=True)
class IssueFilters:
    state: str | None = "open"  # open | closed | None (all)
    label: str | None = None  # a label name (case-insensitive)
    assignee: str | None = None  # a user id
    author: str | None = None  # a user id
    q: str | None = None  # a case-insensitive substring of the title


def list_issues(s: Session, ctx: RequestContext, space_id: str, filters: IssueFilters,
                limit: int, cursor: str | None) -> tuple[list[IssueView], str | None]:
    """Newest first (``#N`` descending), keyset-paginated by number."""
    acc = resolve(s, ctx.principal, space_id)
    after = decode_cursor("issues", cursor, 1)
    after_number = None
    if after is not None:
        after_number = parse_number(after[0])
        if after_number is None:
            raise InvalidCursor("The cursor is not valid for this listing.")
    if filters.q and (len(filters.q) > SEARCH_MAX or not storable(filters.q)):
        raise ValidationFailed(f"q must be at most {SEARCH_MAX} characters of text",
                               details={"field": "q"})
    if (filters.label is not None and not storable(filters.label)) or any(
            v is not None and not is_id(v) for v in (filters.assignee, filters.author)):
        return [], None  # no label has such a name, no user such an id
    q = select(Issue).where(Issue.space_id == acc.space.id)
    if filters.state is not None:
        q = q.where(Issue.state == one_of(filters.state, "state", STATES))
    if filters.label is not None:
        q = q.where(exists().where(
            IssueLabelLink.issue_id == Issue.id, IssueLabel.id == IssueLabelLink.label_id,
            IssueLabel.space_id == acc.space.id,
            IssueLabel.name_key == filters.label.strip().lower()))
    if filters.assignee is not None:
        q = q.where(exists().where(IssueAssignee.issue_id == Issue.id,
                                   IssueAssignee.user_id == filters.assignee))
    if filters.author is not None:
        q = q.where(Issue.author_user_id == filters.author)
    if filters.q:
        q = q.where(Issue.title_key.like(f"%{escape_like(filters.q.lower())}%",
                                         escape="\\"))
    if after_number is not None:
        q = q.where(Issue.number < after_number)
    rows = list(s.scalars(q.order_by(Issue.number.desc()).limit(limit + 1)))
    rows, nxt = page(rows, limit, "issues", lambda i: [str(i.number)])
    return _views(s, ctx.principal, rows, with_refs=False), nxt


def update_issue(s: Session, ctx: RequestContext, space_id: str, number: str,
                 changes: dict[str, object]) -> IssueView:
    acc = resolve(s, ctx.principal, space_id)
    issue = issue_in(s, acc, number, lock=True)
    acc.require_author_or_triage(issue.author_user_id)
    now = utcnow()
    done: dict[str, Any] = {}
    if "title" in changes:
        title = clean_title(changes["title"])
        if title != issue.title:
            _event(s, issue, IssueEventKind.RENAMED, acc.user_id,
                   {"from": issue.title, "to": title}, now)
            issue.title, issue.title_key = title, title.lower()
            done["title"] = title
    if "body" in changes:
        body = clean_body(changes["body"])
        if body != issue.body:
            issue.body = body
            done["body"] = True
    if done:
        issue.updated_at = now
        s.flush()
        _audit(s, ctx, "issue.update", issue, {"changed": sorted(done)})
    return view(s, ctx.principal, issue)


def _comment(s: Session, issue: Issue, user_id: str, body: str, now: datetime) -> IssueComment:
    comment = IssueComment(id=new_id(), issue_id=issue.id, author_user_id=user_id, body=body,
                           created_at=now, updated_at=now)
    s.add(comment)
    issue.comment_count = Issue.comment_count + 1  # the issue row is locked
    issue.updated_at = now
    return comment


def close_issue(s: Session, ctx: RequestContext, space_id: str, number: str, reason: object,
                comment: object = None) -> IssueView:
    """Close with ``reason``; ``comment`` (optional) is written at the same instant, so the
    timeline shows it before the ``closed`` event."""
    acc = resolve(s, ctx.principal, space_id)
    issue = issue_in(s, acc, number, lock=True)
    acc.require_author_or_triage(issue.author_user_id)
    why = one_of(reason, "reason", REASONS)
    text = None if comment is None else clean_body(comment, "comment", allow_empty=False)
    if issue.state == IssueState.CLOSED.value:
        raise Conflict("The issue is already closed.", code="issue_state")
    now = utcnow()
    if text is not None:
        _comment(s, issue, acc.user_id, text, now)
    issue.state, issue.state_reason = IssueState.CLOSED.value, why
    issue.closed_by_user_id, issue.closed_at = acc.user_id, now
    _event(s, issue, IssueEventKind.CLOSED, acc.user_id, {"reason": why}, now)
    s.flush()
    _audit(s, ctx, "issue.close", issue, {"reason": why})
    return view(s, ctx.principal, issue)


def reopen_issue(s: Session, ctx: RequestContext, space_id: str, number: str) -> IssueView:
    acc = resolve(s, ctx.principal, space_id)
    issue = issue_in(s, acc, number, lock=True)
    acc.require_author_or_triage(issue.author_user_id)
    if issue.state == IssueState.OPEN.value:
        raise Conflict("The issue is already open.", code="issue_state")
    now = utcnow()
    issue.state, issue.state_reason = IssueState.OPEN.value, None
    issue.closed_by_user_id, issue.closed_at = None, None
    _event(s, issue, IssueEventKind.REOPENED, acc.user_id, {}, now)
    s.flush()
    _audit(s, ctx, "issue.reopen", issue)
    return view(s, ctx.principal, issue)


# --- comments ---------------------------------------------------------------------------
def create_comment(s: Session, ctx: RequestContext, space_id: str, number: str,
                   body: object) -> tuple[IssueComment, User]:
    acc = resolve(s, ctx.principal, space_id).require_member()
    issue = issue_in(s, acc, number, lock=True)
    comment = _comment(s, issue, acc.user_id, clean_body(body, allow_empty=False), utcnow())
    s.flush()
    audit.record(s, ctx, "issue.comment.create", "issue_comment", comment.id,
                 space_id=issue.space_id, details={"number": issue.number})
    return comment, _users(s, {acc.user_id})[acc.user_id]


def _comment_of(s: Session, issue: Issue, comment_id: str) -> IssueComment:
    comment = s.get(IssueComment, comment_id) if is_id(comment_id) else None
    if comment is None or comment.issue_id != issue.id:
        raise NotFound("No such comment.")
    return comment


def update_comment(s: Session, ctx: RequestContext, space_id: str, number: str,
                   comment_id: str, body: object) -> tuple[IssueComment, User]:
    acc = resolve(s, ctx.principal, space_id).require_member()
    issue = issue_in(s, acc, number, lock=True)
    comment = _comment_of(s, issue, comment_id)
    if comment.author_user_id != acc.user_id:
        raise Forbidden("Only its author can edit a comment.")
    comment.body = clean_body(body, allow_empty=False)
    comment.updated_at = issue.updated_at = utcnow()
    s.flush()
    audit.record(s, ctx, "issue.comment.update", "issue_comment", comment.id,
                 space_id=issue.space_id, details={"number": issue.number})
    return comment, _users(s, {acc.user_id})[acc.user_id]


def delete_comment(s: Session, ctx: RequestContext, space_id: str, number: str,
                   comment_id: str) -> None:
    acc = resolve(s, ctx.principal, space_id).require_member()
    issue = issue_in(s, acc, number, lock=True)
    comment = _comment_of(s, issue, comment_id)
    if comment.author_user_id != acc.user_id and not acc.admin:
        raise Forbidden("Only its author, the owner and admins can delete a comment.")
    s.delete(comment)
    issue.comment_count = Issue.comment_count - 1  # the issue row is locked
    issue.updated_at = utcnow()
    s.flush()
    audit.record(s, ctx, "issue.comment.delete", "issue_comment", comment_id,
                 space_id=issue.space_id, details={"number": issue.number})


