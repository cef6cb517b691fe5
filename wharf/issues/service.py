"""Issues, comments, labels, assignees and node references: one transaction per write.

Every write (the caller's ``db.write()`` transaction) checks the caller's standing
(:mod:`wharf.issues.access`), changes the rows, writes the timeline event with a snapshot
of the names involved, bumps the issue's ``updated_at`` and writes the audit row; any
failure rolls all of it back.

Numbering: ``#N`` comes from the space's ``issue_counters`` row, incremented with
``UPDATE ... RETURNING`` inside the creating transaction. On PostgreSQL the row lock makes
concurrent creators of one space take turns; SQLite's write transactions are serialised by
``BEGIN IMMEDIATE``. A creation that fails rolls its increment back, so numbers have no
gaps; issues are never deleted, so numbers are never reused.

Limits (each refused with its own problem code): 100 labels per space (``label_limit``),
20 labels per issue (``issue_label_limit``), 10 assignees (``assignee_limit``), 20 node
references (``node_ref_limit``). Relationship writes lock the issue row first, so two
concurrent additions cannot both pass the count.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, case, delete, exists, func, insert, literal, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.enums import IssueEventKind, IssueState, IssueStateReason, LabelColor, values
from storage.models import (
    Issue,
    IssueAssignee,
    IssueComment,
    IssueCounter,
    IssueEvent,
    IssueLabel,
    IssueLabelLink,
    IssueNodeRef,
    Node,
    Space,
    SpaceMember,
    User,
)
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Conflict, Forbidden, NotFound, ValidationFailed
from wharf.infra.ids import is_id, new_id
from wharf.infra.pagination import decode_cursor, page
from wharf.infra.validation import clean_label, one_of
from wharf.issues.access import IssueAccess, resolve
from wharf.spaces.access import MAX_TREE_DEPTH, node_access, space_role

TITLE_MAX = 256
BODY_MAX = 65_536
LABEL_NAME_MAX = 50
SEARCH_MAX = 256
LABELS_PER_SPACE = 100
LABELS_PER_ISSUE = 20
ASSIGNEES_PER_ISSUE = 10
NODE_REFS_PER_ISSUE = 20
_NUMBER_DIGITS = 9  # a path's #N: at most this many ASCII digits (else: no such issue)

STATES = values(IssueState)
REASONS = values(IssueStateReason)
COLORS = values(LabelColor)


# --- views ------------------------------------------------------------------------------
@dataclass(frozen=True)
class NodeRefView:
    node_id: str
    available: bool
    name: str | None  # None when the node is trashed or the caller cannot read it


@dataclass(frozen=True)
class IssueView:
    issue: Issue
    author: User
    closed_by: User | None
    labels: list[IssueLabel]
    assignees: list[User]
    node_refs: list[NodeRefView] | None  # None in listings
    comments: int


def _users(s: Session, ids: set[str]) -> dict[str, User]:
    if not ids:
        return {}
    return {u.id: u for u in s.scalars(select(User).where(User.id.in_(sorted(ids))))}


def _views(s: Session, principal: Principal, issues: list[Issue], *,
           with_refs: bool) -> list[IssueView]:
    ids = [i.id for i in issues]
    if not ids:
        return []
    labels: dict[str, list[IssueLabel]] = defaultdict(list)
    for issue_id, label in s.execute(
            select(IssueLabelLink.issue_id, IssueLabel)
            .join(IssueLabel, IssueLabel.id == IssueLabelLink.label_id)
            .where(IssueLabelLink.issue_id.in_(ids)).order_by(IssueLabel.name_key)):
        labels[issue_id].append(label)
    assignee_ids: dict[str, list[str]] = defaultdict(list)
    for issue_id, user_id in s.execute(
            select(IssueAssignee.issue_id, IssueAssignee.user_id)
            .where(IssueAssignee.issue_id.in_(ids))
            .order_by(IssueAssignee.created_at, IssueAssignee.user_id)):
        assignee_ids[issue_id].append(user_id)
    users = _users(s, {i.author_user_id for i in issues}
                   | {i.closed_by_user_id for i in issues if i.closed_by_user_id}
                   | {u for us in assignee_ids.values() for u in us})
    refs: dict[str, list[NodeRefView]] = defaultdict(list)
    if with_refs:
        refs = _node_refs(s, principal, issues)
    return [IssueView(issue=i, author=users[i.author_user_id],
                      closed_by=users.get(i.closed_by_user_id or ""),
                      labels=labels[i.id],
                      assignees=[users[u] for u in assignee_ids[i.id] if u in users],
                      node_refs=refs[i.id] if with_refs else None,
                      comments=i.comment_count)
            for i in issues]


def _node_refs(s: Session, principal: Principal,
               issues: list[Issue]) -> dict[str, list[NodeRefView]]:
    """The node references of ``issues``, resolved as the caller in two statements
    whatever their number: the references with their nodes, then every node's ancestor
    chain at once. An issue's caller reads its whole space (there is no role below the
    space's), so a node of the issue's space is available unless it or an ancestor is in
    the trash, or its chain is broken or too deep (fail closed). A node of another space
    (none is referenced so) is resolved one by one."""
    refs: dict[str, list[NodeRefView]] = defaultdict(list)
    rows = list(s.execute(
        select(IssueNodeRef.issue_id, Node)
        .join(Node, Node.id == IssueNodeRef.node_id)
        .where(IssueNodeRef.issue_id.in_([i.id for i in issues]))
        .order_by(IssueNodeRef.created_at, IssueNodeRef.node_id)))
    if not rows:
        return refs
    space_of_issue = {i.id: i.space_id for i in issues}
    roles = {sid: space_role(s, principal, space) for sid in set(space_of_issue.values())
             if (space := s.get(Space, sid)) is not None}
    clean = _untrashed(s, sorted({node.id for _, node in rows}))
    for issue_id, node in rows:
        # A trashed (or otherwise unreadable) node says only that it is not available,
        # never its name.
        if node.space_id == space_of_issue[issue_id]:
            readable = roles.get(node.space_id) is not None and node.id in clean
        else:
            readable = node_access(s, principal, node).can_read
        refs[issue_id].append(NodeRefView(node.id, readable, node.name if readable else None))
    return refs


def _untrashed(s: Session, node_ids: list[str]) -> set[str]:
    """Those of ``node_ids`` whose ancestor chain (themselves included) reaches a root
    within ``MAX_TREE_DEPTH`` levels with no node in the trash: one recursive query."""
    n = Node.__table__
    chain = (select(n.c.id.label("start"), n.c.parent_id, n.c.trash_batch_id,
                    literal(1).label("depth"))
             .where(n.c.id.in_(node_ids)).cte("ref_chain", recursive=True))
    chain = chain.union_all(
        select(chain.c.start, n.c.parent_id, n.c.trash_batch_id, chain.c.depth + 1)
        .join(chain, n.c.id == chain.c.parent_id)
        .where(chain.c.depth < MAX_TREE_DEPTH, chain.c.trash_batch_id.is_(None)))
    q = (select(chain.c.start).group_by(chain.c.start)
         .having(func.sum(case((chain.c.trash_batch_id.is_not(None), 1), else_=0)) == 0,
                 func.sum(case((chain.c.parent_id.is_(None), 1), else_=0)) > 0))
    return set(s.scalars(q))


def view(s: Session, principal: Principal, issue: Issue) -> IssueView:
    return _views(s, principal, [issue], with_refs=True)[0]


# --- input ------------------------------------------------------------------------------
def clean_title(value: object) -> str:
    return clean_label(value, "title", max_len=TITLE_MAX)


def clean_body(value: object, field: str = "body", *, allow_empty: bool = True) -> str:
    """Markdown text: at most ``BODY_MAX`` characters, no NUL (which PostgreSQL refuses)."""
    if not isinstance(value, str):
        raise ValidationFailed(f"{field} must be a string", details={"field": field})
    if len(value) > BODY_MAX:
        raise ValidationFailed(f"{field} must be at most {BODY_MAX} characters",
                               details={"field": field})
    if "\x00" in value:
        raise ValidationFailed(f"{field} must not contain NUL characters",
                               details={"field": field})
    if not allow_empty and not value.strip():
        raise ValidationFailed(f"{field} must not be empty", details={"field": field})
    return value


def parse_number(raw: object) -> int | None:
    """A path's ``#N`` (plain ASCII digits, bounded) or None (answered as no such issue)."""
    if not isinstance(raw, str) or not (raw.isascii() and raw.isdigit()) \
            or len(raw) > _NUMBER_DIGITS:
        return None
    number = int(raw)
    return number if number >= 1 else None


