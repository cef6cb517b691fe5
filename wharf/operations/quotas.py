"""Per-actor quotas on operations: how many may be open (pending or running) at once, and
how many may be submitted in any 60 seconds (issue 19).

The limits are the settings ``WHARF_QUOTA_PENDING_OPERATIONS`` and
``WHARF_QUOTA_SUBMISSIONS_PER_MINUTE`` (``0``: unlimited), or the API token's own
(``api_tokens.quota_*``, set when the token is minted; a token minted by a non-operator may
only tighten the server's limits, see :func:`check_token_quota`, and is held at request time
to the tighter of its own and the server's current limit, :func:`limits_for`). The quota is
the actor's (the user's): every token and login session of that user counts toward it, the token's
limit only decides where the request is refused.

Counted in the database, the source of truth, inside the very statement that records
the operation (``INSERT … SELECT … WHERE <within quotas>``, :func:`guard`; no extra round
trip), by two bounded index reads (never more than ``limit`` index entries each):
- open operations: ``ix_operations_open`` (actor_id, partial on ``status IN ('pending',
  'running')``);
- submissions in the last 60 s: ``ix_operations_actor`` (actor_id, id); ids are UUIDv7
  (their first 48 bits are the creation millisecond), so "created in the last 60 s" is
  ``id >= <hex of now - 60 s>000…``: a sliding window, no counter table.
When that INSERT records nothing (a taken key, or a quota), :func:`check` counts again
to tell which: over a limit → 429 ``quota_exceeded`` with ``Retry-After`` and ``quota``,
``limit``, ``current`` and ``retry_after`` in the problem's details; the transaction
writes nothing.

Concurrency: the count reads what was committed when it ran, so submissions of one actor
in flight at the same moment do not see each other. Over-admission is therefore bounded
by the actor's concurrent submitting transactions, less one: at most ``limit + C - 1``
admitted, where ``C`` is how many requests of that actor are between their count and
their commit at once (at most the API processes x their request threads; in practice the
client's concurrency). Exact admission would need a per-actor lock held until commit,
which serializes one actor's submissions (its group commit with them): not worth it for
a limit that exists to stop runaway submitters, not to bill.

A replay of a recorded ``Idempotency-Key`` is never refused by a quota: on a refusal the
submission answers the operation the key already names, if there is one
(``wharf.operations.service``).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Integer, String, bindparam, text
from sqlalchemy.orm import Session

from wharf.infra.context import Principal
from wharf.infra.errors import ValidationFailed
from wharf.infra.operators import is_operator
from wharf.infra.settings import Settings
from wharf.operations.errors import QuotaExceeded

WINDOW_MS = 60_000
#: ``Retry-After`` when the open-operations quota refuses: operations finish on their own
#: schedule, so this is a polling interval, not a promise.
PENDING_RETRY_AFTER = 2
QUOTA_MAX = 10_000_000

# One round trip, two bounded index reads. The partial index's WHERE appears word for word
# (SQLite uses a partial index only then).
_COUNT = text(
    "SELECT (SELECT count(*) FROM (SELECT 1 FROM operations "
    "WHERE operations.actor_id = :actor AND status IN ('pending', 'running') "
    "LIMIT :pending_cap) AS p), "
    "(SELECT count(*) FROM (SELECT 1 FROM operations "
    "WHERE operations.actor_id = :actor AND operations.id >= :floor "
    "LIMIT :rate_cap) AS r)").bindparams(
    bindparam("actor"), bindparam("pending_cap"), bindparam("floor"), bindparam("rate_cap"))
_OLDEST_IN_WINDOW = text(
    "SELECT min(operations.id) FROM operations "
    "WHERE operations.actor_id = :actor AND operations.id >= :floor")


# The same counts as a condition the submission's INSERT … SELECT carries (folded into the
# statement that records the operation: no extra round trip on the hot path). A cap of 0
# (unlimited) makes its count a LIMIT 0, which reads nothing.
_GUARD = text(
    "(:q_pending_cap = 0 OR (SELECT count(*) FROM (SELECT 1 FROM operations AS q "
    "WHERE q.actor_id = :q_actor AND q.status IN ('pending', 'running') "
    "LIMIT :q_pending_cap) AS qp) < :q_pending_cap) "
    "AND (:q_rate_cap = 0 OR (SELECT count(*) FROM (SELECT 1 FROM operations AS q "
    "WHERE q.actor_id = :q_actor AND q.id >= :q_floor LIMIT :q_rate_cap) AS qr) "
    "< :q_rate_cap)").bindparams(
    bindparam("q_pending_cap", type_=Integer()), bindparam("q_rate_cap", type_=Integer()),
    bindparam("q_actor", type_=String()), bindparam("q_floor", type_=String()))


def guard() -> Any:
    """The condition under which a submission's INSERT selects its row: the actor within
    both quotas (parameters from :func:`guard_params`)."""
    return _GUARD


def guard_params(settings: Settings, principal: Principal) -> dict[str, Any]:
    limits = limits_for(settings, principal)
    floor = id_floor(time.time_ns() // 1_000_000 - WINDOW_MS) if limits.per_minute else ""
    return {"q_pending_cap": limits.pending, "q_rate_cap": limits.per_minute,
            "q_actor": principal.user_id or "", "q_floor": floor}


@dataclass(frozen=True)
class Limits:
    """The limits that apply to one request (0: unlimited)."""

    pending: int
    per_minute: int

    @property
    def any(self) -> bool:
        return self.pending > 0 or self.per_minute > 0


def limits_for(settings: Settings, principal: Principal) -> Limits:
    """The token's own limits where it has them, the server's otherwise; a token that is
    not an operator's is held to the tighter of its own and the server's *today* (a token
    minted while the server had no limit, or a higher one, does not stay exempt)."""
    operator = is_operator(settings, principal)
    return Limits(
        pending=_effective(settings.quota_pending_operations, principal.quota_pending,
                           operator=operator),
        per_minute=_effective(settings.quota_submissions_per_minute,
                              principal.quota_per_minute, operator=operator))


def _effective(server: int, token: int | None, *, operator: bool) -> int:
    """One limit (0: unlimited) from the server's and the token's own."""
    if token is None:
        return server
    if operator or not server:
        return token
    return server if token == 0 else min(token, server)


def id_floor(ms: int) -> str:
    """The smallest id (UUIDv7, ``storage.ids``) created at millisecond ``ms`` or later."""
    return f"{max(0, ms) & ((1 << 48) - 1):012x}" + "0" * 20


def _id_ms(op_id: str) -> int:
    return int(op_id[:12], 16)


def check(session: Session, settings: Settings, principal: Principal, *,
          submission: bool = True) -> None:
    """Raise :class:`QuotaExceeded` if the actor is at one of its limits (one statement;
    none at all when both limits are off). ``submission=False`` (a retry, which opens an
    operation again without submitting one) checks the open-operations limit only."""
    limits = limits_for(settings, principal)
    if not submission:
        limits = Limits(pending=limits.pending, per_minute=0)
    actor = principal.user_id
    if not limits.any or actor is None:
        return
    now_ms = time.time_ns() // 1_000_000
    floor = id_floor(now_ms - WINDOW_MS)
    conn = session.connection()
    row = conn.execute(_COUNT, {"actor": actor, "pending_cap": limits.pending,
                                "floor": floor, "rate_cap": limits.per_minute}).one()
    pending, recent = int(row[0]), int(row[1])
    if limits.pending and pending >= limits.pending:
        raise _exceeded("pending_operations", limits.pending, pending, PENDING_RETRY_AFTER,
                        f"You have {pending} operations pending or running, your limit; "
                        "submit more once some have finished.")
    if limits.per_minute and recent >= limits.per_minute:
        oldest = conn.execute(_OLDEST_IN_WINDOW, {"actor": actor, "floor": floor}).scalar()
        wait_ms = (_id_ms(oldest) + WINDOW_MS - now_ms) if oldest else 1000
        retry_after = max(1, math.ceil(wait_ms / 1000))
        raise _exceeded("submissions_per_minute", limits.per_minute, recent, retry_after,
                        f"You submitted {recent} operations in the last minute, your limit; "
                        f"try again in {retry_after} s.")


def room(session: Session, settings: Settings, principal: Principal,
         wanted: int) -> tuple[int, QuotaExceeded | None]:
    """How many of ``wanted`` new operations a batch may record now (one statement; none
    when both limits are off), and the refusal its others answer (None: all fit). The
    statement that records a batch carries no :func:`guard`: its count would not see the
    batch's own rows, so the batch is cut here, before it is recorded."""
    limits = limits_for(settings, principal)
    actor = principal.user_id
    if not limits.any or actor is None or wanted <= 0:
        return wanted, None
    now_ms = time.time_ns() // 1_000_000
    row = session.connection().execute(_COUNT, {
        "actor": actor, "pending_cap": limits.pending, "floor": id_floor(now_ms - WINDOW_MS),
        "rate_cap": limits.per_minute}).one()
    pending, recent = int(row[0]), int(row[1])
    fits = wanted
    refusal: QuotaExceeded | None = None
    if limits.per_minute and recent + wanted > limits.per_minute:
        fits = max(0, limits.per_minute - recent)
        refusal = _exceeded("submissions_per_minute", limits.per_minute, recent + fits,
                            WINDOW_MS // 1000,
                            f"The batch would pass your limit of {limits.per_minute} "
                            "operations submitted per minute; submit the rest later.")
    if limits.pending and pending + wanted > limits.pending \
            and limits.pending - pending < fits:
        fits = max(0, limits.pending - pending)
        refusal = _exceeded("pending_operations", limits.pending, pending + fits,
                            PENDING_RETRY_AFTER,
                            f"The batch would pass your limit of {limits.pending} "
                            "operations pending or running; submit the rest once some "
                            "have finished.")
    return fits, refusal


def _exceeded(quota: str, limit: int, current: int, retry_after: int,
              message: str) -> QuotaExceeded:
    return QuotaExceeded(message, retry_after=retry_after,
                         details={"quota": quota, "limit": limit, "current": current,
                                  "retry_after": retry_after})


def check_token_quota(settings: Settings, field: str, value: Any, *,
                      operator: bool) -> int | None:
    """A quota asked for a new API token: None (the server's), or 0..``QUOTA_MAX`` (0:
    unlimited). Only an operator may mint a token looser than the server's limit (a
    higher one, or unlimited where the server has a limit): anyone else could otherwise
    lift their own quota by minting a token."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= QUOTA_MAX:
        raise ValidationFailed(f"{field} must be an integer from 0 to {QUOTA_MAX}",
                               details={"field": field})
    server = getattr(settings, field)
    if not operator and server and (value == 0 or value > server):
        raise ValidationFailed(
            f"{field} may not exceed the server's limit ({server}); only an operator can "
            "mint a token with a higher one, and only with every scope (read and write)",
            details={"field": field, "limit": server})
    return value
