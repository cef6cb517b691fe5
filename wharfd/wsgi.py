"""WSGI entry point for gunicorn (``wharf api``): ``wharfd.wsgi:application``, the API
with its collaborators (database, dispatcher to the broker, notifier) built from settings
by :class:`wharfd.runtime.Components`.

Each gunicorn worker process writes its heartbeat (``wharf.observability.heartbeats``, role
``api``):
gunicorn's ``post_worker_init`` hook calls :func:`start_heartbeat` and ``worker_exit``
calls :func:`stop_heartbeat` (``wharf api`` installs both hooks whatever the config file;
the packaged one declares them too). Both are idempotent per process."""
from __future__ import annotations

import os
from typing import Any

from wharfd import tracing

# Before the app is built (and its classes used): each gunicorn worker imports this module
# after the fork, so each sets up its own tracing (OTEL_TRACES_EXPORTER; off by default).
tracing.setup("api")

from api.expect_continue import ExpectContinue  # noqa: E402
from wharf.infra.settings import Settings  # noqa: E402
from wharf.observability.heartbeats import Heartbeat  # noqa: E402
from wharfd import heap  # noqa: E402
from wharfd.runtime import Components  # noqa: E402

components = Components(Settings.from_env())
# ``100 Continue`` on the first body read (with the pre_request hook ``wharf api`` installs).
application = ExpectContinue(components.api_app())
heap.settle()  # what start-up built stays out of the collector's full collections
_heartbeat: dict[int, Heartbeat] = {}  # by pid: a preloaded app's fork starts its own


def start_heartbeat(worker: Any = None) -> None:
    """Start this worker process's heartbeat (once per process)."""
    pid = os.getpid()
    if pid in _heartbeat:
        return
    threads = getattr(getattr(worker, "cfg", None), "threads", None)
    parent = getattr(worker, "ppid", None)
    _heartbeat[pid] = components.heartbeat(
        "api", lambda: {"threads": threads, "gunicorn_master_pid": parent}).start()


def stop_heartbeat(worker: Any = None) -> None:
    """Mark this worker process's heartbeat stopped (a clean exit)."""
    heartbeat = _heartbeat.pop(os.getpid(), None)
    if heartbeat is not None:
        heartbeat.stop()
