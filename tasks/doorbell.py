"""Coalescing doorbells: how a sender knows a bell already on its way covers its operation.

An operation's message is a doorbell, not the work: the worker that answers a bell of
kind K drains every due operation of K in batches (``tasks.actors``). So a sender whose
operation committed need not ring if a bell of K is sure to be answered, or a running
drain of K to claim again, *after* that commit: those claims see the operation. Each
implementation here decides that for one broker:

``RedisDoorbell`` (``wharf worker`` against Redis), per kind K: a flag ``<ns>:bell:op_K``
("a bell is on its way"), the set of drains now running (``…:drains``, each entry expiring
``ttl`` after its last claim began) and a generation counter (``…:gen``). Each step is
one Lua script, so atomic.

- Sender, after its transaction committed: if a drain of K is running, bump the
  generation (no message); else ``SET flag NX PX ttl`` and enqueue a bell if it set the
  flag (enqueue failed → ``DEL flag``, the outbox row stays for the relay). A row not
  rung counts as dispatched.
- Worker, on a bell: ``DEL flag`` and join the drains *first*; then, before each claim,
  read the generation (and renew its entry); after a short claim it leaves only if the
  generation did not change since that claim began (else claims again); after a full
  claim it rings once more (``SET NX``: another worker joins -- parallelism across
  processes) and claims again. After its time budget it leaves, ringing a bell of its
  own if the generation changed.

Why an operation O whose sender acted at t1 (after O committed) is seen by a claim after
t1 -- claims take due operations oldest first until one comes back short, so a claim
after t1 that comes back short took O unless someone else holds or finished it:

1. The sender bumped the generation: a drain D was registered at t1. D leaves only by
   comparing the generation read before its latest claim with the current one; if that
   claim began before t1 the bump shows and D claims again, otherwise it began after t1.
2. The sender set the flag: it enqueued a bell; its answer claims after t1.
3. ``SET NX`` failed: the flag existed at t1, set by a sender S' whose bell B' was not
   answered by t1 (an answer deletes the flag; a flag set after an answer is another).
   B''s answer -- ``DEL``, then claims -- comes after t1. (An answer may delete a newer
   flag than its own bell's: that costs a bell later, never a miss, as every answer's
   ``DEL`` is followed by its claims.)

The exceptions are failures, bounded and healed elsewhere: S''s enqueue failed (S'
deletes the flag; senders that saw it meanwhile wait for the recovery sweep); B' was lost
with Redis while the flag survived, or the drain D was killed after a bump (its entry and
the flag expire after ``ttl``, so later senders ring again; the recovery sweep re-rings
without trusting either); a worker killed between receipt and ``DEL`` (Redis re-delivers
its unacked bell). A flag that expires while its bell still waits, or a drain's entry
that expires during a long batch, only costs an extra bell. FLUSHDB empties everything:
a drain then reads generation 0, unlike its mark, and claims once more. The argument
needs claims to be disjoint (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, the one writer of
SQLite): a claim comes back short only when fewer due operations were free.

``PlainDoorbell`` (any other broker: RabbitMQ, which has no shared flag Wharf could set
atomically beside its queues): no coalescing, one bell per operation -- still correct,
only more messages. A Redis behind Sentinel is Redis: ``RedisDoorbell`` on the master's
client (a failover may lose flags and drains with unreplicated writes; as with FLUSHDB,
that costs extra bells or waits for the recovery sweep, never an operation).
"""
from __future__ import annotations

import contextlib
import functools
import logging
import threading
import uuid
from collections.abc import Iterator
from typing import Any, Protocol

from wharf.operations.registry import KINDS
from wharf.operations.service import actor_name

log = logging.getLogger("wharf.dispatch")


def long_kinds() -> frozenset[str]:
    """Kinds whose side effects take long (reading a whole upload back; their
    ``KindSpec.long``): claimed one at a time and never coalesced -- a sender behind a
    drain that verifies for seconds would wait for it while other threads idle, so each of
    their operations rings its own bell. Read from the registry when asked (the kinds
    register as their capabilities are imported)."""
    return KINDS.long_kinds()


