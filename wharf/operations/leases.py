"""The leases of a running batch: which of its operations a worker still holds, and the
keeper thread that renews them while side effects run (:class:`LeaseKeeping`, a part of
``wharf.operations.executor.Executor``)."""
from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import timedelta

from sqlalchemy import (
    select,
    update,
)

from storage.db import Database
from storage.driver import DriverStatement, in_param
from storage.enums import OperationStatus
from wharf.infra.clock import utcnow
from wharf.infra.settings import Settings
from wharf.operations.claiming import OPS, _p

log = logging.getLogger("wharf.operations")


def _ours(postgres: bool) -> DriverStatement:
    """The batch's operations (``ids``) this worker (``worker``) still holds running; on
    PostgreSQL locked (SQLite's write transaction is already exclusive)."""
    q = select(OPS.c.id).where(
        in_param(OPS.c.id, "ids", postgres=postgres), OPS.c.status == OperationStatus.RUNNING,
        OPS.c.lease_owner == _p("worker", OPS.c.lease_owner)).order_by(OPS.c.id)
    return DriverStatement(q.with_for_update() if postgres else q)


OURS = {postgres: _ours(postgres) for postgres in (False, True)}  # by backend
RENEW_LEASES = update(OPS).where(
    OPS.c.id.in_(_p("ids", OPS.c.id, expanding=True)),
    OPS.c.lease_owner == _p("worker", OPS.c.lease_owner),
    OPS.c.status == OperationStatus.RUNNING).values(
    lease_expires_at=_p("lease_until", OPS.c.lease_expires_at))


class LeaseKeeping:
    """The executor's lease keeper: one thread per executor, while any lease is held."""

    db: Database
    settings: Settings
    _leases: dict[str, str]
    _leases_lock: threading.Lock
    _keeper: threading.Thread | None

    @contextlib.contextmanager
    def _lease_kept(self, op_ids: Sequence[str], worker_id: str) -> Iterator[None]:
        """While side effects run, one keeper thread per executor renews the leases every
        third of their length, so a slow verification is not taken over by another worker
        (the keeper runs while any lease is held: :meth:`_keep_leases`)."""
        with self._leases_lock:
            for op_id in op_ids:
                self._leases[op_id] = worker_id
            if self._keeper is None:
                self._keeper = threading.Thread(target=self._keep_leases, name="lease-keeper",
                                                daemon=True)
                self._keeper.start()
        try:
            yield
        finally:
            with self._leases_lock:
                for op_id in op_ids:
                    self._leases.pop(op_id, None)

    def _keep_leases(self) -> None:
        """Renew the leases held, until none is: the keeper then exits (the next
        ``_lease_kept`` starts another), so an executor left idle or dropped keeps no
        thread behind."""
        every = max(0.5, self.settings.operation_lease_seconds / 3)
        while True:
            time.sleep(every)
            by_worker: dict[str, list[str]] = {}
            with self._leases_lock:
                if not self._leases:
                    self._keeper = None
                    return
                for op_id, worker_id in self._leases.items():
                    by_worker.setdefault(worker_id, []).append(op_id)
            for worker_id, op_ids in by_worker.items():
                try:
                    with self.db.write() as s:
                        s.connection().execute(RENEW_LEASES, {
                            "ids": op_ids, "worker": worker_id,
                            "lease_until": utcnow() + timedelta(
                                seconds=self.settings.operation_lease_seconds)})
                except Exception:  # the lease may lapse; completion re-checks ownership
                    log.warning("operations %s: could not renew the leases", op_ids,
                                exc_info=True)
