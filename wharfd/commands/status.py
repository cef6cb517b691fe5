"""The status listings: ``wharf sweeps``, ``wharf deletion-jobs``, ``wharf processes``."""
from __future__ import annotations

import argparse
import json
import sys

from wharf.infra.settings import ConfigError
from wharfd.commands.preflight import opened, settings_from_args


def cmd_sweeps(args: argparse.Namespace) -> int:
    """Every schedule with its period or cron, last run (status, counts) and next run."""
    from wharf.infra.clock import iso
    from wharf.retention.schedule import Scheduler
    settings = settings_from_args(args)
    with opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        rows = Scheduler(db, settings, "cli").status()
    print(f"{'schedule':28} {'every / cron':16} {'last tick':22} {'status':8} "
          f"{'next tick':22} counts")
    for r in rows:
        print(f"{r['schedule']:28} {r['spec']:16} {iso(r['last_tick']) or '-':22} "
              f"{r['last_status'] or '-':8} {iso(r['next_tick']):22} "
              f"{json.dumps(r['last_counts']) if r['last_counts'] else '-'}")
    return 0


def cmd_deletion_jobs(args: argparse.Namespace) -> int:
    """Object deletion jobs that have been failing for longer than --failing-for seconds."""
    from datetime import timedelta

    from wharf.deletion import service as deletion
    from wharf.infra.clock import iso
    settings = settings_from_args(args)
    with opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        jobs = deletion.failing_jobs(db, timedelta(seconds=args.failing_for))
    for job in jobs:
        print(json.dumps({"object_key": job.object_key, "reason": job.reason,
                          "attempts": job.attempts, "created_at": iso(job.created_at),
                          "next_attempt_at": iso(job.next_attempt_at),
                          "last_error": job.last_error}))
    print(f"wharf: {len(jobs)} deletion job(s) failing for more than {args.failing_for}s",
          file=sys.stderr)
    return 1 if jobs else 0


def cmd_processes(args: argparse.Namespace) -> int:
    """Wharf processes whose heartbeat was seen within --within seconds, newest first (stopped
    ones too, with their ``stopped_at``): a table, or one JSON object a line (``--json``)."""
    from datetime import timedelta

    from wharf.observability import heartbeats
    settings = settings_from_args(args)
    widest = int(heartbeats.MAX_WINDOW.total_seconds())
    if not 1 <= args.within <= widest:
        raise ConfigError(f"--within {args.within}: expected a number of seconds between 1 "
                          f"and {widest}")
    with opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        beats = heartbeats.recent(db, timedelta(seconds=args.within))
    rows = [{**beat.as_json(), "state": beat.state(settings.heartbeat_seconds)}
            for beat in beats]
    if args.json:
        for row in rows:
            print(json.dumps(row))
    elif rows:
        print(f"{'role':10} {'state':8} {'host':24} {'pid':>7} {'last seen':22} "
              f"{'started':22} {'stopped':22} version")
        for row in rows:
            print(f"{row['role']:10} {row['state']:8} {row['hostname'][:24]:24} "
                  f"{row['pid']:>7} {row['last_seen_at']:22} {row['started_at']:22} "
                  f"{row['stopped_at'] or '-':22} {row['version']}")
    states = [row["state"] for row in rows]
    print(f"wharf: {len(rows)} process(es) seen in the last {args.within}s, "
          f"{states.count('running')} running", file=sys.stderr)
    return 0
