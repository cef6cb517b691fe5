"""The issues capability's shared pieces: limits, the views a read answers
(:class:`IssueView`: an issue with its people, labels and node references, in a few
statements whatever their number), input checks, finding an issue by its ``#N``, the
timeline event and audit row every write adds, and the ``#N`` counter."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import case, func, literal, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from storage.enums import IssueEventKind, IssueState, IssueStateReason, LabelColor, values
from storage.models import (
    Issue,
    IssueAssignee,
    IssueCounter,
    IssueEvent,
    IssueLabel,
    IssueLabelLink,
    IssueNodeRef,
    Node,
    Space,
    User,
)
from wharf.infra import audit
from wharf.infra.context import Principal, RequestContext
from wharf.infra.errors import Conflict, NotFound, ValidationFailed
from wharf.infra.ids import new_id
from wharf.infra.validation import clean_label
from wharf.issues.access import IssueAccess
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