def issue_in(s: Session, acc: IssueAccess, number_raw: object, *, lock: bool = False) -> Issue:
    number = parse_number(number_raw)
    issue = None
    if number is not None:
        q = select(Issue).where(Issue.space_id == acc.space.id, Issue.number == number)
        if lock:
            q = q.with_for_update(of=Issue)
        issue = s.scalar(q)
    if issue is None:
        raise NotFound("No such issue.")
    return issue


def _user_snapshot(user: User | None) -> dict[str, Any] | None:
    return None if user is None else {"id": user.id, "username": user.username}


def _label_snapshot(label: IssueLabel) -> dict[str, Any]:
    return {"id": label.id, "name": label.name, "color": label.color}


def _event(s: Session, issue: Issue, kind: IssueEventKind, actor_user_id: str | None,
           payload: dict[str, Any], now: datetime) -> None:
    s.add(IssueEvent(id=new_id(), issue_id=issue.id, kind=kind.value,
                     actor_user_id=actor_user_id, payload=payload, created_at=now))
    issue.updated_at = now


def _audit(s: Session, ctx: RequestContext, action: str, issue: Issue,
           details: dict[str, Any] | None = None) -> None:
    audit.record(s, ctx, action, "issue", issue.id, space_id=issue.space_id,
                 details={"number": issue.number, **(details or {})})


