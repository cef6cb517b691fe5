"""``wharf-client``: the command line over ``wharfclient``.

Rules:
- One JSON document on stdout per command with ``--json``; otherwise short human lines.
  Progress bars and spinners go to stderr and only when it is a terminal (or never with
  ``--json``/``--quiet``).
- Errors are one line on stderr: ``wharf-client: <title>: <detail> (<code>)``.
- Exit status (EXIT_*): 0 ok; 1 an operation finished ``failed`` (``wait``, ``upload``,
  ``create``, ``replace``, ``import``, ``export``, ``takeout``, ``fetch``) or an item of
  ``create-many`` failed or was refused; 2 usage or configuration; 3 an HTTP error
  answer, a server that cannot be reached, an answer that is not JSON or cannot be
  decoded, or a local file error (OSError: cannot write ``-o``,
  disk full) — never a traceback; 130 interrupted (Ctrl-C), after saying how to finish
  the work.
- Text from the server is never printed raw: control characters (terminal escape codes)
  are removed from every line written (``printable``), and a file name the server
  suggests for ``download`` (and ``export``, ``takeout``, ``fetch``) is reduced to a
  plain name in the current directory; an existing file is replaced only with
  ``--force``.
- ``upload -`` spools stdin to a temporary file first (the size must be declared and a
  restarted PUT must send the bytes again); it therefore cannot be ``--resume``d later.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

import httpx

from wharfclient import batch, cli_exchange, login, state_changes, transfer
from wharfclient import watch as watching
from wharfclient.config import ConfigError, load_config, profile_name, save_profile
from wharfclient.http import DEFAULT_RETRIES, ApiError, Unreachable, WharfClient, new_key
from wharfclient.ui import (
    EXIT_FAILED,
    EXIT_HTTP,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    Ui,
    error,
    printable,
)
from wharfclient.ui import op_exit as _op_exit
from wharfclient.ui import op_line as _op_line
from wharfclient.ui import prefer_wait as _prefer_wait
from wharfclient.ui import suggested_name as _suggested_name
from wharfclient.ui import wait_or_return as _wait_or_return
from wharfclient.ui import waiting as _waiting

__all__ = ["EXIT_FAILED", "EXIT_HTTP", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "PROG",
           "Ui", "build_parser", "error", "main", "printable"]

UNIT_TYPES = ("sheet", "doc")


# --- verbs -------------------------------------------------------------------------------------

def cmd_upload(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    if args.path == "-":
        if args.resume:
            raise ConfigError("--resume needs the file itself, not stdin")
        with tempfile.TemporaryFile() as spool:
            shutil.copyfileobj(sys.stdin.buffer, spool, transfer.CHUNK)
            return _upload(client, ui, args, spool, args.name or "stdin")
    path = Path(args.path)
    if not path.is_file():
        raise ConfigError(f"{path}: not a file")
    with path.open("rb") as f:
        return _upload(client, ui, args, f, args.name or path.name)


def _upload(client: WharfClient, ui: Ui, args: argparse.Namespace, f: BinaryIO,
            name: str) -> int:
    size = f.seek(0, os.SEEK_END)
    if args.resume:
        session = client.json("GET", f"/api/blob-upload-sessions/{args.resume}")
        if int(session["size"]) != size:
            raise ConfigError(f"session {args.resume} expects {session['size']} bytes, "
                              f"the file has {size}")
    else:
        if not args.space:
            raise ConfigError("upload needs --space (or --resume SESSION)")
        session = transfer.create_session(client, space_id=args.space, filename=name,
                                          size=size, parent_id=args.parent)
    ui.note(f"upload session {session['id']} (after an interruption: "
            f"--resume {session['id']})")
    try:
        with ui.bar(name) as progress:
            op = transfer.finish_upload(client, session, f, progress)
    except KeyboardInterrupt:
        if args.path != "-":
            print(f"{PROG}: interrupted; finish with: {PROG} upload {args.path} "
                  f"--resume {session['id']}", file=sys.stderr)
        raise
    ui.result({"session_id": session["id"], "operation": op}, _op_line(op) + (
        f"  resource {op['result']['resource_id']}" if op.get("status") == "completed"
        else ""))
    return _op_exit(op)


def cmd_create(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    with _waiting(ui, args, "creating"):
        op = client.json("POST", "/api/resources", key=new_key(), json={
            "space_id": args.space, "name": args.name, "unit_type": args.type,
            "parent_id": args.parent}, headers=_prefer_wait(args))
    op = _wait_or_return(client, ui, op, args)
    ui.result(op, _op_line(op))
    return _op_exit(op) if op.get("done") else EXIT_OK


def cmd_replace(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    path = Path(args.path)
    if not path.is_file():
        raise ConfigError(f"{path}: not a file")
    meta = transfer.blob_meta(client, args.resource)
    key = new_key()
    with path.open("rb") as f, ui.bar(path.name) as progress:
        size = f.seek(0, os.SEEK_END)
        op = client.json("PUT", f"/api/blob-resources/{args.resource}/content", key=key,
                         headers={"If-Match": meta["etag"], "Content-Length": str(size),
                                  "Content-Type": "application/octet-stream",
                                  **_prefer_wait(args)},
                         content=lambda: transfer.file_chunks(f, size, progress))
    op = _wait_or_return(client, ui, op, args)
    ui.result(op, _op_line(op))
    return _op_exit(op) if op.get("done") else EXIT_OK


def cmd_download(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    if args.output:
        out = Path(args.output)
    else:
        meta = transfer.blob_meta(client, args.resource)
        out = Path(_suggested_name(str(meta["filename"]), args.resource))
    try:
        with ui.bar(out.name) as progress:
            got = transfer.download(client, args.resource, out, progress,
                                    overwrite=args.force)
    except FileExistsError:
        raise ConfigError(f"{out} exists; pass --force to overwrite it") from None
    ui.result(got, f"{out}  {got['size']} bytes  sha256 {got['sha256']}")
    return EXIT_OK


def cmd_watch(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    params = watching.subscription(args.space, args.unit, args.operations, args.worktrees)
    if not params:
        error("watch what? --space, --unit, --operations or --worktrees")
        return EXIT_USAGE

    def emit(event: dict[str, Any]) -> None:
        print(json.dumps(event) if args.json else printable(watching.line(event)),
              flush=True)

    watching.watch(client, params, emit, cursor=args.cursor, note=ui.note)
    return EXIT_OK


def cmd_trash(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    batch = state_changes.trash(client, args.node, ui.note)
    ui.result(batch, f"trash batch {batch['id']}  ({batch['node_count']} nodes); "
                     f"undo: {PROG} restore {batch['id']}")
    return EXIT_OK


def cmd_restore(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    res = state_changes.restore(client, args.batch, ui.note)
    count = "the" if res["restored_nodes"] is None else res["restored_nodes"]
    ui.result(res, f"restored {count} nodes of batch {res['id']}")
    return EXIT_OK


def cmd_wait(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    ops = []
    for op_id in args.operations:
        with ui.spinner(f"waiting for operation {op_id}"):
            ops.append(transfer.wait_operation(client, op_id, timeout=args.timeout))
    ui.result(ops, "\n".join(_op_line(op) for op in ops))
    return EXIT_OK if all(op.get("status") == "completed" for op in ops) else EXIT_FAILED


def cmd_ops(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    params = {k: v for k, v in (("status", args.status), ("kind", args.kind),
                                ("limit", args.limit), ("cursor", args.cursor)) if v}
    page = client.json("GET", "/api/operations", params=params)
    lines = [f"{op['id']}  {op['kind']:<24} {op['status']:<10} {op['created_at']}"
             for op in page["items"]]
    if page.get("next_cursor"):
        lines.append(f"(more: --cursor {page['next_cursor']})")
    ui.result(page, "\n".join(lines) or "(no operations)")
    return EXIT_OK


def cmd_retry(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    op = state_changes.retry(client, args.operation, ui.note)
    ui.result(op, _op_line(op))
    return EXIT_OK


def cmd_cancel(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    op = state_changes.cancel(client, args.operation, ui.note)
    ui.result(op, _op_line(op))
    return EXIT_OK


def cmd_login(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    def show(started: dict[str, Any]) -> None:
        print(f"To log in, open  {printable(str(started['verification_uri']), one_line=True)}\n"
              f"and enter the code  {printable(str(started['user_code']), one_line=True)}\n"
              f"(or open {printable(str(started['verification_uri_complete']), one_line=True)})"
              f"\nWaiting for approval ({int(started['expires_in']) // 60} minutes)...",
              file=sys.stderr, flush=True)

    issued = login.device_login(client, args.server_url, show, client_name=args.name)
    name = profile_name(args.profile)
    path = save_profile(name, args.server_url, str(issued["access_token"]))
    if args.profile is None and (os.environ.get("WHARF_URL") or os.environ.get("WHARF_TOKEN")):
        ui.note(f"WHARF_URL/WHARF_TOKEN are set and win over profile {name!r}: unset them "
                "to use it")
    user = issued.get("user") or {}
    ui.result({"user": user, "session_id": issued.get("session_id"),
               "expires_in": issued.get("expires_in"), "profile": name, "config": str(path)},
              f"logged in as {user.get('username')}; saved as profile {name!r} in {path}")
    return EXIT_OK


# --- parsing -----------------------------------------------------------------------------------

def _common(*, top: bool) -> argparse.ArgumentParser:
    """The flags every verb accepts, before or after the verb. After it, their defaults
    are SUPPRESS: a verb's parser must not overwrite what was given before the verb."""
    common = argparse.ArgumentParser(add_help=False)

    def default(value: object) -> object:
        return value if top else argparse.SUPPRESS

    common.add_argument("--url", default=default(None),
                        help="server base URL (else WHARF_URL, else the profile)")
    common.add_argument("--token", default=default(None),
                        help="API token (else WHARF_TOKEN, else the profile)")
    common.add_argument("--profile", default=default(None),
                        help="profile in ~/.config/wharf/client.toml "
                             "(else WHARF_PROFILE, else 'default')")
    common.add_argument("--json", action="store_true", default=default(False),
                        help="print one JSON document on stdout")
    common.add_argument("-q", "--quiet", action="store_true", default=default(False),
                        help="no progress output, no retry notes")
    common.add_argument("--retries", type=int, default=default(DEFAULT_RETRIES),
                        help=f"retries of a request after a network error or "
                             f"429/5xx (default {DEFAULT_RETRIES})")
    return common


