"""The feed's events: kinds and fields, declared once (the API's schema and docs read them
here), and the events a write announces.

An event carries ids and the new revision or state, never content. The events of a write
are derived from its audit records (:func:`from_audit`): every write is audited in its
transaction, so every write announces itself, and they are handed over only once that
transaction commits (``storage.db.notify_after_commit``, the path completion notices
take). ``operation.done`` comes from the completion notices themselves.
"""
from __future__ import annotations

import enum
from typing import Any

import msgspec


class EventType(enum.StrEnum):
    """What an event says (``type``)."""

    READY = "ready"
    OPERATION_DONE = "operation.done"
    TREE_CHANGED = "tree.changed"
    UNIT_CHANGED = "unit.changed"
    WORKTREES_CHANGED = "worktrees.changed"
    ISSUES_CHANGED = "issues.changed"
    COMMENTS_CHANGED = "comments.changed"
    RESYNC = "resync"


class Event(msgspec.Struct, frozen=True, omit_defaults=True):
    """One change. ``cursor`` is set by the bus when it is stored; ``actor_id`` (who may
    hear an ``operation.done``: its submitter) and ``node_id`` (whose access decides who
    hears a unit's or a tree's change) travel with it but are not sent to clients."""

    type: EventType
    cursor: str | None = None
    space_id: str | None = None
    parent_id: str | None = None
    unit_id: str | None = None
    revision: int | None = None
    operation_id: str | None = None
    kind: str | None = None
    status: str | None = None
    worktree_id: str | None = None
    number: int | None = None
    node_id: str | None = None
    actor_id: str | None = None

    def public(self) -> dict[str, Any]:
        """What a client receives."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        out.pop("actor_id", None)
        out.pop("node_id", None)
        return out


#: Audit actions (by prefix) that change a space's tree.
_TREE = ("node.create", "node.update", "node.trash", "trash.restore", "trash.purge",
         "trash.retention_purge", "resource.create", "blob.publish", "blob.replace")


def from_audit(action: str, target_type: str, target_id: str | None,
               space_id: str | None, details: dict[str, Any] | None,
               parent_id: str | None = None) -> list[Event]:
    """The events an audited action announces (none for most: logins, tokens, ...)."""
    d = details or {}
    if action in _TREE:
        node_id = d.get("node_id") if target_type != "node" else target_id
        return [Event(EventType.TREE_CHANGED, space_id=space_id, parent_id=parent_id,
                      node_id=node_id)]
    if action in ("unit.changeset", "unit.restore"):
        return [Event(EventType.UNIT_CHANGED, space_id=space_id, unit_id=target_id,
                      revision=d.get("revision"))]
    if action.startswith("worktree."):
        return [Event(EventType.WORKTREES_CHANGED, space_id=space_id,
                      worktree_id=target_id if target_type == "worktree" else None)]
    if action.startswith("issue."):
        number = d.get("number")
        return [Event(EventType.ISSUES_CHANGED, space_id=space_id,
                      number=number if isinstance(number, int) else None)]
    if action.startswith(("comment.", "comment_thread.")):
        unit_id = d.get("unit_id")
        return [Event(EventType.COMMENTS_CHANGED, space_id=space_id,
                      unit_id=unit_id if isinstance(unit_id, str) else None)]
    return []
