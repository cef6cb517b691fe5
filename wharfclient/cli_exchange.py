"""``wharf-client import``, ``export`` and ``takeout``: Office files in and out.

Rules (beside ``wharfclient.cli``'s):
- ``import FILE``: the file's bytes go into an upload session in the target folder (the
  resumable upload's PUT, with its progress bar; ``--resume SESSION`` continues an
  interrupted one), and the import takes that session (``POST /api/imports`` with
  ``upload_session_id``; ``wharfclient.exchange``: one Idempotency-Key derived from the
  session). No blob resource is made: the server deletes the uploaded bytes once the
  import is done, completed or failed, so nothing is left to trash.
- ``export UNIT`` and ``takeout``: submit, wait (spinner), download the file with a
  progress bar (resumable, checked against the result's size and SHA-256), print its
  path. Without ``-o`` the file is named after the server's suggestion (reduced to a plain
  name in the current directory); ``-o DIR`` puts it there. An existing file is replaced
  only with ``--force``. ``fetch OPERATION`` waits for an export or takeout submitted
  earlier (``--no-wait``, or interrupted: the hint names it) and downloads its file; run
  again after an interruption it resumes ``PATH.part``. All three share
  :func:`_download_result`.
- A failed operation exits 1 with one error line naming its code; the result (stdout)
  still shows the operation.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from wharfclient import exchange, transfer
from wharfclient.config import ConfigError
from wharfclient.http import ApiError, WharfClient
from wharfclient.ui import (
    EXIT_FAILED,
    EXIT_OK,
    PROG,
    Ui,
    error,
    op_line,
    suggested_name,
    wait_or_return,
    waiting,
)

Verb = Callable[[str, str], argparse.ArgumentParser]


def _failed(what: str, op: dict[str, Any]) -> int:
    err = op.get("error") or {}
    error(f"{what} failed: {err.get('message') or op.get('status')} "
          f"({err.get('code') or 'failed'})")
    return EXIT_FAILED


# --- import ------------------------------------------------------------------------------------

def cmd_import(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.is_file():
        raise ConfigError(f"{path}: not a file")
    with path.open("rb") as f:
        session = _upload(client, ui, args, f, path)
    doc: dict[str, Any] = {"upload_session_id": session["id"], "operation": None}
    try:
        with waiting(ui, args, "importing"):
            op = exchange.submit_import(client, upload_session_id=session["id"],
                                        space_id=args.space, parent_id=args.parent,
                                        name=args.name or path.stem, unit_type=args.type,
                                        wait=not args.no_wait)
    except ApiError as exc:
        if exc.code == "idempotency_key_reused":  # a --resume rerun that asks for another
            raise ApiError(exc.status, exc.title, "this upload was already imported with "
                           "other options; rerun with the same --space, --parent, --name "
                           "and --type", exc.code) from None
        raise
    try:
        op = wait_or_return(client, ui, op, args)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; the import goes on: {PROG} wait {op['id']}",
              file=sys.stderr)
        raise
    doc["operation"] = op
    if op.get("status") == "completed":
        r = op["result"]
        ui.result(doc, f"{op_line(op)}  unit {r['unit_id']}  resource {r['resource_id']}  "
                       f"node {r['node_id']}")
        return EXIT_OK
    ui.result(doc, op_line(op))
    return _failed("import", op) if op.get("done") else EXIT_OK


def _upload(client: WharfClient, ui: Ui, args: argparse.Namespace, f: BinaryIO,
            path: Path) -> dict[str, Any]:
    """An upload session in the import's target folder holding the file (its content PUT
    unless a resumed session has it already): the session."""
    size = f.seek(0, os.SEEK_END)
    if args.resume:
        session: dict[str, Any] = client.json("GET",
                                              f"/api/blob-upload-sessions/{args.resume}")
        if int(session["size"]) != size:
            raise ConfigError(f"session {args.resume} expects {session['size']} bytes, "
                              f"the file has {size}")
    else:
        session = transfer.create_session(client, space_id=args.space, filename=path.name,
                                          size=size, parent_id=args.parent)
    ui.note(f"upload session {session['id']} (after an interruption: --resume "
            f"{session['id']})")
    if session["state"] != "waiting_for_upload":  # resumed: the bytes are there already
        return session
    try:
        with ui.bar(path.name) as progress:
            transfer.put_session_content(client, session, f, progress)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted; finish with: {PROG} import {args.path} --space "
              f"{args.space} --resume {session['id']} (and the same options)",
              file=sys.stderr)
        raise
    return session


# --- export and takeout ------------------------------------------------------------------------

def cmd_export(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    if args.sheet is not None and args.format != "csv":
        raise ConfigError("--sheet is for --format csv (an XLSX holds every sheet)")
    with waiting(ui, args, "exporting"):
        op = exchange.submit_export(client, args.unit, args.format, sheet=args.sheet,
                                    wait=not args.no_wait)
    return _download_result(client, ui, args, op, "export",
                            fallback=f"{args.unit}.{args.format}")


def cmd_fetch(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    op: dict[str, Any] = client.json("GET", f"/api/operations/{args.operation}")
    return _download_result(client, ui, args, op, str(op.get("kind") or "export"),
                            fallback=f"export-{args.operation}")


def cmd_takeout(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    route = exchange.takeout_path(args.space)
    try:
        with waiting(ui, args, "starting the takeout"):
            op = exchange.submit_takeout(client, args.space, wait=not args.no_wait)
    except ApiError as exc:
        if exc.status == 404 and not exc.detail:  # the route itself is missing
            raise ApiError(404, exc.title, f"this server has no POST {route} (takeout is "
                           "not deployed there)", exc.code) from None
        raise
    return _download_result(client, ui, args, op, "takeout",
                            fallback=f"takeout-{args.space or 'me'}.zip")


def _download_result(client: WharfClient, ui: Ui, args: argparse.Namespace,
                     op: dict[str, Any], what: str, *, fallback: str) -> int:
    """Wait for an export-shaped operation (``export_id``, ``content_url``, ``size``,
    ``sha256``, ``expires_at``), then download its file and print the path."""
    try:
        return _wait_and_download(client, ui, args, op, what, fallback=fallback)
    except KeyboardInterrupt:
        if not args.no_wait:
            print(f"{PROG}: interrupted; the {what} goes on; download its file with: {PROG} "
                  f"fetch {op['id']}" + (f" -o {args.output}" if args.output else ""),
                  file=sys.stderr)
        raise


def _wait_and_download(client: WharfClient, ui: Ui, args: argparse.Namespace,
                       op: dict[str, Any], what: str, *, fallback: str) -> int:
    op = wait_or_return(client, ui, op, args)
    if not op.get("done"):  # --no-wait
        ui.result({"operation": op, "path": None}, op_line(op))
        return EXIT_OK
    if op.get("status") != "completed":
        ui.result({"operation": op, "path": None}, op_line(op))
        return _failed(what, op)
    result = op.get("result") or {}
    if "content_url" not in result:
        raise ConfigError(f"operation {op['id']} is {op.get('kind')}, not an export or "
                          "takeout: it has no file to download")
    out = _output_path(client, args, result, fallback)
    try:
        with ui.bar(out.name) as progress:
            got = exchange.fetch_export(client, result, out, progress, overwrite=args.force)
    except FileExistsError:
        raise ConfigError(f"{out} exists; pass --force to overwrite it") from None
    ui.result({"operation": op, **got}, str(out))
    return EXIT_OK


def _output_path(client: WharfClient, args: argparse.Namespace, result: dict[str, Any],
                 fallback: str) -> Path:
    """``-o FILE``; ``-o DIR`` or nothing: the server's file name there (or here)."""
    given = Path(args.output) if args.output else None
    if given is not None and not given.is_dir():
        return given
    name = suggested_name(exchange.suggested_filename(client, result) or fallback, fallback)
    return (given or Path()) / name


