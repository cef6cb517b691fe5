"""Labels (defined per space, put on issues), assignees and node references, inside the
caller's transaction (``wharf.issues.service`` opens it); and what a purge does to the
references of the nodes it deletes (:func:`unreference_purged`)."""
from __future__ import annotations

from sqlalchemy import and_, delete, insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from storage.enums import IssueEventKind
from storage.models import (
    Issue,
    IssueAssignee,
    IssueEvent,
    IssueLabel,
    IssueLabelLink,
    IssueNodeRef,
    Node,
    SpaceMember,
    User,
)
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, NotFound
from wharf.infra.ids import is_id, new_id
from wharf.infra.validation import clean_label, one_of
from wharf.issues.access import IssueAccess, resolve
from wharf.issues.records import (
    ASSIGNEES_PER_ISSUE,
    COLORS,
    LABEL_NAME_MAX,
    LABELS_PER_ISSUE,
    LABELS_PER_SPACE,
    NODE_REFS_PER_ISSUE,
    IssueView,
    _audit,
    _event,
    _label_snapshot,
    _require_room,
    _user_snapshot,
    issue_in,
    view,
)
from wharf.spaces.access import node_access
from wharf.spaces.service import named_user


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
                 user_id: str | None, username: str | None = None) -> IssueView:
    """Assign ``user_id``, or the user named ``username`` (404 ``user_not_found``)."""
    acc = resolve(s, ctx.principal, space_id).require_triage()
    issue = issue_in(s, acc, number, lock=True)
    user = named_user(s, user_id, username)
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
