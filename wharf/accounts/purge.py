"""An account's deletion, as the worker runs it: :class:`Purge` runs :data:`STEPS` in
bounded batches, each its own transaction, every step idempotent (the operation and its
handler, ``DeleteAccount``, are in :mod:`wharf.accounts.service`; the pipeline in its
docstring). Rows of other people that name the user are handed to the deleted-account
placeholder (:data:`PLACEHOLDER_ID`). The batches that remove content (failing open
operations, worktrees, uploads, a space's tree) are :mod:`wharf.accounts.tree`, shared
with a team space's deletion (:mod:`wharf.accounts.space_deletion`).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, delete, null, or_, select, tuple_, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from storage.db import Database
from storage.enums import (
    DONE_STATUSES,
    Role,
    UploadState,
)
from storage.models import (
    ApiToken,
    AuditLog,
    BlobUploadSession,
    ExternalAuthorization,
    ExternalIdentity,
    Issue,
    IssueComment,
    IssueEvent,
    LinkSharing,
    LoginSession,
    Node,
    NodeGrant,
    Operation,
    PasswordCredential,
    RecentOpen,
    RecoveryCode,
    Resource,
    Space,
    SpaceMember,
    TrashBatch,
    UnitAsset,
    UnitAssetUpload,
    User,
    Webhook,
    WebhookDelivery,
    Worktree,
    WorktreeNodeIntent,
    WorktreeUnit,
)
from storage.results import rowcount
from storage.unitstore import UnitStore
from wharf.accounts import tree
from wharf.comments import lifecycle as comments
from wharf.identity.placeholder import PLACEHOLDER_ID as PLACEHOLDER_ID  # (re-exported)
from wharf.identity.placeholder import PLACEHOLDER_NAME as PLACEHOLDER_NAME
from wharf.identity.service import USER_ACTIVE
from wharf.infra import audit
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext, system_principal
from wharf.infra.errors import ProblemCode
from wharf.infra.settings import Settings
from wharf.protection import lifecycle as protection
from wharf.spaces.service import set_owner

log = logging.getLogger("wharf.accounts.purge")

DELETING = "deleting"
REASON = "account_deleted"
#: Rounds of one step in one attempt (``tree.MAX_ROUNDS``; a test lowers it here).
MAX_ROUNDS = tree.MAX_ROUNDS



def ensure_placeholder(s: Session) -> None:
    """The placeholder user row (inserted once, by whoever needs it first)."""
    insert_ = pg_insert if s.get_bind().dialect.name == "postgresql" else sqlite_insert
    s.execute(insert_(User).values(id=PLACEHOLDER_ID, username=PLACEHOLDER_NAME,
                                   username_key=PLACEHOLDER_NAME, status=DELETING,
                                   created_at=utcnow()).on_conflict_do_nothing())


# -- 1. the request ----------------------------------------------------------------------


def revoke_credentials(s: Session, user_id: str) -> int:
    """Delete the user's password, recovery codes, linked external identities (the
    provider's account may sign up afresh), sign-ins under way, login sessions and API
    tokens (a user's are few); how many sessions and tokens."""
    n = rowcount(s.execute(delete(LoginSession).where(LoginSession.user_id == user_id)))
    n += rowcount(s.execute(delete(ApiToken).where(ApiToken.user_id == user_id)))
    s.execute(delete(PasswordCredential).where(PasswordCredential.user_id == user_id))
    s.execute(delete(RecoveryCode).where(RecoveryCode.user_id == user_id))
    s.execute(delete(ExternalIdentity).where(ExternalIdentity.user_id == user_id))
    s.execute(delete(ExternalAuthorization).where(ExternalAuthorization.user_id == user_id))
    return n




Step = Callable[["Purge"], int]


class PurgeHandler:
    """What the handler of a purging operation (``delete_account``, ``delete_space``) is
    built with: its purge runs as many short transactions, and reaches the capabilities'
    own handlers (``handlers``, by kind: a step fails their open operations with their
    kinds' failure hooks)."""

    def __init__(self, db: Database, unitstore: UnitStore, settings: Settings,
                 handlers: Mapping[str, Any] | None = None):
        self._db, self.unitstore, self.settings = db, unitstore, settings
        self.handlers: Mapping[str, Any] = handlers if handlers is not None else {}


@dataclass
class Purge:
    """One run of an account's deletion: the steps below, in bounded batches."""

    db: Database
    unitstore: UnitStore
    settings: Settings
    handlers: Mapping[str, Any]
    user_id: str
    operation_id: str
    counts: dict[str, int] = field(default_factory=dict)
    #: Where the audit scrub stopped (an id: ``_audit``'s keyset cursor, for this run).
    audit_after: str = ""

    @property
    def n(self) -> int:
        return self.settings.account_deletion_batch

    def ctx(self) -> RequestContext:
        return RequestContext(principal=system_principal(self.operation_id))

    def run(self) -> dict[str, int]:
        with self.db.write() as s:
            ensure_placeholder(s)
        return tree.run_steps(self, STEPS, self.counts, "account deletion", MAX_ROUNDS)

    def personal_space(self, s: Session) -> str | None:
        return s.scalar(select(Space.id).where(Space.owner_id == self.user_id,
                                               Space.type == "personal"))


def _fail_operations(p: Purge) -> int:
    """The user's open operations (not this one) fail with ``account_deleted``, with their
    kinds' failure hooks (staged objects are queued for deletion)."""
    error = {"code": ProblemCode.ACCOUNT_DELETED.value, "retryable": False,
             "message": "The account that submitted this operation was deleted."}
    return tree.fail_operations(p.db, Operation.actor_id == p.user_id, p.operation_id, p.n,
                                p.handlers, p.settings.idempotency_key_ttl, error,
                                "after the account's deletion", REASON)


def _revoke(p: Purge) -> int:
    with p.db.write() as s:
        revoke_credentials(s, p.user_id)
    return 0


def _memberships_and_grants(p: Purge) -> int:
    """Memberships; grants to them or made by them; link sharing they set up."""
    uid, n, done = p.user_id, p.n, 0
    with p.db.write() as s:
        spaces = list(s.scalars(select(SpaceMember.space_id).where(
            SpaceMember.user_id == uid).limit(n)))
        done += rowcount(s.execute(delete(SpaceMember).where(
            SpaceMember.user_id == uid, SpaceMember.space_id.in_(spaces))))
        grants = list(s.execute(select(NodeGrant.node_id, NodeGrant.user_id).where(
            or_(NodeGrant.user_id == uid, NodeGrant.created_by == uid)).limit(n)))
        if grants:
            done += rowcount(s.execute(delete(NodeGrant).where(
                tuple_(NodeGrant.node_id, NodeGrant.user_id).in_([tuple(g) for g in grants]))))
        links = list(s.scalars(select(LinkSharing.node_id).where(
            LinkSharing.created_by == uid).limit(n)))
        done += rowcount(s.execute(delete(LinkSharing).where(LinkSharing.node_id.in_(links))))
        space = p.personal_space(s)
        if space is not None:  # nobody else reaches the personal space any more
            nodes = select(Node.id).where(Node.space_id == space)
            picked = list(s.scalars(select(NodeGrant.node_id).where(
                NodeGrant.node_id.in_(nodes)).limit(n)))
            done += rowcount(s.execute(delete(NodeGrant).where(NodeGrant.node_id.in_(picked))))
            picked = list(s.scalars(select(LinkSharing.node_id).where(
                LinkSharing.node_id.in_(nodes)).limit(n)))
            done += rowcount(s.execute(delete(LinkSharing).where(
                LinkSharing.node_id.in_(picked))))
    return done


def _team_spaces(p: Purge) -> int:
    """Team spaces they own: to the longest-standing admin, else read-only and owned by
    the placeholder until an operator gives them an owner."""
    done = 0
    with p.db.write() as s:
        for space in s.scalars(select(Space).where(
                Space.owner_id == p.user_id, Space.type == "team")
                .order_by(Space.id).limit(p.n).with_for_update()):
            admin = s.scalar(select(SpaceMember.user_id).join(
                User, User.id == SpaceMember.user_id).where(
                SpaceMember.space_id == space.id, SpaceMember.role == Role.ADMIN,
                SpaceMember.user_id != p.user_id, User.status == USER_ACTIVE)
                .order_by(SpaceMember.created_at, SpaceMember.user_id).limit(1))
            set_owner(s, space, admin or PLACEHOLDER_ID, read_only=admin is None)
            audit.record(s, p.ctx(), "space.owner_deleted", "space", space.id,
                         space_id=space.id,
                         details={"new_owner_id": admin, "read_only": admin is None,
                                  "previous_owner_id": p.user_id})
            done += 1
    return done


def _user_worktrees(p: Purge) -> int:
    """Their own (user) worktrees: drafts, assets, rows."""
    return tree.purge_worktrees(p.db, p.unitstore, and_(
        Worktree.creator_id == p.user_id, Worktree.kind == "user"), max(1, p.n // 10), REASON)


def _uploads(p: Purge) -> int:
    """Uploads in flight: their objects are queued for deletion, their rows go."""
    return tree.purge_uploads(p.db, and_(BlobUploadSession.actor_id == p.user_id,
                                         BlobUploadSession.state != UploadState.COMPLETED),
                              UnitAssetUpload.actor_id == p.user_id, p.n, REASON)


def _personal_nodes(p: Purge) -> int:
    """The personal space's tree, leaves first (:func:`wharf.accounts.tree.purge_leaves`)."""
    with p.db.read() as s:
        space = p.personal_space(s)
    return 0 if space is None else tree.purge_leaves(p.db, p.unitstore, space, p.n, REASON)


def _personal_space(p: Purge) -> int:
    with p.db.write() as s:
        space = p.personal_space(s)
        if space is None or tree.has_nodes(s, space):
            return 0
        s.execute(delete(TrashBatch).where(TrashBatch.space_id == space))
        # Others' worktree units meant to land in it will not (the intent goes with it).
        s.execute(delete(WorktreeNodeIntent).where(WorktreeNodeIntent.target_space_id == space))
        s.execute(delete(Space).where(Space.id == space))
    return 1


def _handed_over(p: Purge) -> int:
    """What others keep (team spaces' nodes, resources, assets, trash batches, team
    worktrees, the issues, comments and issue events they wrote) names the placeholder
    instead of the user. (Their issue assignments go with the user row: ON DELETE
    CASCADE.)"""
    done = 0
    for table, column in ((Node.__table__, "created_by"), (Resource.__table__, "created_by"),
                          (UnitAsset.__table__, "created_by"),
                          (TrashBatch.__table__, "created_by"),
                          (Worktree.__table__, "creator_id"),
                          # team-space issues: what they wrote and did stays, by "~deleted"
                          (Issue.__table__, "author_user_id"),
                          (Issue.__table__, "closed_by_user_id"),
                          (IssueComment.__table__, "author_user_id"),
                          (IssueEvent.__table__, "actor_user_id"),
                          # comments on units: they stay, by "~deleted"
                          *comments.AUTHORED,
                          # protected ranges they created: the owner and admins manage them
                          *protection.AUTHORED):
        pk = table.c.id
        with p.db.write() as s:
            ids = list(s.scalars(select(pk).where(table.c[column] == p.user_id).limit(p.n)))
            if ids:
                done += rowcount(s.execute(update(table).where(pk.in_(ids))
                                           .values({column: PLACEHOLDER_ID})))
    with p.db.write() as s:
        done += protection.forget_user(s, p.user_id, p.n)  # their explicit roles go
    with p.db.write() as s:
        for t, column in ((WorktreeUnit.__table__, "added_by"),
                          (WorktreeNodeIntent.__table__, "created_by")):
            keys = list(s.execute(select(t.c.worktree_id, t.c.unit_id).where(
                t.c[column] == p.user_id).limit(p.n)))
            if keys:
                done += rowcount(s.execute(update(t).where(
                    tuple_(t.c.worktree_id, t.c.unit_id).in_([tuple(k) for k in keys]))
                    .values({column: PLACEHOLDER_ID})))
    return done


def _history(p: Purge) -> int:
    """Their finished operations, webhooks and recent opens."""
    uid, n, done = p.user_id, p.n, 0
    with p.db.write() as s:
        ids = list(s.scalars(select(Operation.id).where(
            Operation.actor_id == uid, Operation.id != p.operation_id,
            Operation.status.in_(DONE_STATUSES)).limit(n)))
        done += rowcount(s.execute(delete(Operation).where(Operation.id.in_(ids))))
    with p.db.write() as s:
        hooks = select(Webhook.id).where(Webhook.user_id == uid)
        ids = list(s.scalars(select(WebhookDelivery.id).where(
            WebhookDelivery.webhook_id.in_(hooks)).limit(n)))
        done += rowcount(s.execute(delete(WebhookDelivery).where(WebhookDelivery.id.in_(ids))))
        if len(ids) < n:
            s.execute(delete(Webhook).where(Webhook.user_id == uid))
    with p.db.write() as s:
        ids = list(s.scalars(select(RecentOpen.resource_id).where(
            RecentOpen.user_id == uid).limit(n)))
        done += rowcount(s.execute(delete(RecentOpen).where(
            RecentOpen.user_id == uid, RecentOpen.resource_id.in_(ids))))
    return done


def _audit(p: Purge) -> int:
    """Their audit rows keep the user id and lose the address, user agent and details.

    One walk in id order on ``ix_audit_actor``, a batch per transaction, from where the
    previous batch stopped (``Purge.audit_after``): a long history costs one pass, never a
    rescan of what is already scrubbed, and however long it is the walk ends within this
    call (it always advances; the step's round limit counts calls, not batches). Then one
    bounded look for a row of theirs still holding personal data (one whose id sorts
    before the walk's position but committed after it passed: a request in flight when
    the deletion began): those are scrubbed too. Answers how many rows that look found
    (0: done)."""
    personal = or_(AuditLog.client_ip.is_not(None), AuditLog.user_agent.is_not(None),
                   AuditLog.details.is_not(null()))
    scrub = {"client_ip": None, "user_agent": None, "details": null()}
    while True:
        with p.db.write() as s:
            rows = list(s.execute(select(AuditLog.id, personal).where(
                AuditLog.actor_id == p.user_id, AuditLog.id > p.audit_after)
                .order_by(AuditLog.id).limit(p.n)))
            ids = [id_ for id_, has_personal in rows if has_personal]
            if ids:
                s.execute(update(AuditLog).where(AuditLog.id.in_(ids)).values(scrub))
        if not rows:
            break
        p.audit_after = rows[-1][0]
    with p.db.write() as s:
        late = list(s.scalars(select(AuditLog.id).where(
            AuditLog.actor_id == p.user_id, personal).limit(p.n)))
        if late:
            s.execute(update(AuditLog).where(AuditLog.id.in_(late)).values(scrub))
    return len(late)


STEPS: tuple[tuple[str, Step], ...] = (
    ("operations_failed", _fail_operations),
    ("credentials", _revoke),
    ("memberships_and_grants", _memberships_and_grants),
    ("team_spaces", _team_spaces),
    ("user_worktrees", _user_worktrees),
    ("uploads", _uploads),
    ("personal_nodes", _personal_nodes),
    ("personal_space", _personal_space),
    ("handed_over", _handed_over),
    ("history", _history),
    ("audit", _audit),
)

