"""Stars: the resources a user marked to find again. Like recent (:mod:`wharf.recent.service`),
names and places come from the node at read time, and the listing leaves out what the
user can no longer discover (no role on the node: access revoked, or the node or an
ancestor in the trash); a star comes back into view when the access does.

- ``PUT /api/me/stars/{resource_id}``: the caller must discover the resource (viewer: 404
  otherwise, like ``GET /api/resources/{id}``); starring again changes nothing. At most
  :data:`MAX_STARS_PER_USER` stars per user (409 ``star_limit``), counted under the user's
  lock (:func:`wharf.infra.limits.require_room`).
- ``DELETE``: removes the caller's star if there is one, whatever the resource's state
  (a star on something the user can no longer see can still be taken off).
- Not audited: a star is a personal preference that changes nothing anyone else sees,
  as a recent open is not audited either.

The rows go with the user or the resource (``ON DELETE CASCADE``: purges and account
deletion need no step of their own; a user holds at most the cap).

Each function takes the ``Database`` and runs in one transaction of its own."""
from __future__ import annotations

from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from storage.db import Database
from storage.models import Star
from storage.results import rowcount
from wharf.infra.clock import utcnow
from wharf.infra.context import RequestContext
from wharf.infra.errors import Conflict, ProblemCode
from wharf.infra.ids import is_id
from wharf.infra.limits import require_room
from wharf.recent.service import my_resources
from wharf.units.resources import get_resource

#: Stars one user may hold (those on resources they can no longer see count too).
MAX_STARS_PER_USER = 1000


class StarLimit(Conflict):
    """The user holds :data:`MAX_STARS_PER_USER` stars (``details.limit``)."""

    code = ProblemCode.STAR_LIMIT.value
    title = "Star limit"


def star(db: Database, ctx: RequestContext, resource_id: str) -> bool:
    """Star ``resource_id`` for the caller; whether a star was added (False: it was
    there already)."""
    user_id = ctx.principal.user_id
    assert user_id is not None  # the route is for logged-in users
    with db.write() as s:
        res, _, _, _ = get_resource(s, ctx, resource_id)
        if s.get(Star, (user_id, res.id)) is not None:
            return False
        require_room(s, user_id, select(func.count()).select_from(Star)
                     .where(Star.user_id == user_id), MAX_STARS_PER_USER,
                     lambda: StarLimit(f"At most {MAX_STARS_PER_USER} stars per user.",
                                       details={"limit": MAX_STARS_PER_USER}))
        dialect = s.get_bind().dialect.name
        ins = postgresql.insert(Star) if dialect == "postgresql" else sqlite.insert(Star)
        # A concurrent PUT of the same star may have inserted it since the look above.
        done = s.execute(ins.values(user_id=user_id, resource_id=res.id, created_at=utcnow())
                         .on_conflict_do_nothing(index_elements=["user_id", "resource_id"]))
        return rowcount(done) > 0


def unstar(db: Database, ctx: RequestContext, resource_id: str) -> None:
    """Remove the caller's star on ``resource_id``, if any."""
    if not is_id(resource_id):
        return
    with db.write() as s:
        s.execute(delete(Star).where(Star.user_id == ctx.principal.user_id,
                                     Star.resource_id == resource_id))


def list_stars(db: Database, ctx: RequestContext, limit: int,
               cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    """Newest star first; rows the user can no longer discover are skipped (a bounded
    scan, ``pagination.scan_page``, as recent)."""
    with db.read() as s:
        return _list_stars(s, ctx, limit, cursor)


def _list_stars(s: Session, ctx: RequestContext, limit: int,
                cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
    return my_resources(s, ctx, Star, Star.created_at, "stars", "starred_at", limit, cursor)
