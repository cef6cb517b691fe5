"""Changes to existing comments, inside the caller's transaction: edit a body, set a
thread's solved state, delete a comment (its thread with it when it is the first).

Both edits are compare-and-set in one conditional UPDATE (``... WHERE generation = :g``):
of any number of concurrent writers that read the same generation exactly one matches a
row, the rest answer 409 ``comment_conflict`` with the current generation. On PostgreSQL
the losers wait on the winner's row lock and re-check the condition when it commits; on
SQLite write transactions take turns.
"""
from __future__ import annotations

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from storage.models import UnitComment, UnitCommentThread
from storage.results import rowcount
from wharf.comments.access import UnitComments, writable
from wharf.comments.records import (
    CommentView,
    ThreadView,
    clean_body,
    comment_view,
    record,
    thread_views,
)
from wharf.comments.threads import bump_thread
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, NotFound
from wharf.infra.ids import is_id

T, C = UnitCommentThread, UnitComment


def _comment(s: Session, ctx: RequestContext,
             comment_id: str) -> tuple[UnitComment, UnitComments]:
    comment = s.get(C, comment_id) if is_id(comment_id) else None
    if comment is None:
        raise NotFound("No such comment.")
    try:
        return comment, writable(s, ctx, comment.unit_id)
    except NotFound:
        raise NotFound("No such comment.") from None


def _conflict(what: str, current: int | None) -> Conflict:
    return Conflict(f"The {what} changed since the generation you sent; read it again.",
                    code="comment_conflict", details={"generation": current})


def edit_comment(s: Session, ctx: RequestContext, comment_id: str, body: object,
                 generation: int) -> CommentView:
    comment, acc = _comment(s, ctx, comment_id)
    acc.require_author(comment.author_id)
    text = clean_body(body)
    now = utcnow()
    if not rowcount(s.execute(update(C).where(C.id == comment.id, C.generation == generation)
                              .values(body=text, generation=C.generation + 1, updated_at=now)
                              .execution_options(synchronize_session=False))):
        raise _conflict("comment", s.scalar(select(C.generation).where(C.id == comment.id)))
    bump_thread(s, comment.thread_id, now)
    s.refresh(comment)
    record(s, ctx, acc, "comment.edit", "comment", comment.id, thread_id=comment.thread_id,
           generation=comment.generation)
    return comment_view(s, comment)


def set_solved(s: Session, ctx: RequestContext, thread_id: str, solved: bool,
               generation: int) -> ThreadView:
    thread = s.get(T, thread_id) if is_id(thread_id) else None
    if thread is None:
        raise NotFound("No such comment thread.")
    try:
        acc = writable(s, ctx, thread.unit_id)
    except NotFound:
        raise NotFound("No such comment thread.") from None
    if not rowcount(s.execute(update(T).where(T.id == thread.id, T.generation == generation)
                              .values(solved=solved, generation=T.generation + 1,
                                      updated_at=utcnow())
                              .execution_options(synchronize_session=False))):
        raise _conflict("thread", s.scalar(select(T.generation).where(T.id == thread.id)))
    s.refresh(thread)
    record(s, ctx, acc, "comment_thread.solve", "comment_thread", thread.id, solved=solved,
           generation=thread.generation)
    return thread_views(s, [thread])[0]


def delete_comment(s: Session, ctx: RequestContext, comment_id: str) -> None:
    comment, acc = _comment(s, ctx, comment_id)
    acc.require_author_or_moderator(comment.author_id)
    first = comment.id == comment.thread_id
    if first:  # the thread goes, with its replies
        replies = rowcount(s.execute(delete(C).where(C.thread_id == comment.thread_id)
                                     .execution_options(synchronize_session=False))) - 1
        s.execute(delete(T).where(T.id == comment.thread_id)
                  .execution_options(synchronize_session=False))
    else:
        bump_thread(s, comment.thread_id, utcnow())
        s.execute(delete(C).where(C.id == comment.id)
                  .execution_options(synchronize_session=False))
        replies = 0
    s.expunge(comment)
    record(s, ctx, acc, "comment.delete", "comment", comment_id, thread_id=comment.thread_id,
           author_id=comment.author_id, thread_deleted=first,
           **({"replies_deleted": replies} if first else {}))
