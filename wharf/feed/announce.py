"""Audited writes announce their events: registered in ``wharf.infra.audit.AUDITED`` when
this package is imported, so each audited row of a write transaction adds its events
(:func:`wharf.feed.events.from_audit`) to what that transaction hands over once it
commits (``storage.db.notify_after_commit``: the path completion notices take; the
composition root sends them on to the feed's bus). A rolled-back write announces
nothing; a failed hand-over never fails the write."""
from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from storage.db import notify_after_commit
from storage.models import Node
from wharf.feed.events import from_audit
from wharf.infra import audit


def _on_audited(session: Session, fields: dict[str, Any], parent_id: str | None) -> None:
    action = str(fields["action"])
    target_type, target_id = str(fields["target_type"]), fields["target_id"]
    if parent_id is None and target_type == "node" and target_id \
            and action.startswith("node."):
        node = session.get(Node, target_id)  # in the session already: the write's own
        parent_id = node.parent_id if node is not None else None
    events = from_audit(action, target_type, target_id, fields.get("space_id"),
                        fields.get("details"), parent_id)
    if events:
        notify_after_commit(session, events)


if _on_audited not in audit.AUDITED:
    audit.AUDITED.append(_on_audited)
