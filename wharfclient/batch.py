"""``wharf-client create-many``: many small jobs through the batch route
(``POST /api/operations:batch``): up to :data:`BATCH_SIZE` submissions per request, one
transaction each on the server, every item with its own Idempotency-Key.

The keys are chosen once per item, before the first request: a batch the client sends
again (a lost answer, a retried request) is answered with the same operations (replays),
never recorded twice. Each item has its own answer: an operation (then waited for, unless
``--no-wait``) or a problem, printed on its line. Exit 0 when every item's operation
completed (or, with ``--no-wait``, was accepted); 1 when one failed or was refused.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from wharfclient import transfer
from wharfclient.config import ConfigError
from wharfclient.http import WharfClient, new_key
from wharfclient.ui import EXIT_FAILED, EXIT_OK, Ui, op_line, printable

#: Items per request: the server's limit (its OpenAPI ``BatchRequest.items.maxItems``).
BATCH_SIZE = 100
PATH = "/api/operations:batch"
Verb = Callable[[str, str], argparse.ArgumentParser]


def submit_batches(client: WharfClient, items: list[dict[str, Any]],
                   size: int = BATCH_SIZE) -> list[dict[str, Any]]:
    """Submit ``items`` (``kind``, ``input``; an ``idempotency_key`` is added to each that
    has none) ``size`` at a time; the server's answers, one per item, in order."""
    for item in items:
        item.setdefault("idempotency_key", new_key())
    answers: list[dict[str, Any]] = []
    for start in range(0, len(items), size):
        page = client.json("POST", PATH, json={"items": items[start:start + size]})
        answers.extend(page["items"])
    return answers


def _names(args: argparse.Namespace) -> list[str]:
    names: list[str] = list(args.names)
    if args.from_file:
        lines: Iterable[str] = sys.stdin if args.from_file == "-" \
            else Path(args.from_file).read_text(encoding="utf-8").splitlines()
        names += [line.rstrip("\n") for line in lines if line.strip()]
    if not names:
        raise ConfigError("no names: give NAME arguments or --from-file")
    return names


def _line(name: str, answer: dict[str, Any]) -> str:
    if "operation" in answer:
        return f"{printable(name, one_line=True)}: {op_line(answer['operation'])}"
    problem = answer.get("problem") or {}
    return (f"{printable(name, one_line=True)}: refused {answer.get('status')} "
            f"{printable(str(problem.get('detail') or problem.get('title')), one_line=True)}"
            f" ({printable(str(problem.get('code')), one_line=True)})")


def cmd_create_many(client: WharfClient, ui: Ui, args: argparse.Namespace) -> int:
    names = _names(args)
    items = [{"kind": "create_resource",
              "input": {"space_id": args.space, "name": name, "unit_type": args.type,
                        "parent_id": args.parent}} for name in names]
    with ui.spinner(f"submitting {len(items)} creations"):
        answers = submit_batches(client, items)
    if not args.no_wait:
        with ui.spinner("waiting for the operations"):
            for answer in answers:
                op = answer.get("operation")
                if op is not None and not op.get("done"):
                    answer["operation"] = transfer.wait_operation(client, op["id"])
    ok = all("operation" in a and (args.no_wait or a["operation"].get("status") == "completed")
             for a in answers)
    ui.result(answers, "\n".join(_line(n, a) for n, a in zip(names, answers, strict=True)))
    return EXIT_OK if ok else EXIT_FAILED


def add_verbs(verb: Verb, unit_types: tuple[str, ...]) -> None:
    p = verb("create-many", "create many sheet or doc resources at once (batches of "
                            f"{BATCH_SIZE} in one request each)")
    p.add_argument("names", metavar="NAME", nargs="*")
    p.add_argument("--from-file", metavar="FILE", help="more names, one a line (- for stdin)")
    p.add_argument("--type", required=True, choices=unit_types)
    p.add_argument("--space", required=True)
    p.add_argument("--parent")
    p.add_argument("--no-wait", action="store_true",
                   help="print the operations, do not wait for them")
    p.set_defaults(func=cmd_create_many)
