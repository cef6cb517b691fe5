"""Recording what was refused: failed logins and refused writes (a 403 or 404 answered to a
``POST``/``PUT``/``PATCH``/``DELETE``).

Each is one audit row written in a short write transaction of its own, after the request's
own transaction has rolled back: no request body, no database error text, only who (the
principal, or anonymous), from where (address, user agent, request id), what (the route's
template and method, the answer's status and code; the username tried for a login).

A flood cannot fill the table: every row first takes a slot of two counters in
``auth_throttle`` (wharf.identity.throttle), one per client address
(``WHARF_AUDIT_REFUSALS_PER_ADDRESS``) and one for everybody
(``WHARF_AUDIT_REFUSALS_PER_MINUTE``), both over a minute. Past either, the refusal is
answered as always and not recorded (``wharf_audit_refusals_dropped_total`` counts it).
Recording never fails the request: an error here is logged and dropped.
"""
from __future__ import annotations

import logging
import re
from typing import Any

from prometheus_client import Counter
from sqlalchemy import select

from storage.db import Database
from storage.models import User
from wharf.identity import throttle
from wharf.identity.throttle import Limit
from wharf.infra import audit
from wharf.infra.context import RequestContext
from wharf.infra.errors import RateLimited
from wharf.infra.setting_readers import USERNAME_PATTERN
from wharf.infra.settings import Settings
from wharf.observability.metrics import REGISTRY

log = logging.getLogger("wharf.audittrail")

WINDOW = 60  # seconds, both counters
WRITES = frozenset(("POST", "PUT", "PATCH", "DELETE"))
REFUSED_STATUSES = frozenset((403, 404))
LOGIN_FAILED = "session.login_failed"
REQUEST_REFUSED = "request.refused"
DROPPED = Counter("wharf_audit_refusals_dropped_total",
                  "Failed logins and refused writes not recorded: over the audit rate limit",
                  registry=REGISTRY)
_USERNAME_MAX = 64
USERNAME_RE = re.compile(USERNAME_PATTERN)


def _limits(settings: Settings, ctx: RequestContext) -> list[Limit]:
    address = throttle.address_key(ctx.client_ip)
    return [Limit(f"audit:refused:addr:{address}", settings.audit_refusals_per_address,
                  WINDOW),
            Limit("audit:refused:all", settings.audit_refusals_per_minute, WINDOW)]


def _record(db: Database, settings: Settings, ctx: RequestContext, action: str,
            target_type: str, target_id: str | None, details: dict[str, Any],
            lookup: str | None = None) -> bool:
    """One rate-limited audit row in its own transaction; whether it was written."""
    try:
        with db.write() as s:
            throttle.take(s, _limits(settings, ctx), "refusals")
            if lookup is not None:
                target_id = s.scalar(select(User.id).where(User.username_key == lookup))
            audit.record(s, ctx, action, target_type, target_id, details=details)
        return True
    except RateLimited:
        DROPPED.inc()
        return False
    except Exception:  # never fail the answer for its audit row
        log.warning("audit: a refusal could not be recorded", exc_info=True)
        return False


def failed_login(db: Database, settings: Settings, ctx: RequestContext,
                 username: object) -> bool:
    """A login refused for a wrong username or password. The row's target is the user
    the name belongs to (their own trail shows it), if any; the name tried is kept, cut
    to 64 characters."""
    name = username[:_USERNAME_MAX] if isinstance(username, str) else None
    lookup = name.lower() if name is not None and USERNAME_RE.fullmatch(name) else None
    return _record(db, settings, ctx, LOGIN_FAILED, "user", None,
                   {"username": name}, lookup=lookup)


def refused_write(db: Database, settings: Settings, ctx: RequestContext, method: str,
                  route: str, status: int, code: str | None) -> bool:
    """A write answered 403 or 404 on a known route."""
    return _record(db, settings, ctx, REQUEST_REFUSED, "request", None,
                   {"method": method, "route": route[:200], "status": status,
                    "code": code})


def is_refused_write(method: str, status: int) -> bool:
    return method in WRITES and status in REFUSED_STATUSES

