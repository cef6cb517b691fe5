"""gunicorn settings for ``wharf api``.

Packaged with Wharf and used by ``wharf api`` unless ``WHARF_GUNICORN_CONF`` names another
file (start from a copy of this one). ``wharf api`` also passes
``--bind WHARF_HOST:WHARF_PORT`` on the command line, which agrees with the ``bind`` below;
``GUNICORN_CMD_ARGS`` (e.g. ``--threads 16``) overrides anything here.

- ``WEB_CONCURRENCY``: worker processes (default 2). Each has its own database pool
  (PostgreSQL: up to 30 connections), so size ``max_connections`` for
  api replicas x workers x 30, plus the workers and schedulers.
- ``FORWARDED_ALLOW_IPS``: proxies whose ``X-Forwarded-Proto``/``X-Forwarded-*`` headers
  gunicorn trusts (default: loopback only). Wharf's own ``WHARF_TRUSTED_PROXY_COUNT``
  decides which ``X-Forwarded-For`` entry is the client IP in the audit log.
- ``PROMETHEUS_MULTIPROC_DIR``: when set, counters of every worker are shared through
  files in that directory so ``/metrics`` reports the whole process group; it is emptied at
  start and a dead worker's files are marked dead.
"""
from __future__ import annotations

import glob
import os
from typing import TYPE_CHECKING

from wharf.infra.settings import read_setting

if TYPE_CHECKING:
    from gunicorn.arbiter import Arbiter
    from gunicorn.http.message import Request
    from gunicorn.workers.base import Worker


def _bind() -> list[str]:
    host = os.environ.get("WHARF_HOST") or "127.0.0.1"
    port = os.environ.get("WHARF_PORT") or "8080"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # IPv6 literal
    return [f"{host}:{port}"]


wsgi_app = "wharfd.wsgi:application"
bind = _bind()

# Threads, not processes, carry the concurrency: requests are mostly waiting on the
# database, and long-polls (GET /api/operations/{id}?wait=, at most 60 s) hold a thread.
# At most WHARF_LONG_POLL_MAX_WAITERS of them wait at once per worker (default: three quarters
# of the threads, set by ``wharf api``); the others answer at once with Retry-After.
worker_class = "gthread"
workers = int(os.environ.get("WEB_CONCURRENCY", "2"))
threads = 32
# Connections one worker holds (in requests or kept alive); beyond it, new ones wait in the
# listen backlog. gthread reads request bodies and writes responses on its threads without a
# send timeout: slow clients are the reverse proxy's job (docs/operations.md, "In front").
worker_connections = 1000
# Build the app in each worker after fork: no database connection is shared across processes.
preload_app = False

# A worker whose main loop is silent this long is killed and replaced (gthread requests run in
# threads, so a long request does not trip it).
timeout = 60
# On SIGTERM: stop accepting, let in-flight requests finish for this long, then exit.
# Keep the orchestrator's grace period above it (Kubernetes: terminationGracePeriodSeconds).
graceful_timeout = 30
# Idle keep-alive connections (behind a load balancer, keep this above its idle timeout).
keepalive = 75
# Recycle workers now and then (bounded memory growth), staggered so they do not all restart
# together. Rarely: a recycled worker boots a new process (imports, app, pool: about a second
# of CPU) while its old one drains, so for that while the others carry its load. At 10,000
# a worker under full load (about 250 requests per second each) recycled every 40 s, and each
# one showed in the latency tail (docs/benchmarks.md, 2026-12-05 02:40).
max_requests = 200_000
max_requests_jitter = 20_000

# Request line and headers: bounded size and count (431/400 beyond).
limit_request_line = 8190
limit_request_fields = 100
limit_request_field_size = 8190

forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")

# The heartbeat file lives in memory: a slow or read-only disk cannot stall the workers.
if os.path.isdir("/dev/shm"):
    worker_tmp_dir = "/dev/shm"

# One line per request on stdout, unless WHARF_ACCESS_LOG is false; as `wharf serve`'s,
# the path without the query string (``%(U)s``, not the request line ``%(r)s``): a query
# may carry a secret.
accesslog = "-" if read_setting("access_log") else None
errorlog = "-"
# gunicorn's own lines (error log, access log) in Wharf's format: JSON lines by default
# (WHARF_LOG_FORMAT, docs/operations.md "Logs").
logger_class = "wharfd.gunicorn_logs.GunicornLogger"
loglevel = (os.environ.get("WHARF_LOG_LEVEL") or "info").lower()
access_log_format = ('%(h)s "%(m)s %(U)s %(H)s" %(s)s %(B)s %(M)sms '
                     'rid=%({x-request-id}o)s ua="%(a)s"')
proc_name = "wharf-api"
# No control socket under $HOME (gunicorn >= 27; older versions ignore the name).
control_socket_disable = True


def on_starting(server: Arbiter) -> None:
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
        for path in glob.glob(os.path.join(directory, "*.db")):
            os.remove(path)


def child_exit(server: Arbiter, worker: Worker) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(worker.pid)


def pre_request(worker: Worker, req: Request) -> None:
    # ``Expect: 100-continue`` is answered on the first body read (api/expect_continue.py);
    # ``wharf api`` installs the same hook without this file.
    from api.expect_continue import defer_100_continue
    defer_100_continue(worker, req)


def post_worker_init(worker: Worker) -> None:
    # This worker's heartbeat row (wharf.observability.heartbeats; ``wharf api`` installs the
    # same hook without this file; starting it twice is a no-op).
    from wharfd.wsgi import start_heartbeat
    start_heartbeat(worker)


def worker_exit(server: Arbiter, worker: Worker) -> None:
    from wharfd.wsgi import stop_heartbeat
    stop_heartbeat(worker)
