"""The comments capability's shared pieces: the limits of one comment, the checks of a
body and an anchor, the views a read answers (a comment with its author, a thread with
its comments, in two statements whatever their number) and the audit row of a write."""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from storage.models import UnitComment, UnitCommentThread, User
from wharf.comments.access import UnitComments
from wharf.infra import audit
from wharf.infra.context import RequestContext
from wharf.infra.errors import NotFound, PayloadTooLarge, ValidationFailed
from wharf.infra.ids import is_id
from wharf.infra.validation import storable

BODY_MAX = 10_000  # characters of a comment's body
ANCHOR_MAX = 4096  # bytes of an anchor as compact UTF-8 JSON


@dataclass(frozen=True)
class Limits:
    """The settings' bounds (``WHARF_COMMENT_MAX_*``)."""

    threads_per_unit: int = 10_000
    replies_per_thread: int = 1_000


@dataclass(frozen=True)
class CommentView:
    comment: UnitComment
    author: User


@dataclass(frozen=True)
class ThreadView:
    thread: UnitCommentThread
    comments: list[CommentView]


def clean_body(value: object) -> str:
    """1 to ``BODY_MAX`` characters of text (400 ``comment_too_long`` beyond)."""
    if not isinstance(value, str) or not value:
        raise ValidationFailed("body must be 1 or more characters", details={"field": "body"})
    if len(value) > BODY_MAX:
        raise ValidationFailed(f"body must be at most {BODY_MAX} characters",
                               code="comment_too_long",
                               details={"field": "body", "max": BODY_MAX})
    if not storable(value):
        raise ValidationFailed("body must be text without NUL characters",
                               details={"field": "body"})
    return value


def clean_anchor(value: object) -> dict[str, Any]:
    """A JSON object of at most ``ANCHOR_MAX`` bytes (413 ``anchor_too_large``)."""
    if not isinstance(value, dict):
        raise ValidationFailed("anchor must be a JSON object", details={"field": "anchor"})
    size = len(json.dumps(value, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode("utf-8", "surrogatepass"))
    if size > ANCHOR_MAX:
        raise PayloadTooLarge(f"anchor must be at most {ANCHOR_MAX} bytes of compact JSON",
                              code="anchor_too_large",
                              details={"field": "anchor", "max": ANCHOR_MAX, "size": size})
    return value


def users(s: Session, ids: set[str]) -> dict[str, User]:
    if not ids:
        return {}
    return {u.id: u for u in s.scalars(select(User).where(User.id.in_(sorted(ids))))}


def comment_view(s: Session, comment: UnitComment) -> CommentView:
    author = s.get(User, comment.author_id)
    assert author is not None  # the foreign key
    return CommentView(comment, author)


def thread_views(s: Session, threads: list[UnitCommentThread]) -> list[ThreadView]:
    """Each thread with its comments, oldest first."""
    if not threads:
        return []
    by_thread: dict[str, list[UnitComment]] = defaultdict(list)
    for c in s.scalars(select(UnitComment)
                       .where(UnitComment.thread_id.in_([t.id for t in threads]))
                       .order_by(UnitComment.created_at, UnitComment.id)):
        by_thread[c.thread_id].append(c)
    people = users(s, {c.author_id for cs in by_thread.values() for c in cs})
    return [ThreadView(t, [CommentView(c, people[c.author_id]) for c in by_thread[t.id]])
            for t in threads]


def thread_in(s: Session, thread_id: object, unit_id: str) -> UnitCommentThread:
    """The thread ``thread_id`` of the unit (404 otherwise)."""
    thread = s.get(UnitCommentThread, thread_id) if is_id(thread_id) else None
    if thread is None or thread.unit_id != unit_id:
        raise NotFound("No such comment thread.")
    return thread


def record(s: Session, ctx: RequestContext, acc: UnitComments, action: str,
           target_type: str, target_id: str, **details: Any) -> None:
    audit.record(s, ctx, action, target_type, target_id, space_id=acc.node.space_id,
                 details={"unit_id": acc.unit.unit_id, **details})
