"""The maintenance commands: ``wharf fsck``, ``wharf restore-check`` (after restoring a
backup), ``wharf space-owner`` and ``wharf user disable|enable|reset-password``."""
from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime

from wharf.infra.settings import ConfigError, Settings
from wharfd.commands.preflight import opened, settings_from_args

FSCK_COULD_NOT_CHECK = 3  # wharf fsck's exit status when a run fails midway
FSCK_REASON_CHARS = 500   # of the error, on its one line


def cmd_fsck(args: argparse.Namespace) -> int:
    """Compare the blob store and the unit store with the product database: one line per
    finding, then a summary; exit 0 if nothing was found, 1 if something was (or the run
    stopped at --max-seconds), 2 on a usage or configuration error, 3 if the check could
    not be done (a database or store error during the run: one line on stderr)."""
    from sqlalchemy.exc import SQLAlchemyError

    from storage.blobstore import blob_store_from_url
    from storage.errors import StorageError
    from storage.unitstore import UnitStore
    from wharf.fsck import Finding, OutOfOrder, check_grace, run_fsck
    from wharfd import capabilities  # noqa: F401  (every kind: what open operations reference)
    for flag, value, least in (("--max-findings", args.max_findings, 0),
                               ("--page-size", args.page_size, 1)):
        if value < least:
            raise ConfigError(f"{flag} {value}: expected at least {least}")
    if args.max_seconds is not None and not args.max_seconds > 0:
        raise ConfigError(f"--max-seconds {args.max_seconds}: expected a number of seconds "
                          "greater than 0")
    settings = settings_from_args(args)
    check_grace(settings)

    def emit(finding: Finding) -> None:
        print(json.dumps(finding.as_json()) if args.json else finding.as_text(), flush=True)

    with (opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db,
          opened(settings.unitstore_url, "WHARF_UNITSTORE_URL", settings) as units_db):
        try:
            store = blob_store_from_url(settings.blob_store_url,
                                        endpoint_url=settings.s3_endpoint_url,
                                        region=settings.s3_region)
            report = run_fsck(db, store, UnitStore(units_db), settings, repair=args.repair,
                              max_findings=args.max_findings, max_seconds=args.max_seconds,
                              page_size=args.page_size, emit=emit)
        except (StorageError, OutOfOrder, SQLAlchemyError, OSError) as exc:
            reason = " ".join(str(exc).split())[:FSCK_REASON_CHARS]
            print(f"wharf fsck: could not check: {type(exc).__name__}: {reason}",
                  file=sys.stderr)
            return FSCK_COULD_NOT_CHECK
    summary = report.summary()
    if args.json:
        print(json.dumps({"summary": summary}))
    else:
        print("fsck: " + ", ".join(f"{n} {kind.replace('_', ' ')}(s)"
                                    for kind, n in report.counts.items())
              + f"; {report.repairs_queued} deletion(s) queued"
              + ("" if not report.truncated else
                 f"; only the first {report.listed} listed (--max-findings)")
              + ("" if report.complete else "; STOPPED at --max-seconds: incomplete"))
    return 1 if report.total or not report.complete else 0


RESTORE_CHECK_FAILED = 3  # wharf restore-check's exit status when the replay could not run