def _require_room(s: Session, column: Any, value: str, limit: int, message: str, *,
                  code: str) -> None:
    """409 ``code`` when ``limit`` rows already have ``column == value`` (the rows counted
    are under a lock the caller holds: the space's or the issue's)."""
    count = s.scalar(select(func.count()).select_from(column.class_)
                     .where(column == value)) or 0
    if count >= limit:
        raise Conflict(message, code=code)


# --- numbering --------------------------------------------------------------------------
_COUNTERS = IssueCounter.__table__


def _next_number(s: Session, space_id: str) -> int:
    """The next ``#N`` of the space, taken inside the caller's transaction."""
    dialect = s.get_bind().dialect.name
    ins = (postgresql.insert(_COUNTERS) if dialect == "postgresql"
           else sqlite.insert(_COUNTERS))
    s.execute(ins.values(space_id=space_id, last_number=0)
              .on_conflict_do_nothing(index_elements=["space_id"]))
    number = s.execute(update(_COUNTERS).where(_COUNTERS.c.space_id == space_id)
                       .values(last_number=_COUNTERS.c.last_number + 1)
                       .returning(_COUNTERS.c.last_number)).scalar_one()
    return int(number)


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


def _storable(text: str) -> bool:
    """Text the databases take as a parameter: no NUL, no lone surrogate."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _like_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def list_issues(s: Session, ctx: RequestContext, space_id: str, filters: IssueFilters,
                limit: int, cursor: str | None) -> tuple[list[IssueView], str | None]:
    """Newest first (``#N`` descending), keyset-paginated by number."""
    acc = resolve(s, ctx.principal, space_id)
    after = decode_cursor("issues", cursor, 1)
    after_number = None
    if after is not None:
        after_number = parse_number(after[0])
        if after_number is None:
            from wharf.infra.errors import InvalidCursor
            raise InvalidCursor("The cursor is not valid for this listing.")
    if filters.q and (len(filters.q) > SEARCH_MAX or not _storable(filters.q)):
        raise ValidationFailed(f"q must be at most {SEARCH_MAX} characters of text",
                               details={"field": "q"})
    if (filters.label is not None and not _storable(filters.label)) or any(
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
        q = q.where(Issue.title_key.like(f"%{_like_escape(filters.q.lower())}%",
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


# --- label definitions ------------------------------------------------------------------
def list_labels(s: Session, ctx: RequestContext, space_id: str) -> list[IssueLabel]:
    acc = resolve(s, ctx.principal, space_id)
    return list(s.scalars(select(IssueLabel).where(IssueLabel.space_id == acc.space.id)
                          .order_by(IssueLabel.name_key)))


def _label_name(s: Session, space_id: str, value: object,
                exclude: str | None = None) -> tuple[str, str]:
    name = clean_label(value, "name", max_len=LABEL_NAME_MAX)
    key = name.lower()
    q = select(IssueLabel.id).where(IssueLabel.space_id == space_id, IssueLabel.name_key == key)
    if exclude is not None:
        q = q.where(IssueLabel.id != exclude)
    if s.scalar(q) is not None:
        raise Conflict("A label with that name exists in this space.", code="label_name_taken")
    return name, key


def create_label(s: Session, ctx: RequestContext, space_id: str, name: object,
                 color: object) -> IssueLabel:
    # The space row locked: the count and the name check hold until commit.
    acc = resolve(s, ctx.principal, space_id, lock=True).require_label_admin()
    clean, key = _label_name(s, acc.space.id, name)
    colour = one_of(color, "color", COLORS)
    _require_room(s, IssueLabel.space_id, acc.space.id, LABELS_PER_SPACE,
                  f"A space has at most {LABELS_PER_SPACE} labels.", code="label_limit")
    now = utcnow()
    label = IssueLabel(id=new_id(), space_id=acc.space.id, name=clean, name_key=key,
                       color=colour, created_at=now, updated_at=now)
    s.add(label)
    s.flush()
    audit.record(s, ctx, "issue.label.create", "issue_label", label.id,
                 space_id=acc.space.id, details={"name": clean, "color": colour})
    return label


def _label(s: Session, acc: IssueAccess, label_id: str, *, share: bool = False) -> IssueLabel:
    """The space's label ``label_id`` (404 otherwise). ``share`` locks its row FOR SHARE on
    PostgreSQL (SQLite serialises writers), so a concurrent ``delete_label`` waits for the
    caller's commit, or has committed and the label is not found."""
    label = s.get(IssueLabel, label_id, with_for_update={"read": True} if share else None,
                  populate_existing=share) if is_id(label_id) else None
    if label is None or label.space_id != acc.space.id:
        raise NotFound("No such label.")
    return label


def update_label(s: Session, ctx: RequestContext, space_id: str, label_id: str,
                 changes: dict[str, object]) -> IssueLabel:
    acc = resolve(s, ctx.principal, space_id, lock=True).require_label_admin()
    label = _label(s, acc, label_id)
    if "name" in changes:
        label.name, label.name_key = _label_name(s, acc.space.id, changes["name"],
                                                 exclude=label.id)
    if "color" in changes:
        label.color = one_of(changes["color"], "color", COLORS)
    label.updated_at = utcnow()
    s.flush()
    audit.record(s, ctx, "issue.label.update", "issue_label", label.id,
                 space_id=acc.space.id, details={"name": label.name, "color": label.color})
    return label


def delete_label(s: Session, ctx: RequestContext, space_id: str, label_id: str) -> None:
    """Delete a label and its links (the ``labeled`` events keep its name and colour)."""
    acc = resolve(s, ctx.principal, space_id, lock=True).require_label_admin()
    label = _label(s, acc, label_id)
    s.execute(delete(IssueLabelLink).where(IssueLabelLink.label_id == label.id))
    s.delete(label)
    s.flush()
    audit.record(s, ctx, "issue.label.delete", "issue_label", label_id,
                 space_id=acc.space.id, details={"name": label.name})


# --- labels on an issue -----------------------------------------------------------------
def add_label(s: Session, ctx: RequestContext, space_id: str, number: str,
              label_id: str) -> IssueView:
    acc = resolve(s, ctx.principal, space_id).require_triage()
    issue = issue_in(s, acc, number, lock=True)
    label = _label(s, acc, label_id, share=True)
    if s.get(IssueLabelLink, (issue.id, label.id)) is None:
        _require_room(s, IssueLabelLink.issue_id, issue.id, LABELS_PER_ISSUE,
                      f"An issue has at most {LABELS_PER_ISSUE} labels.",
                      code="issue_label_limit")
        now = utcnow()
        s.add(IssueLabelLink(issue_id=issue.id, label_id=label.id, created_at=now))
        _event(s, issue, IssueEventKind.LABELED, acc.user_id,
               {"label": _label_snapshot(label)}, now)
        try:
            s.flush()
        except IntegrityError as exc:  # a safety net: the label went between read and insert
            raise NotFound("No such label.") from exc
        _audit(s, ctx, "issue.label.add", issue, {"label_id": label.id})
    return view(s, ctx.principal, issue)


def remove_label(s: Session, ctx: RequestContext, space_id: str, number: str,
                 label_id: str) -> IssueView:
    acc = resolve(s, ctx.principal, space_id).require_triage()
    issue = issue_in(s, acc, number, lock=True)
    label = _label(s, acc, label_id, share=True)
    link = s.get(IssueLabelLink, (issue.id, label.id))
    if link is None:
        raise NotFound("The issue does not have that label.")
    s.delete(link)
    _event(s, issue, IssueEventKind.UNLABELED, acc.user_id,
           {"label": _label_snapshot(label)}, utcnow())
    s.flush()
    _audit(s, ctx, "issue.label.remove", issue, {"label_id": label.id})
    return view(s, ctx.principal, issue)


# --- assignees --------------------------------------------------------------------------
def add_assignee(s: Session, ctx: RequestContext, space_id: str, number: str,
                 user_id: str) -> IssueView:
    acc = resolve(s, ctx.principal, space_id).require_triage()
    issue = issue_in(s, acc, number, lock=True)
    user = s.get(User, user_id) if is_id(user_id) else None
    if user is None:
        raise NotFound("No such user.")
    if s.get(IssueAssignee, (issue.id, user.id)) is None:
        is_member = user.id == acc.space.owner_id or s.get(
            SpaceMember, (acc.space.id, user.id)) is not None
        if not is_member:
            raise Conflict("Only the space owner and its members can be assigned.",
                           code="assignee_not_member")
        _require_room(s, IssueAssignee.issue_id, issue.id, ASSIGNEES_PER_ISSUE,
                      f"An issue has at most {ASSIGNEES_PER_ISSUE} assignees.",
                      code="assignee_limit")
        now = utcnow()
        s.add(IssueAssignee(issue_id=issue.id, user_id=user.id, created_at=now))
        _event(s, issue, IssueEventKind.ASSIGNED, acc.user_id,
               {"user": _user_snapshot(user)}, now)
        s.flush()
        _audit(s, ctx, "issue.assignee.add", issue, {"user_id": user.id})
    return view(s, ctx.principal, issue)


def remove_assignee(s: Session, ctx: RequestContext, space_id: str, number: str,
                    user_id: str) -> IssueView:
    acc = resolve(s, ctx.principal, space_id).require_triage()
    issue = issue_in(s, acc, number, lock=True)
    row = s.get(IssueAssignee, (issue.id, user_id)) if is_id(user_id) else None
    if row is None:
        raise NotFound("That user is not assigned to the issue.")
    user = s.get(User, user_id)
    s.delete(row)
    _event(s, issue, IssueEventKind.UNASSIGNED, acc.user_id,
           {"user": _user_snapshot(user)}, utcnow())
    s.flush()
    _audit(s, ctx, "issue.assignee.remove", issue, {"user_id": user_id})
    return view(s, ctx.principal, issue)


# --- node references --------------------------------------------------------------------
def add_node_ref(s: Session, ctx: RequestContext, space_id: str, number: str,
                 node_id: str) -> IssueView:
    """Reference a node of the same space that is not in the trash (resolved as the
    caller: a node they cannot discover is 404). A node already referenced answers the
    issue unchanged, even if it has been trashed since. The reference row keeps the node's
    name as it was: the ``node_unreferenced`` events name it so."""
    acc = resolve(s, ctx.principal, space_id).require_triage()
    issue = issue_in(s, acc, number, lock=True)
    node = s.get(Node, node_id) if is_id(node_id) else None
    if node is None or not node_access(s, ctx.principal, node, include_trashed=True).can_read:
        raise NotFound("No such node.")
    if s.get(IssueNodeRef, (issue.id, node.id)) is not None:
        return view(s, ctx.principal, issue)  # already there: nothing changes
    if node.space_id != acc.space.id:
        raise Conflict("An issue references nodes of its own space only.",
                       code="node_in_other_space")
    if not node_access(s, ctx.principal, node).can_read:
        raise Conflict("The node is in the trash.", code="node_trashed")
    _require_room(s, IssueNodeRef.issue_id, issue.id, NODE_REFS_PER_ISSUE,
                  f"An issue references at most {NODE_REFS_PER_ISSUE} nodes.",
                  code="node_ref_limit")
    now = utcnow()
    s.add(IssueNodeRef(issue_id=issue.id, node_id=node.id, name=node.name, created_at=now))
    _event(s, issue, IssueEventKind.NODE_REFERENCED, acc.user_id,
           {"node": {"id": node.id, "name": node.name}}, now)
    s.flush()
    _audit(s, ctx, "issue.node_ref.add", issue, {"node_id": node.id})
    return view(s, ctx.principal, issue)


def remove_node_ref(s: Session, ctx: RequestContext, space_id: str, number: str,
                    node_id: str) -> IssueView:
    acc = resolve(s, ctx.principal, space_id).require_triage()
    issue = issue_in(s, acc, number, lock=True)
    ref = s.get(IssueNodeRef, (issue.id, node_id)) if is_id(node_id) else None
    if ref is None:
        raise NotFound("The issue does not reference that node.")
    # The event names the node as the reference did when it was made (its
    # ``node_referenced`` event shows that name already), trashed or renamed since or not.
    s.delete(ref)
    _event(s, issue, IssueEventKind.NODE_UNREFERENCED, acc.user_id,
           {"node": {"id": node_id, "name": ref.name}}, utcnow())
    s.flush()
    _audit(s, ctx, "issue.node_ref.remove", issue, {"node_id": node_id})
    return view(s, ctx.principal, issue)


def unreference_purged(s: Session, node_ids: list[str]) -> int:
    """Called by the purge (``wharf.trash.service``) in its transaction, before it deletes the
    nodes ``node_ids``: every reference to them is deleted and its issue gets a
    ``node_unreferenced`` event naming the node as the reference did when it was made
    (actor: the system), as :func:`remove_node_ref` does. Returns the number of references
    removed."""
    if not node_ids:
        return 0
    rows = list(s.execute(
        select(IssueNodeRef.issue_id, IssueNodeRef.node_id, IssueNodeRef.name)
        .where(IssueNodeRef.node_id.in_(node_ids))
        .order_by(IssueNodeRef.issue_id, IssueNodeRef.node_id)))
    if not rows:
        return 0
    now = utcnow()
    s.execute(insert(IssueEvent), [
        {"id": new_id(), "issue_id": issue_id, "kind": IssueEventKind.NODE_UNREFERENCED.value,
         "actor_user_id": None, "payload": {"node": {"id": nid, "name": name}, "purged": True},
         "created_at": now} for issue_id, nid, name in rows])
    s.execute(update(Issue).where(Issue.id.in_(sorted({r[0] for r in rows})))
              .values(updated_at=now))
    s.execute(delete(IssueNodeRef).where(and_(IssueNodeRef.node_id.in_(node_ids))))
    return len(rows)