# --- parsing -----------------------------------------------------------------------------------

def add_verbs(verb: Verb) -> None:
    p = verb("import", "upload an Office or CSV file and import it as a sheet, doc or slide")
    p.add_argument("path", metavar="FILE")
    p.add_argument("--space", required=True, help="space id")
    p.add_argument("--parent", help="folder node id (default: the space's root)")
    p.add_argument("--name", help="the new resource's name (default: FILE's name without "
                                  "its extension)")
    p.add_argument("--type", choices=exchange.IMPORT_UNIT_TYPES,
                   help="the unit type expected (default: the file decides); a file of "
                        "another kind fails with unsupported_format")
    p.add_argument("--resume", metavar="SESSION", help="continue this upload session")
    p.add_argument("--no-wait", action="store_true",
                   help="print the import operation, do not wait")
    p.set_defaults(func=cmd_import)

    p = verb("export", "export a sheet, doc or slide unit to an Office file and download it")
    p.add_argument("unit", metavar="UNIT_ID")
    p.add_argument("--format", required=True, choices=exchange.EXPORT_FORMATS)
    p.add_argument("--sheet", metavar="NAME", help="csv: the sheet (its id or name; "
                                                   "default the first)")
    _download_flags(p)
    p.set_defaults(func=cmd_export)

    p = verb("takeout", "export a whole space (or everything you own) as a zip and "
                        "download it")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--space", help="a space id (owner or admin)")
    which.add_argument("--me", action="store_true", help="everything you own")
    _download_flags(p)
    p.set_defaults(func=cmd_takeout)


    p = verb("fetch", "wait for an export or takeout operation, then download its file "
                      "(resumes PATH.part)")
    p.add_argument("operation", metavar="OPERATION")
    _download_flags(p, no_wait=False)
    p.set_defaults(func=cmd_fetch, no_wait=False)


def _download_flags(p: argparse.ArgumentParser, *, no_wait: bool = True) -> None:
    p.add_argument("-o", "--output", metavar="PATH",
                   help="the file (or a directory for the server's file name)")
    p.add_argument("--force", action="store_true", help="replace PATH if it exists")
    if no_wait:
        p.add_argument("--no-wait", action="store_true",
                       help=f"print the operation, do not wait or download (later: {PROG} "
                            "fetch OPERATION)")
