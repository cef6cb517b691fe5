"""Comments on trunk units, as the API calls them: each function takes the ``Database``
and runs in one transaction of its own (``wharf.infra.transactions``): it checks the
caller (:mod:`wharf.comments.access`), changes the rows and writes the audit row
(``comment.create``, ``comment.reply``, ``comment.edit``, ``comment.delete``,
``comment_thread.solve``); any failure rolls all of it back.

The rules are session-level in :mod:`wharf.comments.threads` (list, start, reply) and
:mod:`wharf.comments.changes` (edit, solved state, delete); the limits, checks and views
in :mod:`wharf.comments.records`.
"""
from __future__ import annotations

from wharf.comments import changes, threads
from wharf.comments.records import CommentView, Limits, ThreadView
from wharf.infra.settings import Settings
from wharf.infra.transactions import in_read, in_write

list_threads = in_read(threads.list_threads)
add_comment = in_write(threads.add_comment)
edit_comment = in_write(changes.edit_comment)
set_solved = in_write(changes.set_solved)
delete_comment = in_write(changes.delete_comment)


def limits(settings: Settings) -> Limits:
    return Limits(threads_per_unit=settings.comment_max_threads_per_unit,
                  replies_per_thread=settings.comment_max_replies_per_thread)


__all__ = ["CommentView", "Limits", "ThreadView"]
