"""Comment threads on trunk units: ``/api/units/{unit_id}/comments``,
``/api/comments/{comment_id}``, ``/api/comment-threads/{thread_id}/solved``
(wharf.comments, docs/comments.md).

Every write is one transaction (no operation, no ``Idempotency-Key``). Worktree units have
no comments: these routes find trunk units only.
"""
from __future__ import annotations

import falcon

from api import contract
from api.resources.issues import user_ref
from api.schemas.comments import (
    CommentQuery,
    CommentThread,
    CommentThreadList,
    CreateCommentRequest,
    EditCommentRequest,
    SolvedRequest,
    UnitComment,
)
from api.serialize import timestamp
from storage.db import Database
from wharf.comments import service
from wharf.comments.service import CommentView, ThreadView
from wharf.infra.settings import Settings

TAGS = ["comments"]
ACCESS = ("404 when the caller cannot open the unit (a unit in a worktree included).")
WRITE = ACCESS + (" Needs a signed-in user; a read-only team space takes no comments "
                  "(403 `space_read_only`).")


def comment_body(v: CommentView) -> UnitComment:
    c = v.comment
    return UnitComment(id=c.id, thread_id=c.thread_id, author=user_ref(v.author), body=c.body,
                       generation=c.generation, created_at=timestamp(c.created_at),
                       updated_at=timestamp(c.updated_at))


def thread_body(v: ThreadView) -> CommentThread:
    t = v.thread
    return CommentThread(thread_id=t.id, anchor=t.anchor, solved=t.solved,
                         generation=t.generation, created_at=timestamp(t.created_at),
                         updated_at=timestamp(t.updated_at),
                         comments=[comment_body(c) for c in v.comments])


class UnitComments:
    def __init__(self, db: Database, settings: Settings):
        self.db, self.limits = db, service.limits(settings)

    @contract.op(operation_id="listUnitComments", summary="A unit's comment threads",
                 tags=TAGS, query=CommentQuery, responses={200: CommentThreadList},
                 description="Oldest thread first, each with its comments (oldest first). "
                             "`solved=true|false` filters. Anonymous readers of a publicly "
                             "readable unit may list. " + ACCESS,
                 auth="optional")
    def on_get(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        q = contract.read_query(req, CommentQuery)
        solved = None if q.solved is None else q.solved == "true"
        items, nxt = service.list_threads(self.db, req.context.ctx, unit_id, solved, q.limit,
                                          q.cursor)
        resp.media = CommentThreadList(items=[thread_body(t) for t in items], next_cursor=nxt)

    @contract.op(operation_id="createUnitComment", summary="Start a thread or reply",
                 tags=TAGS, body=CreateCommentRequest,
                 responses={201: contract.Answer(UnitComment, "created")},
                 problems=(409, 413),
                 description="`anchor` starts a thread (the comment's id is the thread's); "
                             "`thread_id` replies in one of this unit's threads. Whoever "
                             "can open the unit. Limits: 409 `comment_thread_limit` "
                             "(WHARF_COMMENT_MAX_THREADS_PER_UNIT), 409 "
                             "`comment_reply_limit` (WHARF_COMMENT_MAX_REPLIES_PER_THREAD). "
                             + WRITE)
    def on_post(self, req: falcon.Request, resp: falcon.Response, unit_id: str) -> None:
        body = contract.read_body(req, CreateCommentRequest)
        v = service.add_comment(self.db, req.context.ctx, unit_id, self.limits, body=body.body,
                                anchor=body.anchor, thread_id=body.thread_id)
        resp.media = comment_body(v)
        resp.status = falcon.HTTP_201


class CommentItem:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="editUnitComment", summary="Edit your comment's body",
                 tags=TAGS, body=EditCommentRequest, responses={200: UnitComment},
                 problems=(409,),
                 description="Its author only (403 otherwise). `generation` must be the "
                             "comment's (409 `comment_conflict`, `details.generation` the "
                             "current one). " + WRITE)
    def on_patch(self, req: falcon.Request, resp: falcon.Response, comment_id: str) -> None:
        body = contract.read_body(req, EditCommentRequest)
        resp.media = comment_body(service.edit_comment(self.db, req.context.ctx, comment_id,
                                                       body.body, body.generation))

    @contract.op(operation_id="deleteUnitComment", summary="Delete a comment", tags=TAGS,
                 responses={204: contract.Answer(None, "deleted")},
                 description="Its author, or the document's owner or an admin of its "
                             "space (403 otherwise). Deleting a thread's first comment "
                             "deletes the thread and its replies. " + WRITE)
    def on_delete(self, req: falcon.Request, resp: falcon.Response, comment_id: str) -> None:
        service.delete_comment(self.db, req.context.ctx, comment_id)
        resp.status = falcon.HTTP_204


class ThreadSolved:
    def __init__(self, db: Database):
        self.db = db

    @contract.op(operation_id="setCommentThreadSolved", summary="Solve or reopen a thread",
                 tags=TAGS, body=SolvedRequest, responses={200: CommentThread},
                 problems=(409,),
                 description="Whoever can open the unit. Compare-and-set on the thread's "
                             "`generation`: of concurrent writers that read the same one, "
                             "exactly one succeeds, the others get 409 `comment_conflict` "
                             "(`details.generation` the current one). " + WRITE)
    def on_put(self, req: falcon.Request, resp: falcon.Response, thread_id: str) -> None:
        body = contract.read_body(req, SolvedRequest)
        resp.media = thread_body(service.set_solved(self.db, req.context.ctx, thread_id,
                                                    body.solved, body.generation))


def mount(app: contract.App, db: Database, settings: Settings) -> None:
    """The comment routes (``api.app``)."""
    app.add_route("/api/units/{unit_id}/comments", UnitComments(db, settings))
    app.add_route("/api/comments/{comment_id}", CommentItem(db))
    app.add_route("/api/comment-threads/{thread_id}/solved", ThreadSolved(db))
