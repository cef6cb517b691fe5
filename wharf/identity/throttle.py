"""Rate limits on login and registration, counted in the database.

Counters live in ``auth_throttle`` (one row per key, a fixed window), so every API process
and host shares them. Each limited attempt first *takes* a slot for each of its keys in one
short write transaction (an atomic upsert per key, ``RETURNING`` the new count); when any
key is over its limit the transaction rolls back and the caller answers 429 with
``Retry-After`` (the end of that key's window). A request already refused costs only a read.

Login keys are ``login:pair:<username>:<client address>`` (the strict limit: one
address guessing one user's password), ``login:user:<username>`` (a much higher limit
across all addresses, against distributed guessing) and ``login:addr:<client address>``
(one address spraying many usernames). A failed login keeps its slots; a successful one
gives them back (``release``) and clears its pair, so the counters measure failures plus
attempts still in flight. Someone guessing from elsewhere therefore does not lock the
real user out of their own address until the per-username limit is reached. The password
hash is never computed inside these transactions. Registration counts every attempt that
reaches hashing per address (``register:addr:<client address>``). A limit of 0 disables
that key.

The client address in a key is ``address_key(ip)``: an IPv4 address as is, an IPv6
address as its /64 network (one subscriber usually gets a whole /64, so counting single
IPv6 addresses would give a client unlimited attempts), an IPv4-mapped IPv6 address as
the IPv4 address.
"""
from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import bindparam, case, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from storage.models import AuthThrottle
from storage.types import UTCDateTime
from wharf.infra.clock import utcnow
from wharf.infra.errors import RateLimited


def address_key(ip: str | None) -> str:
    """The throttle bucket of a client address: IPv4 as is, IPv6 by its /64 network."""
    if not ip:
        return "unknown"
    try:
        addr = ipaddress.ip_address(_host_part(ip))
    except ValueError:
        return ip[:64]  # not an address (e.g. a unix socket peer): count it as it is
    if isinstance(addr, ipaddress.IPv6Address):
        if addr.ipv4_mapped is not None:
            return str(addr.ipv4_mapped)
        return str(ipaddress.IPv6Network((addr.packed[:8] + bytes(8), 64)))
    return str(addr)


def _host_part(ip: str) -> str:
    """The address without a port some proxies append (``1.2.3.4:5678``,
    ``[2001:db8::1]:443``), so each source port is not a bucket of its own."""
    ip = ip.strip()
    if ip.startswith("["):
        return ip[1:].split("]", 1)[0]
    if ip.count(":") == 1:  # IPv4 with a port (a bare IPv6 address has several colons)
        return ip.split(":", 1)[0]
    return ip


@dataclass(frozen=True)
class Limit:
    key: str
    max_count: int      # 0: unlimited
    window: int         # seconds


def _active(limits: list[Limit]) -> list[Limit]:
    return [lim for lim in limits if lim.max_count > 0]


def _refuse(what: str, window_start: datetime, window: int, now: datetime) -> RateLimited:
    wait = (window_start + timedelta(seconds=window) - now).total_seconds()
    retry_after = max(1, math.ceil(wait))
    return RateLimited(f"Too many {what}; try again in {retry_after} s.",
                       retry_after=retry_after)


def check(session: Session, limits: list[Limit], what: str) -> None:
    """Refuse (429) if any key is already at its limit; read-only (a cheap pre-check)."""
    limits = _active(limits)
    if not limits:
        return
    now = utcnow()
    rows = {r.key: r for r in session.scalars(
        select(AuthThrottle).where(AuthThrottle.key.in_([lim.key for lim in limits])))}
    for lim in limits:
        row = rows.get(lim.key)
        if row is None or row.window_start + timedelta(seconds=lim.window) <= now:
            continue
        if row.count >= lim.max_count:
            raise _refuse(what, row.window_start, lim.window, now)


def take(session: Session, limits: list[Limit], what: str) -> None:
    """Count one attempt against every key, atomically; over any limit → ``RateLimited``.

    Call inside its own short write transaction: raising rolls back every increment.
    """
    now = utcnow()
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    t = AuthThrottle.__table__
    for lim in _active(limits):
        cutoff = bindparam("cutoff", now - timedelta(seconds=lim.window), type_=UTCDateTime)
        fresh = t.c.window_start <= cutoff
        upsert = insert(t).values(key=lim.key, window_start=now, count=1)
        stmt = upsert.on_conflict_do_update(
            index_elements=[t.c.key],
            set_={"count": case((fresh, 1), else_=t.c.count + 1),
                  "window_start": case((fresh, bindparam("now", now, type_=UTCDateTime)),
                                       else_=t.c.window_start)},
        ).returning(t.c.count, t.c.window_start)
        count, window_start = session.execute(stmt).one()
        if count > lim.max_count:
            raise _refuse(what, window_start, lim.window, now)


def release(session: Session, limits: list[Limit], *, reset: tuple[str, ...] = ()) -> None:
    """Give back one slot per key (a success); keys in ``reset`` are cleared entirely."""
    for lim in _active(limits):
        if lim.key in reset:
            session.execute(delete(AuthThrottle).where(AuthThrottle.key == lim.key))
        else:
            session.execute(update(AuthThrottle)
                            .where(AuthThrottle.key == lim.key, AuthThrottle.count > 0)
                            .values(count=AuthThrottle.count - 1))