def build_parser() -> argparse.ArgumentParser:
    common = _common(top=False)
    parser = argparse.ArgumentParser(
        prog=PROG, parents=[_common(top=True)],
        description="Submit work to a Wharf server and wait for it. Exit status: 0 ok, "
                    "1 an operation failed, 2 usage/configuration, 3 HTTP error or server "
                    "unreachable, 130 interrupted.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def verb(name: str, help_: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, help=help_, parents=[common])

    p = verb("login", "log in through the browser (device login); store the credential "
                      "in the profile")
    p.add_argument("--name", help="how the approval page names this client "
                                  "(default: wharf-client on HOST)")
    p.set_defaults(func=cmd_login)

    p = verb("upload", "upload a file (PATH, or - for stdin) as a blob resource")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--space", help="space id")
    p.add_argument("--parent", help="folder node id (default: the space's root)")
    p.add_argument("--name", help="file name (default: PATH's name; 'stdin' for -)")
    p.add_argument("--resume", metavar="SESSION", help="continue this upload session")
    p.set_defaults(func=cmd_upload)

    p = verb("create", "create a sheet or doc resource")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--type", required=True, choices=UNIT_TYPES)
    p.add_argument("--space", required=True)
    p.add_argument("--parent")
    p.add_argument("--no-wait", action="store_true", help="print the operation, do not wait")
    p.set_defaults(func=cmd_create)

    p = verb("replace", "replace a blob resource's content with PATH")
    p.add_argument("resource", metavar="RESOURCE")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--no-wait", action="store_true")
    p.set_defaults(func=cmd_replace)

    p = verb("download", "download a blob resource (resumes FILE.part)")
    p.add_argument("resource", metavar="RESOURCE")
    p.add_argument("-o", "--output", metavar="FILE")
    p.add_argument("--force", action="store_true", help="replace FILE if it exists")
    p.set_defaults(func=cmd_download)

    batch.add_verbs(verb, UNIT_TYPES)
    cli_exchange.add_verbs(verb)

    p = verb("watch", "print the live change feed's events until interrupted")
    p.add_argument("--space", action="append", default=[], metavar="SPACE",
                   help="a space's tree, issues and worktrees (repeatable)")
    p.add_argument("--unit", action="append", default=[], metavar="UNIT",
                   help="a unit's revisions and comments (repeatable)")
    p.add_argument("--operations", action="store_true", help="my operations as they end")
    p.add_argument("--worktrees", action="store_true", help="worktrees I can discover")
    p.add_argument("--cursor", help="resume after this cursor")
    p.set_defaults(func=cmd_watch)

    p = verb("trash", "move a node (and what is below it) to the trash")
    p.add_argument("node", metavar="NODE")
    p.set_defaults(func=cmd_trash)

    p = verb("restore", "restore a trash batch")
    p.add_argument("batch", metavar="BATCH")
    p.set_defaults(func=cmd_restore)

    p = verb("wait", "wait for operations; exit 0 only if all completed")
    p.add_argument("operations", metavar="OPERATION", nargs="+")
    p.add_argument("--timeout", type=float, help="give up on each after this many seconds")
    p.set_defaults(func=cmd_wait)

    p = verb("ops", "list my operations, newest first")
    p.add_argument("--status", choices=("pending", "running", "completed", "failed"))
    p.add_argument("--kind")
    p.add_argument("--limit", type=int)
    p.add_argument("--cursor")
    p.set_defaults(func=cmd_ops)

    p = verb("retry", "retry a failed operation")
    p.add_argument("operation", metavar="OPERATION")
    p.set_defaults(func=cmd_retry)

    p = verb("cancel", "cancel a pending operation")
    p.add_argument("operation", metavar="OPERATION")
    p.set_defaults(func=cmd_cancel)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    ui = Ui(args)
    try:
        config = (login.target(args) if args.command == "login"
                  else load_config(url=args.url, token=args.token, profile=args.profile))
        args.server_url = config.url
        with WharfClient(config.url, config.token, retries=max(args.retries, 0),
                         on_retry=ui.note) as client:
            code: int = args.func(client, ui, args)
            return code
    except ConfigError as exc:
        error(str(exc))
        return EXIT_USAGE
    except ApiError as exc:
        error(exc.line())
        return EXIT_HTTP
    except Unreachable as exc:
        error(f"unreachable: {exc}")
        return EXIT_HTTP
    except json.JSONDecodeError as exc:  # a 2xx whose body is not JSON (a proxy's page)
        error(f"the server's answer is not JSON: {exc}")
        return EXIT_HTTP
    except httpx.HTTPError as exc:  # e.g. DecodingError: a body that cannot be decoded
        error(f"{type(exc).__name__}: {exc}")
        return EXIT_HTTP
    except OSError as exc:  # a local file: cannot write -o, disk full, unreadable
        error(str(exc))
        return EXIT_HTTP
    except KeyboardInterrupt:
        error("interrupted")
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    raise SystemExit(main())
