"""An issue's timeline: its comments and events merged in one keyset-paginated order.

The order is ``(created_at, comments before events, id)``. A page is one keyset query per
table, each ``ORDER BY created_at, id LIMIT limit + 1`` on its ``(issue_id, created_at,
id)`` index with the cursor's ``(created_at, rank, id)`` turned into that table's predicate
(its rank is fixed), so a page reads at most ``2 * (limit + 1)`` keys however long the
issue's history; the two runs are merged here and the page's rows then loaded by id. A
comment written with a change in the same transaction (closing with a comment) shares its
time and comes first.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Table, select, tuple_
from sqlalchemy.orm import Session

from storage.models import IssueComment, IssueEvent, User
from wharf.infra.context import RequestContext
from wharf.infra.errors import InvalidCursor
from wharf.infra.pagination import TIMESTAMP, decode_cursor, page
from wharf.issues.access import resolve
from wharf.issues.records import issue_in

COMMENT, EVENT = 0, 1  # the rank of each kind at the same instant


@dataclass(frozen=True)
class TimelineItem:
    comment: IssueComment | None
    event: IssueEvent | None
    user: User | None  # the comment's author or the event's actor (None: the system)


def timeline(s: Session, ctx: RequestContext, space_id: str, number: str, limit: int,
             cursor: str | None) -> tuple[list[TimelineItem], str | None]:
    acc = resolve(s, ctx.principal, space_id)
    issue = issue_in(s, acc, number)
    after = decode_cursor("issue-timeline", cursor, (TIMESTAMP, str, str))
    position: tuple[datetime, int, str] | None = None
    if after is not None:
        at, rank_raw, last_id = after
        if rank_raw not in ("0", "1"):
            raise InvalidCursor("The cursor is not valid for this listing.")
        position = (at, int(rank_raw), last_id)
    keys = sorted(_keys(s, IssueComment.__table__, COMMENT, issue.id, position, limit)
                  + _keys(s, IssueEvent.__table__, EVENT, issue.id, position, limit)
                  )[:limit + 1]
    keys, nxt = page(keys, limit, "issue-timeline",
                     lambda k: [k[0], str(k[1]), k[2]])
    comment_ids = [k[2] for k in keys if k[1] == COMMENT]
    event_ids = [k[2] for k in keys if k[1] == EVENT]
    comments = {x.id: x for x in s.scalars(
        select(IssueComment).where(IssueComment.id.in_(comment_ids)))} if comment_ids else {}
    events = {x.id: x for x in s.scalars(
        select(IssueEvent).where(IssueEvent.id.in_(event_ids)))} if event_ids else {}
    user_ids: set[Any] = {x.author_user_id for x in comments.values()} | {
        x.actor_user_id for x in events.values() if x.actor_user_id}
    users = {u.id: u for u in s.scalars(select(User).where(User.id.in_(sorted(user_ids))))
             } if user_ids else {}
    items = []
    for _, rank, id_ in keys:
        # A comment deleted between the key reads and this load is left out (the page is
        # one item shorter; the cursor still follows the keys read).
        if rank == COMMENT:
            if (comment := comments.get(id_)) is not None:
                items.append(TimelineItem(comment, None, users.get(comment.author_user_id)))
        elif (event := events.get(id_)) is not None:
            items.append(TimelineItem(None, event, users.get(event.actor_user_id or "")))
    return items, nxt


def _keys(s: Session, table: Table, rank: int, issue_id: str,
          position: tuple[datetime, int, str] | None,
          limit: int) -> list[tuple[datetime, int, str]]:
    """The next ``limit + 1`` ``(created_at, rank, id)`` of one table after ``position``."""
    q = select(table.c.created_at, table.c.id).where(table.c.issue_id == issue_id)
    if position is not None:
        at, after_rank, last_id = position
        if after_rank == rank:  # the cursor is in this table: strictly after its key
            q = q.where(tuple_(table.c.created_at, table.c.id) > (at, last_id))
        elif after_rank < rank:  # a comment at ``at``: this table's rows at ``at`` follow
            q = q.where(table.c.created_at >= at)
        else:  # an event at ``at``: this table's rows at ``at`` came before it
            q = q.where(table.c.created_at > at)
    rows = s.execute(q.order_by(table.c.created_at, table.c.id).limit(limit + 1))
    return [(at_, rank, id_) for at_, id_ in rows]
