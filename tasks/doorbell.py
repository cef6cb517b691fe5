"""Coalescing doorbells: how a sender knows a bell already on its way covers its operation.

An operation's message is a doorbell, not the work: the worker that answers a bell of
kind K drains every due operation of K in batches (``tasks.actors``). So a sender whose
operation committed need not ring if a bell of K is sure to be answered *after* that
commit -- the answer's claims see the operation. Each implementation here decides that
for one broker:

``RedisDoorbell`` (``wharf worker`` against Redis): one flag per bell (``<ns>:bell:op_K``).

- Sender, after its transaction committed: ``SET flag 1 NX PX ttl``. Set → it enqueues a
  bell (enqueue failed → ``DEL flag`` and the outbox row stays for the relay). Not set →
  a bell is on its way; the outbox row counts as dispatched.
- Worker, on a bell: ``DEL flag`` *first*, then claims batches until a claim returns fewer
  than the limit; after a full batch it rings once more (``SET NX``; so another worker
  joins: parallelism across processes).

Why an operation O committed before its sender's ``SET`` (time t1) is seen by some claim
after t1: if the ``SET`` succeeded, the sender enqueued a bell; whoever answers it claims
after t1. If it failed, the flag existed at t1; it was set by a sender S' whose bell B' was
not yet answered at t1 (answering deletes the flag, and a flag set after an answer is a
new one). B''s answer -- a ``DEL`` then claims -- therefore happens after t1, and claims
until a claim comes back short: that claim found fewer due operations than it could
take, so O (due since before t1, unless someone else holds or finished it) was among
those claimed by then. A worker's ``DEL`` may delete a *newer* flag than its own bell's;
that only costs an extra bell later, never a miss, because every ``DEL`` by a worker is
followed by its claims. The exceptions are failures, bounded and healed elsewhere: S''s
enqueue failed (S' deletes the flag: senders that saw it meanwhile wait for the recovery
sweep); B' was lost with Redis while the flag survived (the ``ttl`` bounds how long new
senders trust it; the recovery sweep re-rings without trusting the flag); the answering
worker was killed between receipt and ``DEL`` (Redis re-delivers its unacked bell; the
flag expires). A flag that expires while its bell still waits only costs one more bell.
The argument needs claims to be disjoint (``FOR UPDATE SKIP LOCKED`` on PostgreSQL, the
one writer of SQLite): a claim returns fewer than the limit only when fewer due
operations were free.

``LocalDoorbell`` (``wharf serve``'s in-process broker): no flag to lose, so the flag is
"a worker thread is draining K and will look again". A sender that finds one bumps K's
generation instead of enqueueing; a draining thread leaves only when the generation did
not change since its last claim began (else it claims again), under one lock. So a bump
at t1 is either before that claim began (the claim sees O) or makes the thread claim
again. With no thread draining K every operation rings its own bell (nothing is lost if
no worker runs yet; the bells are answered when one starts).

``PlainDoorbell`` (any other broker, e.g. RabbitMQ later): no coalescing, one bell per
operation -- still correct, only more messages.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any, Protocol

log = logging.getLogger("wharf.dispatch")


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


class RedisDoorbell(PlainDoorbell):
    """The Redis flag protocol (module docstring). ``ttl`` (seconds) bounds how long a flag
    whose bell was lost keeps new senders from ringing."""

    def __init__(self, client: Any, prefix: str, ttl: float) -> None:
        self.client = client
        self.prefix = prefix
        self.ttl_ms = max(1, int(ttl * 1000))

    def key(self, actor: str) -> str:
        return f"{self.prefix}{actor}"

    def ring(self, actor: str) -> bool:
        return bool(self.client.set(self.key(actor), b"1", nx=True, px=self.ttl_ms))

    def ring_more(self, actor: str) -> bool:
        return self.ring(actor)

    def rang(self, actor: str) -> None:
        self.client.set(self.key(actor), b"1", px=self.ttl_ms)

    def unring(self, actor: str) -> None:
        try:
            self.client.delete(self.key(actor))
        except Exception:  # Redis is down: the flag expires by itself
            log.warning("could not clear the doorbell flag of %s", actor, exc_info=True)

    @contextlib.contextmanager
    def answer(self, actor: str) -> Iterator[Drain]:
        try:
            self.client.delete(self.key(actor))
        except Exception:  # the flag expires by itself; the claims below still run
            log.warning("could not clear the doorbell flag of %s", actor, exc_info=True)
        yield _Quiet()


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


class LocalDoorbell:
    """In-process coalescing for the embedded broker (module docstring)."""

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

    def ring_more(self, actor: str) -> bool:
        return True  # the ringing thread itself drains on: another one joins

    def rang(self, actor: str) -> None:
        pass

    def unring(self, actor: str) -> None:
        pass

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