def long_actors() -> frozenset[str]:
    """The actors of :func:`long_kinds` (asked on every dispatch: computed once per set)."""
    return _actors_of(long_kinds())


@functools.lru_cache(maxsize=4)
def _actors_of(kinds: frozenset[str]) -> frozenset[str]:
    return frozenset(actor_name(kind) for kind in kinds)


class Drain(Protocol):
    """One worker's answer to a bell (see :meth:`Doorbell.answer`)."""

    def mark(self) -> int:
        """Call before each claim; pass the value to :meth:`leave_if_quiet`/:meth:`leave`."""

    def leave_if_quiet(self, mark: int) -> bool:
        """After a short claim: leave (True) unless a sender counted on us since ``mark``."""

    def leave(self, mark: int) -> bool:
        """Leave now (time budget spent); True if a sender counted on us since ``mark``
        (the caller must then ring a bell of its own)."""


class Doorbell(Protocol):
    def ring(self, actor: str) -> bool:
        """Fast path, after commit: True → enqueue a bell; False → one already covers it."""

    def ring_more(self, actor: str) -> bool:
        """A drain's claim came back full: True → enqueue one more bell (another worker
        joins); False → a bell is already on its way."""

    def rang(self, actor: str) -> None:
        """A slow path (relay, recovery) enqueues a bell without trusting the flag; the
        flag is set so that senders after it coalesce on that bell."""

    def unring(self, actor: str) -> None:
        """The enqueue after ``ring``/``ring_more``/``rang`` failed: forget the flag."""

    def answer(self, actor: str) -> contextlib.AbstractContextManager[Drain]:
        """A worker answers a bell of ``actor``: for as long as it drains."""


class _Quiet:
    """The drain of a doorbell whose senders never count on a draining worker."""

    def mark(self) -> int:
        return 0

    def leave_if_quiet(self, mark: int) -> bool:
        return True

    def leave(self, mark: int) -> bool:
        return False


class PlainDoorbell:
    """No coalescing: every operation rings (brokers without a shared flag)."""

    def ring(self, actor: str) -> bool:
        return True

    def ring_more(self, actor: str) -> bool:
        return True

    def rang(self, actor: str) -> None:
        pass

    def unring(self, actor: str) -> None:
        pass

    @contextlib.contextmanager
    def answer(self, actor: str) -> Iterator[Drain]:
        yield _Quiet()


# The Redis side of RedisDoorbell, one round trip each. Times are Redis's (TIME), so the
# hosts' clocks do not matter. KEYS: flag, drainers (sorted set: drain id -> expiry ms), gen.
_NOW = ("local t = redis.call('TIME') "
        "local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) ")
_RING = _NOW + """
if redis.call('ZCOUNT', KEYS[2], now, '+inf') > 0 then
  redis.call('INCR', KEYS[3])
  return 0
end
if redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 1 end
return 0
"""
_ENTER = _NOW + """
redis.call('DEL', KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 1)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
"""
_MARK = _NOW + """
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
return tonumber(redis.call('GET', KEYS[3]) or '0')
"""
_LEAVE_IF_QUIET = """
if tonumber(redis.call('GET', KEYS[3]) or '0') == tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[2], ARGV[1])
  return 1
end
return 0
"""
_LEAVE = """
redis.call('ZREM', KEYS[2], ARGV[1])
if tonumber(redis.call('GET', KEYS[3]) or '0') == tonumber(ARGV[2]) then return 0 end
return 1
"""


class _RedisDrain:
    def __init__(self, bell: RedisDoorbell, keys: list[str]) -> None:
        self.bell = bell
        self.keys = keys
        self.id = uuid.uuid4().hex
        self.left = False

    def enter(self) -> None:
        self.bell.scripts["enter"](keys=self.keys, args=[self.id, self.bell.ttl_ms])

    def mark(self) -> int:
        return int(self.bell.scripts["mark"](keys=self.keys, args=[self.id, self.bell.ttl_ms]))

    def leave_if_quiet(self, mark: int) -> bool:
        if not self.bell.scripts["leave_if_quiet"](keys=self.keys, args=[self.id, mark]):
            return False
        self.left = True
        return True

    def leave(self, mark: int) -> bool:
        if self.left:
            return False
        self.left = True
        return bool(self.bell.scripts["leave"](keys=self.keys, args=[self.id, mark]))