def _since(raw: str) -> datetime:
    """``--since``: an ISO 8601 time (UTC when it names no offset)."""
    from datetime import UTC
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise ConfigError(f"--since {raw!r}: expected an ISO 8601 time such as "
                          "2026-12-01T00:00:00Z") from None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def cmd_restore_check(args: argparse.Namespace) -> int:
    """After restoring a backup: replay the deletion ledger recorded since --since (the
    backup's time, or earlier) — accounts deleted again, objects queued for deletion
    again, every login session and API token revoked; one JSON report on stdout. Exit 0
    when done, 2 on a usage or configuration error, 3 if it could not run (the ledger or
    the database did not answer: one line on stderr; run it again)."""
    from sqlalchemy.exc import SQLAlchemyError

    from storage.blobstore import blob_store_from_url
    from storage.errors import StorageError
    from wharf.accounts import service as accounts
    since = _since(args.since)
    settings = settings_from_args(args)
    with opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        try:
            store = blob_store_from_url(settings.blob_store_url,
                                        endpoint_url=settings.s3_endpoint_url,
                                        region=settings.s3_region)
            report = accounts.restore_check(db, store, settings, since, dry_run=args.dry_run)
        except (StorageError, SQLAlchemyError, OSError, ValueError) as exc:
            reason = " ".join(str(exc).split())[:FSCK_REASON_CHARS]
            print(f"wharf restore-check: could not replay: {type(exc).__name__}: {reason}",
                  file=sys.stderr)
            return RESTORE_CHECK_FAILED
    print(json.dumps(report.as_json()))
    print(f"wharf restore-check: {report.accounts_redeleted} account(s) deleted again, "
          f"{report.objects_requeued} object deletion(s) queued again, "
          f"{report.sessions_revoked} session(s) and {report.tokens_revoked} token(s) revoked"
          + (" (dry run: nothing changed)" if args.dry_run else ""), file=sys.stderr)
    return 0


def cmd_space_owner(args: argparse.Namespace) -> int:
    """Give a team space an owner (one left read-only by its owner's account deletion)."""
    from wharf.accounts import service as accounts
    from wharf.infra.errors import NotFound
    settings = settings_from_args(args)
    with opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        try:
            accounts.give_owner(db, args.space_id, args.username)
        except NotFound as exc:
            print(f"wharf space-owner: {exc}", file=sys.stderr)
            return 1
    print(f"wharf: space {args.space_id} is owned by {args.username} and writable",
          file=sys.stderr)
    return 0


def cmd_user(args: argparse.Namespace) -> int:
    """``wharf user disable|enable NAME``: refuse (or allow again) the user's every request;
    ``wharf user reset-password NAME``: set their password (never from the command line)."""
    from wharf.accounts.disabling import set_disabled
    from wharf.infra.errors import Conflict, NotFound
    settings = settings_from_args(args)
    if args.action == "reset-password":
        return _reset_password(args, settings)
    disable = args.action == "disable"
    with opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        try:
            changed = set_disabled(db, args.username, disable)
        except (NotFound, Conflict) as exc:
            print(f"wharf user {args.action}: {exc}", file=sys.stderr)
            return 1
    state = "disabled" if disable else "active"
    print(f"wharf: user {args.username} is {state}" + ("" if changed else " (already)"),
          file=sys.stderr)
    return 0


def _read_new_password(username: str) -> str | None:
    """The new password: typed twice at a terminal (not echoed), else the first line of
    standard input. None (with a line on stderr) when there is none or the two differ."""
    import getpass
    if sys.stdin.isatty():
        first = getpass.getpass(f"New password for {username}: ")
        if getpass.getpass("Again: ") != first:
            print("wharf user reset-password: the passwords differ", file=sys.stderr)
            return None
        return first
    line = sys.stdin.readline()
    password = line[:-1] if line.endswith("\n") else line
    if not password:
        print("wharf user reset-password: no password on standard input", file=sys.stderr)
        return None
    return password


def _reset_password(args: argparse.Namespace, settings: Settings) -> int:
    from wharf.identity.passwords import operator_reset
    from wharf.identity.service import Identity
    from wharf.infra.errors import Conflict, NotFound, ValidationFailed
    password = _read_new_password(args.username)
    if password is None:
        return 1
    with opened(settings.database_url, "WHARF_DATABASE_URL", settings) as db:
        try:
            ended = operator_reset(Identity(settings), db, args.username, password)
        except (NotFound, Conflict, ValidationFailed) as exc:
            print(f"wharf user reset-password: {exc}", file=sys.stderr)
            return 1
    print(f"wharf: user {args.username} has a new password; {ended} login session(s) ended",
          file=sys.stderr)
    return 0
