"""A unit's threads, inside the caller's transaction (``wharf.comments.service`` opens
it): list them with their comments, start one, reply to one.

Listing is keyset-paged by ``(created_at, id)`` on the ``ix_unit_comment_threads_unit``
index, oldest first, optionally only the solved or the unsolved ones.

The limits are counted under a lock, so two concurrent additions cannot both pass: a new
thread locks the unit's ``unit_resources`` row (``FOR NO KEY UPDATE`` on PostgreSQL;
SQLite's write transactions are serialised by ``BEGIN IMMEDIATE``), a reply bumps its
thread's generation first, which locks the thread row.
"""
from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, func, select, tuple_, update
from sqlalchemy.orm import Session

from storage.models import UnitComment, UnitCommentThread, UnitResource
from storage.results import rowcount
from wharf.comments.access import readable, writable
from wharf.comments.records import (
    CommentView,
    Limits,
    ThreadView,
    clean_anchor,
    clean_body,
    comment_view,
    record,
    thread_in,
    thread_views,
)
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, NotFound, ValidationFailed
from wharf.infra.ids import new_id
from wharf.infra.pagination import TIMESTAMP, decode_cursor, page

T = UnitCommentThread
CURSOR = "comment-threads"


def list_threads(s: Session, ctx: RequestContext, unit_id: str, solved: bool | None,
                 limit: int, cursor: str | None) -> tuple[list[ThreadView], str | None]:
    acc = readable(s, ctx, unit_id)
    after = decode_cursor(CURSOR, cursor, (TIMESTAMP, str))
    q = select(T).where(T.unit_id == acc.unit.unit_id)
    if solved is not None:
        q = q.where(T.solved == solved)
    if after is not None:
        at, last_id = after
        q = q.where(tuple_(T.created_at, T.id) > (at, last_id))
    rows = list(s.scalars(q.order_by(T.created_at, T.id).limit(limit + 1)))
    rows, nxt = page(rows, limit, CURSOR, lambda t: [t.created_at, t.id])
    return thread_views(s, rows), nxt


def add_comment(s: Session, ctx: RequestContext, unit_id: str, limits: Limits, *,
                body: object, anchor: object = None,
                thread_id: str | None = None) -> CommentView:
    """A new thread (``anchor``) or a reply to ``thread_id``, exactly one of them."""
    acc = writable(s, ctx, unit_id)
    if (anchor is None) == (thread_id is None):
        raise ValidationFailed("Give either anchor (a new thread) or thread_id (a reply).",
                               details={"field": "thread_id" if thread_id else "anchor"})
    text = clean_body(body)
    user_id = acc.user_id
    assert user_id is not None  # writable: a signed-in user
    now = utcnow()
    comment_id = new_id()
    if thread_id is None:
        where = clean_anchor(anchor)
        s.execute(select(UnitResource.resource_id)
                  .where(UnitResource.resource_id == acc.unit.resource_id)
                  .with_for_update(key_share=True))
        if _count(s, T, T.unit_id == acc.unit.unit_id) >= limits.threads_per_unit:
            raise Conflict(f"A document has at most {limits.threads_per_unit} comment "
                           "threads.", code="comment_thread_limit",
                           details={"limit": limits.threads_per_unit})
        s.add(T(id=comment_id, unit_id=acc.unit.unit_id, resource_id=acc.resource.id,
                anchor=where, solved=False, generation=1, created_at=now, updated_at=now,
                created_by=user_id))
        s.flush()
        thread, action = comment_id, "comment.create"
    else:
        thread = thread_in(s, thread_id, acc.unit.unit_id).id
        bump_thread(s, thread, now)
        # The first comment is not a reply.
        if _count(s, UnitComment, UnitComment.thread_id == thread) > limits.replies_per_thread:
            raise Conflict(f"A thread has at most {limits.replies_per_thread} replies.",
                           code="comment_reply_limit",
                           details={"limit": limits.replies_per_thread})
        action = "comment.reply"
    comment = UnitComment(id=comment_id, thread_id=thread, unit_id=acc.unit.unit_id,
                          author_id=user_id, body=text, generation=1, created_at=now,
                          updated_at=now)
    s.add(comment)
    s.flush()
    record(s, ctx, acc, action, "comment", comment_id, thread_id=thread)
    return comment_view(s, comment)


def bump_thread(s: Session, thread_id: str, now: datetime) -> None:
    """The thread's generation + 1 (and its row lock on PostgreSQL); 404 when it is gone."""
    if not rowcount(s.execute(update(T).where(T.id == thread_id)
                              .values(generation=T.generation + 1, updated_at=now)
                              .execution_options(synchronize_session=False))):
        raise NotFound("No such comment thread.")


def _count(s: Session, table: type[T] | type[UnitComment], where: ColumnElement[bool]) -> int:
    """How many rows of ``table`` match ``where`` (under the caller's lock)."""
    return s.scalar(select(func.count()).select_from(table).where(where)) or 0