class RedisDoorbell(PlainDoorbell):
    """The Redis protocol (module docstring). ``ttl`` (seconds) bounds how long a flag whose
    bell was lost, or a drain that died, keeps senders from ringing."""

    def __init__(self, client: Any, prefix: str, ttl: float) -> None:
        self.client = client
        self.prefix = prefix
        self.ttl_ms = max(1, int(ttl * 1000))
        self.scripts = {name: client.register_script(body) for name, body in (
            ("ring", _RING), ("enter", _ENTER), ("mark", _MARK),
            ("leave_if_quiet", _LEAVE_IF_QUIET), ("leave", _LEAVE))}

    def keys(self, actor: str) -> list[str]:
        flag = f"{self.prefix}{actor}"
        return [flag, f"{flag}:drains", f"{flag}:gen"]

    def ring(self, actor: str) -> bool:
        return bool(self.scripts["ring"](keys=self.keys(actor), args=[self.ttl_ms]))

    def ring_more(self, actor: str) -> bool:
        return bool(self.client.set(self.keys(actor)[0], b"1", nx=True, px=self.ttl_ms))

    def rang(self, actor: str) -> None:
        self.client.set(self.keys(actor)[0], b"1", px=self.ttl_ms)

    def unring(self, actor: str) -> None:
        try:
            self.client.delete(self.keys(actor)[0])
        except Exception:  # Redis is down: the flag expires by itself
            log.warning("could not clear the doorbell flag of %s", actor, exc_info=True)

    @contextlib.contextmanager
    def answer(self, actor: str) -> Iterator[Drain]:
        drain = _RedisDrain(self, self.keys(actor))
        drain.enter()  # Redis down: raises, the bell fails; the recovery sweep re-rings
        try:
            yield drain
        finally:
            try:
                drain.leave(0)
            except Exception:  # the drain's entry expires by itself
                log.warning("could not leave the drain of %s", actor, exc_info=True)


class _LocalDrain:
    def __init__(self, bell: LocalDoorbell, actor: str) -> None:
        self.bell = bell
        self.actor = actor
        self.left = False

    def mark(self) -> int:
        with self.bell.lock:
            return self.bell.generation.get(self.actor, 0)

    def _leave(self) -> None:
        self.left = True
        self.bell.draining[self.actor] -= 1

    def leave_if_quiet(self, mark: int) -> bool:
        with self.bell.lock:
            if self.bell.generation.get(self.actor, 0) != mark:
                return False
            self._leave()
            return True

    def leave(self, mark: int) -> bool:
        with self.bell.lock:
            if self.left:
                return False
            self._leave()
            return self.bell.generation.get(self.actor, 0) != mark


class LocalDoorbell(PlainDoorbell):
    """In-process coalescing for the embedded broker (module docstring). No flag: a bell
    rings whenever no drain of its kind is running, and ``ring_more`` always rings (the
    ringing thread itself drains on: another one joins)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.draining: dict[str, int] = {}
        self.generation: dict[str, int] = {}

    def ring(self, actor: str) -> bool:
        with self.lock:
            if self.draining.get(actor, 0) > 0:
                self.generation[actor] = self.generation.get(actor, 0) + 1
                return False
            return True

    @contextlib.contextmanager
    def answer(self, actor: str) -> Iterator[Drain]:
        with self.lock:
            self.draining[actor] = self.draining.get(actor, 0) + 1
        drain = _LocalDrain(self, actor)
        try:
            yield drain
        finally:
            drain.leave(0)


def doorbell_for(broker: Any, namespace: str, ttl: float) -> Doorbell:
    """The doorbell of ``broker``: Redis's flag, the in-process one for the StubBroker, none
    (one bell per operation) for anything else."""
    from dramatiq.brokers.redis import RedisBroker
    from dramatiq.brokers.stub import StubBroker
    if isinstance(broker, RedisBroker):
        return RedisDoorbell(broker.client, f"{namespace}:bell:", ttl)
    if isinstance(broker, StubBroker):
        return LocalDoorbell()
    return PlainDoorbell()
