"""What ``wharf-client`` prints, shared by its verbs (``wharfclient.cli`` and
``wharfclient.cli_exchange``): results on stdout (one JSON document with ``--json``),
progress bars and spinners on stderr only when it is a terminal, one error line, exit
statuses, and the helpers around submitting and waiting for an operation."""
from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    TextColumn,
    TimeRemainingColumn,
    TransferSpeedColumn,
)

from wharfclient import transfer
from wharfclient.http import WharfClient

PROG = "wharf-client"
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_HTTP, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
#: C0 and C1 control characters (ESC, CSI, BEL, CR, ...) but newline.
_CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` without control characters (a server cannot drive the terminal);
    ``one_line``: newlines become spaces too."""
    text = _CONTROLS.sub("", text)
    return text.replace("\n", " ") if one_line else text


def error(text: str) -> None:
    """The one error line on stderr."""
    print(f"{PROG}: {printable(text, one_line=True)}", file=sys.stderr)


class Ui:
    """Where output goes: stdout for results, stderr for progress and notes."""

    def __init__(self, args: argparse.Namespace):
        self.as_json: bool = args.json
        self.quiet: bool = args.quiet
        self.err = Console(stderr=True)
        self.live = not (args.json or args.quiet) and self.err.is_terminal

    def result(self, doc: Any, text: str) -> None:
        if self.as_json:
            print(json.dumps(doc, indent=None, sort_keys=True))
        else:
            print(printable(text))

    def note(self, text: str) -> None:
        """A line on stderr (also with --json: stdout stays the one document)."""
        if not self.quiet:
            error(text)

    @contextmanager
    def bar(self, label: str) -> Iterator[transfer.Progress]:
        if not self.live:
            yield lambda _done, _total: None
            return
        with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(),
                      TransferSpeedColumn(), TimeRemainingColumn(), console=self.err,
                      transient=True) as prog:
            task = prog.add_task(escape(printable(label, one_line=True)), total=None)
            yield lambda done, total: prog.update(task, completed=done, total=total)

    @contextmanager
    def spinner(self, label: str) -> Iterator[None]:
        if not self.live:
            yield
            return
        with self.err.status(label):
            yield


def op_line(op: dict[str, Any]) -> str:
    err = op.get("error") or {}
    tail = f"  {err.get('code')}: {err.get('message')}" if err else ""
    return f"{op['id']}  {op['status']}{tail}"


def op_exit(op: dict[str, Any]) -> int:
    return EXIT_OK if op.get("status") == "completed" else EXIT_FAILED


def prefer_wait(args: argparse.Namespace) -> dict[str, str]:
    """The header that lets the submitting request itself wait (unless ``--no-wait``)."""
    return {} if args.no_wait else transfer.PREFER_WAIT


def waiting(ui: Ui, args: argparse.Namespace,
             what: str) -> contextlib.AbstractContextManager[None]:
    """The spinner while a submitting request may wait (``Prefer: wait``)."""
    return contextlib.nullcontext() if args.no_wait else ui.spinner(f"{what} and waiting")


def wait_or_return(client: WharfClient, ui: Ui, op: dict[str, Any],
                    args: argparse.Namespace) -> dict[str, Any]:
    if op.get("done") or args.no_wait:
        return op
    with ui.spinner(f"waiting for operation {op['id']}"):
        return transfer.wait_operation(client, op["id"])


def suggested_name(filename: str, fallback: str) -> str:
    """The server's file name as a plain name in the current directory: no directory
    part, no control characters, not ``.``/``..`` (else ``fallback``)."""
    name = printable(Path(filename.replace("\\", "/")).name, one_line=True).strip()
    return fallback if name in ("", ".", "..") else name
