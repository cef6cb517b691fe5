#!/usr/bin/env python
"""Cost of the log context on the operations hot path (wharf/observability/logctx.py), per operation.

A script, not a test. What the executor adds per operation of a batch: one
``bound_batch`` per batch (amortised over ``--batch`` operations), and per operation three
``bound_op`` scopes (perform, commit, and the outcome's handling when it fails; a
completed operation of a batch that commits at once has two: perform and commit). Each is
one ``ContextVar.set`` and one ``reset``; nothing is formatted unless a line is emitted.
The API binds per request (id, user, clear). Measured: that binding with no line emitted (the normal case), a DEBUG line under an INFO
level (dropped by ``logging`` before any formatting), and for scale, one emitted JSON line
(what a line costs when an operation does log, e.g. a retry).

    .venv/bin/python tests/benchmarks/bench_logctx.py [--n 200000] [--batch 32]
"""
from __future__ import annotations

import argparse
import io
import logging
import time
from dataclasses import dataclass

from wharf.observability import logctx
from wharfd import logs


@dataclass
class Op:
    id: str
    kind: str
    attempts: int


def per_call(fn, n: int) -> float:
    """Best of five, in microseconds per call."""
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        fn(n)
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    logs.configure("INFO", "json", stream=io.StringIO())
    log = logging.getLogger("wharf.operations")
    ops = [Op(f"op{i:026d}", "create_resource", 1) for i in range(args.batch)]

    def empty(n: int) -> None:
        for _ in range(n):
            pass

    def bind_op(n: int) -> None:  # one bound_op scope
        op = ops[0]
        for _ in range(n):
            with logctx.bound_op(op):
                pass

    def per_operation(n: int) -> None:  # a batch: bound_batch + 2 scopes per operation
        for _ in range(n // len(ops)):
            with logctx.bound_batch(ops):
                for op in ops:
                    with logctx.bound_op(op):
                        pass
                for op in ops:
                    with logctx.bound_op(op):
                        pass

    def per_operation_unbound(n: int) -> None:  # the same loops, nothing bound
        for _ in range(n // len(ops)):
            for _op in ops:
                pass
            for _op in ops:
                pass

    def per_request(n: int) -> None:  # the middleware: bind id, bind user, clear
        for _ in range(n):
            logctx.bind_request("01a23c4d84d377dc97d56314a875a09f")
            logctx.bind_user("5c0f2a8e41b34f0d9e7a6b1c2d3e4f50")
            logctx.clear_request()

    def debug_dropped(n: int) -> None:
        with logctx.bound_op(ops[0]):
            for _ in range(n):
                log.debug("operation %s: detail", "x")

    def line_emitted(n: int) -> None:
        with logctx.bound_op(ops[0]):
            for _ in range(n):
                log.info("operation %s: attempt failed", "x")

    base = per_call(empty, args.n)
    print(f"one bound_op scope (set + reset):          {per_call(bind_op, args.n) - base:6.3f} µs")
    print(f"per operation, batch of {args.batch} (batch + 2 scopes): "
          f"{per_call(per_operation, args.n) - per_call(per_operation_unbound, args.n):6.3f} µs")
    print(f"per request (id, user, clear):             {per_call(per_request, args.n) - base:6.3f} µs")
    print(f"a DEBUG line under INFO (dropped):         {per_call(debug_dropped, args.n) - base:6.3f} µs")
    print(f"an emitted JSON line (with context):       "
          f"{per_call(line_emitted, args.n // 10) - base:6.3f} µs")


if __name__ == "__main__":
    main()
