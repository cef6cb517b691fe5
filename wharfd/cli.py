"""The ``wharf`` command: serve, api, feed, worker, scheduler, sweeps, deletion-jobs, processes,
migrate, fsck, restore-check, space-owner, user.

Part of the composition root (:mod:`wharfd`): it runs the migrations, and each command
builds its process from :mod:`wharfd.runtime`, ``tasks`` and ``api``. Those (SQLAlchemy,
Alembic, Falcon, Dramatiq, boto3: about a second of imports) are imported inside the
command that needs them, so ``wharf --help`` and a configuration error answer at once.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys

from wharf.infra.settings import ConfigError
from wharfd.commands.api import cmd_api
from wharfd.commands.feed import cmd_feed
from wharfd.commands.maintenance import cmd_fsck, cmd_restore_check, cmd_space_owner, cmd_user
from wharfd.commands.preflight import StartupError
from wharfd.commands.processes import cmd_migrate, cmd_scheduler, cmd_serve, cmd_worker
from wharfd.commands.status import cmd_deletion_jobs, cmd_processes, cmd_sweeps

METRICS_PORT_HELP = ("serve /metrics and /healthz on this port (overrides WHARF_METRICS_PORT; "
                     "0 picks a free port)")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL")


def main(argv: list[str] | None = None) -> int:
    level = (os.environ.get("WHARF_LOG_LEVEL") or "INFO").strip().upper()
    if level not in LOG_LEVELS:
        print(f"wharf: configuration error: WHARF_LOG_LEVEL={os.environ['WHARF_LOG_LEVEL']!r}: "
              f"expected one of {', '.join(LOG_LEVELS)}", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(
        prog="wharf", description="Wharf, the document workspace backend: run the API, the "
        "live feed, the workers and the scheduler, migrate the databases, inspect sweeps "
        "and deletion jobs. "
        "Configured by WHARF_* environment variables (see README). Submitters use the "
        "client, wharf-client (docs/client.md).")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve", help="embedded mode: API, workers and scheduler in one process")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("--quiet", action="store_true",
                   help="no line per request (as WHARF_ACCESS_LOG=false)")
    p.set_defaults(func=cmd_serve)
    p = sub.add_parser("api", help="production API under gunicorn")
    p.add_argument("--host")
    p.add_argument("--port", type=int)
    p.add_argument("--workers", type=int, help="gunicorn worker processes (default 2)")
    p.add_argument("--threads", type=int, help="threads per worker (default 32)")
    p.set_defaults(func=cmd_api)
    p = sub.add_parser("feed", help="the live change feed (WebSocket and SSE at /api/feed) "
                       "under uvicorn")
    p.add_argument("--host")
    p.add_argument("--port", type=int, help="overrides WHARF_FEED_PORT (default 8081)")
    p.add_argument("--workers", type=int, help="uvicorn worker processes (default 1)")
    p.set_defaults(func=cmd_feed)
    p = sub.add_parser("worker", help="Dramatiq worker processes (Redis broker)")
    p.add_argument("--processes", type=int)
    p.add_argument("--threads", type=int)
    p.add_argument("--metrics-port", type=int, help=METRICS_PORT_HELP)
    p.set_defaults(func=cmd_worker)
    p = sub.add_parser("scheduler", help="retention sweeps on their schedule")
    p.add_argument("--metrics-port", type=int, help=METRICS_PORT_HELP)
    p.set_defaults(func=cmd_scheduler)
    p = sub.add_parser("sweeps", help="list the schedules with their last and next run")
    p.set_defaults(func=cmd_sweeps)
    p = sub.add_parser("deletion-jobs",
                       help="list object deletion jobs failing for long (exit 1 if any)")
    p.add_argument("--failing-for", type=int, default=86400, metavar="SECONDS",
                   help="only jobs failing for longer than this (default: one day)")
    p.set_defaults(func=cmd_deletion_jobs)
    p = sub.add_parser("processes",
                       help="list the Wharf processes seen recently (their heartbeats)")
    p.add_argument("--within", type=int, default=300, metavar="SECONDS",
                   help="only processes seen within this many seconds (default: 300)")
    p.add_argument("--json", action="store_true",
                   help="one JSON object a line (with details) instead of the table")
    p.set_defaults(func=cmd_processes)
    p = sub.add_parser("migrate", help="upgrade the databases to the code's schema")
    p.set_defaults(func=cmd_migrate)
    p = sub.add_parser("fsck", help="compare the blob and unit stores with the database "
                       "(exit 0 clean, 1 findings, 2 usage/configuration error, 3 could "
                       "not check: a database or store error during the run)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.add_argument("--repair", action="store_true",
                   help="queue the deletion of orphaned objects older than "
                   "WHARF_FSCK_GRACE_SECONDS (nothing else is ever repaired)")
    p.add_argument("--max-findings", type=int, default=10_000, metavar="N",
                   help="list (and repair) at most N findings; the counts go on "
                   "(default 10000)")
    p.add_argument("--max-seconds", type=float, default=None, metavar="SECONDS",
                   help="stop after this long, more than 0 (the summary says incomplete; "
                   "exit 1)")
    p.add_argument("--page-size", type=int, default=1000, metavar="N",
                   help="rows and keys read per request (default 1000)")
    p.set_defaults(func=cmd_fsck)
    p = sub.add_parser("restore-check",
                       help="after restoring a backup: replay the deletion ledger (exit 0 "
                       "done, 2 usage/configuration error, 3 could not run)")
    p.add_argument("--since", required=True, metavar="TIME",
                   help="the backup's time (ISO 8601, UTC unless it names an offset); "
                   "deletions recorded since then are replayed")
    p.add_argument("--dry-run", action="store_true", help="report only; change nothing")
    p.set_defaults(func=cmd_restore_check)
    p = sub.add_parser("space-owner",
                       help="give a team space an owner (one left read-only when its "
                       "owner's account was deleted)")
    p.add_argument("space_id")
    p.add_argument("username")
    p.set_defaults(func=cmd_space_owner)
    p = sub.add_parser("user", help="disable a user (every request refused, 403 "
                       "account_disabled; their operations wait), enable them again, or "
                       "reset-password (the new password read from standard input, or "
                       "prompted for on a terminal; every login session of theirs ends)")
    p.add_argument("action", choices=("disable", "enable", "reset-password"))
    p.add_argument("username")
    p.set_defaults(func=cmd_user)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    args = parser.parse_args(argv)
    try:
        from wharfd import logs  # JSON lines or text (WHARF_LOG_FORMAT), after --help
        logs.configure("WARNING" if level == "WARN" else level, logs.resolve(args.command))
        return args.func(args) or 0
    except ConfigError as exc:
        print(f"wharf: configuration error: {exc}", file=sys.stderr)
        return 2
    except StartupError as exc:
        print(f"wharf: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        if isinstance(exc, _refusals()):
            print(f"wharf: refusing to migrate: {exc}", file=sys.stderr)
            return 3
        raise


def _refusals() -> tuple[type[BaseException], ...]:
    """Exceptions that mean "this database must not be touched" (exit 3, no trace)."""
    from migrations.prepare import MigrationRefused
    from storage.unitschema import UnitStoreSchemaError
    return (MigrationRefused, UnitStoreSchemaError)


if __name__ == "__main__":
    sys.exit(main())
