#!/usr/bin/env python
"""Benchmark of the three-way JSON merge (``wharf/worktrees/merge.py``) on a sheet-sized unit.

A script, not a test (pytest collects ``test_*.py`` only). Run::

    .venv/bin/python tests/benchmarks/bench_merge.py              # about 30 s
    .venv/bin/python tests/benchmarks/bench_merge.py --rows 500 --repeats 3

The snapshot is Univer-workbook-like: ``sheets.s1.cellData[row][col] = {"v": …, "t": …}``
(plus a style id on some cells), ``--rows`` x ``--cols`` cells (default 2 000 x 100 =
200 000). Trunk and draft each make ``--edits`` (100) edits from the base: trunk sets
values; the draft sets values, adds cells (some in new rows), deletes cells and restyles
cells, on cells trunk does not touch (a clean merge). The three documents are parsed from
JSON text separately, as storage hands them over (no shared subtrees).

Measured, each call on the same pair in the same run:

- ``merge(base, trunk, draft)`` — the three-way merge with its patch for trunk;
- the same with conflicts (the draft edits the very cells trunk edited, differently);
- ``merge(base, base, draft)`` — trunk unchanged (a fast-forward's content);
- ``diff(base, draft)`` — the module's two-way diff;
- ``rebase`` of the conflicting pair with one resolution per conflict;
- raw baseline: ``jsonpatch.make_patch(base, draft)`` — the two-way diff alone;
- ``same(base, copy)`` against ``base == copy``: what confirming equal containers as JSON
  (true ≠ 1, stricter than the spec's ``==``) costs on a whole unchanged snapshot.

Per row: wall time (median of ``--repeats``; the best too), CPU time of the median run
(and its ratio to the clean merge's: steadier than wall time on a busy machine),
the peak of Python allocations during one call (``tracemalloc``, a separate run, since
tracing slows the call), and the peak RSS growth during one call (VmHWM reset through
``/proc/self/clear_refs`` before the call, minus VmRSS before it; "n/a" where the kernel
refuses the reset). Each result is checked: the patch applied to trunk (by
``storage.unitpatch``, Wharf's applier) gives the merged document.
"""
from __future__ import annotations

import argparse
import copy
import gc
import json
import platform
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import jsonpatch  # noqa: E402

from storage.unitpatch import UnitLimits, apply_changeset, parse_changeset  # noqa: E402
from tests.benchmarks.harness import log, status_kib  # noqa: E402
from wharf.worktrees.merge import Take, diff, merge, rebase, same  # noqa: E402

MiB = 1024 * 1024
BIG = UnitLimits(max_bytes=1 << 34, max_ops=1 << 30, max_depth=10_000)


def workbook(rows: int, cols: int, rng: random.Random) -> dict[str, Any]:
    cells: dict[str, Any] = {}
    for r in range(rows):
        row: dict[str, Any] = {}
        for c in range(cols):
            kind = rng.random()
            if kind < 0.6:
                cell: dict[str, Any] = {"v": rng.randrange(1_000_000), "t": 2}
            elif kind < 0.8:
                cell = {"v": round(rng.random() * 1000, 3), "t": 2}
            else:
                cell = {"v": f"text {r}:{c}", "t": 1}
            if rng.random() < 0.1:
                cell["s"] = f"st{rng.randrange(20)}"
            row[str(c)] = cell
        cells[str(r)] = row
    return {
        "id": "wb1", "name": "Benchmark", "appVersion": "0.5.0", "locale": "enUS",
        "styles": {f"st{i}": {"bl": i % 2, "fs": 10 + i} for i in range(20)},
        "sheetOrder": ["s1"],
        "sheets": {"s1": {"id": "s1", "name": "Sheet1", "rowCount": rows + 1000,
                          "columnCount": cols + 20, "cellData": cells,
                          "mergeData": [], "rowData": {}, "columnData": {}}},
        "resources": [],
    }


def edited(doc_text: str, cells: list[tuple[str, str]], rng: random.Random, *, who: str,
           draft_mix: bool) -> dict[str, Any]:
    """A parse of ``doc_text`` with one edit per cell in ``cells``."""
    doc = json.loads(doc_text)
    data = doc["sheets"]["s1"]["cellData"]
    for i, (r, c) in enumerate(cells):
        step = i % 10 if draft_mix else 0
        if step < 6:  # set the value
            data[r][c] = {**data[r][c], "v": f"{who} {i}", "t": 1}
        elif step == 6:  # a new cell in a new row
            data.setdefault(str(10_000 + i), {})[c] = {"v": i, "t": 2}
        elif step == 7:  # a new cell in an existing row
            data[r][str(1000 + i)] = {"v": i, "t": 2}
        elif step == 8:  # delete the cell
            del data[r][c]
        else:  # restyle
            data[r][c] = {**data[r][c], "s": f"st{rng.randrange(20)}"}
    return doc


def apply(doc: dict[str, Any], patch: list[dict[str, Any]]) -> dict[str, Any]:
    if not patch:
        return doc
    return apply_changeset(copy.deepcopy(doc), parse_changeset(patch, BIG), BIG, lambda: 0)


def reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def measure(name: str, call: Callable[[], Any], repeats: int) -> dict[str, Any]:
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(repeats):
        gc.collect()
        w0, c0 = time.perf_counter(), time.process_time()
        call()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    median = statistics.median(walls)
    cpu = cpus[min(range(repeats), key=lambda i: abs(walls[i] - median))]
    gc.collect()
    rss_before = status_kib_self("VmRSS")
    hwm = reset_hwm()
    call()
    rss_peak = (status_kib_self("VmHWM") - rss_before) if hwm else None
    gc.collect()
    tracemalloc.start()
    call()
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    row = {"name": name, "median": median, "best": min(walls), "cpu": cpu,
           "traced_peak": traced_peak, "rss_peak_kib": rss_peak}
    log(f"{name}: median {median * 1000:.1f} ms, best {min(walls) * 1000:.1f} ms, "
        f"traced peak {traced_peak / MiB:.1f} MiB, RSS growth "
        f"{'n/a' if rss_peak is None else f'{rss_peak / 1024:.1f} MiB'}")
    return row


def status_kib_self(field: str) -> int:
    import os

    return status_kib(os.getpid(), field)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument("--cols", type=int, default=100)
    parser.add_argument("--edits", type=int, default=100, help="edits per side")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--baseline-repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    log(f"building a {args.rows} x {args.cols} workbook")
    text = json.dumps(workbook(args.rows, args.cols, rng))
    gc.collect()
    rss_empty = status_kib_self("VmRSS")
    base = json.loads(text)
    snapshot_kib = status_kib_self("VmRSS") - rss_empty
    all_cells = [(str(r), str(c)) for r in range(args.rows) for c in range(args.cols)]
    picked = rng.sample(all_cells, 2 * args.edits)
    trunk_cells, draft_cells = picked[:args.edits], picked[args.edits:]
    trunk = edited(text, trunk_cells, rng, who="trunk", draft_mix=False)
    draft = edited(text, draft_cells, rng, who="draft", draft_mix=True)
    clash = edited(text, trunk_cells, rng, who="draft", draft_mix=False)
    twin = json.loads(text)
    cells = sum(len(row) for row in base["sheets"]["s1"]["cellData"].values())
    log(f"{cells} cells, {len(text) / MiB:.1f} MiB of JSON per snapshot")

    # correctness first
    clean = merge(base, trunk, draft)
    assert clean.outcome == "merged" and clean.conflict_count == 0
    assert same(apply(trunk, clean.patch), clean.merged)
    conflicted = merge(base, trunk, clash)
    assert conflicted.conflict_count == args.edits
    ff = merge(base, base, draft)
    assert same(ff.merged, draft) and same(apply(base, ff.patch), draft)
    two_way = diff(base, draft)
    baseline = jsonpatch.make_patch(base, draft).patch
    assert same(apply(base, baseline), draft)
    takes: dict[str, Take] = {c.path: "draft" for c in conflicted.conflicts}
    rebased = rebase(base, trunk, clash, takes)
    assert same(apply(clash, rebased.patch), rebased.draft)
    log(f"patch sizes: merge {len(clean.patch)} ops, diff {len(two_way)} ops, "
        f"jsonpatch.make_patch {len(baseline)} ops")

    rows = [
        measure("merge(base, trunk, draft), clean", lambda: merge(base, trunk, draft),
                args.repeats),
        measure(f"merge with {args.edits} conflicts", lambda: merge(base, trunk, clash),
                args.repeats),
        measure("merge(base, base, draft) (fast-forward content)",
                lambda: merge(base, base, draft), args.repeats),
        measure("rebase with a resolution per conflict",
                lambda: rebase(base, trunk, clash, takes), args.repeats),
        measure("diff(base, draft) (two-way)", lambda: diff(base, draft), args.repeats),
        measure("baseline: jsonpatch.make_patch(base, draft)",
                lambda: jsonpatch.make_patch(base, draft), args.baseline_repeats),
        measure("base == copy (Python ==, whole snapshot)", lambda: base == twin,
                args.repeats),
        measure("same(base, copy) (== + JSON bytes)", lambda: same(base, twin), args.repeats),
    ]

    ref = rows[0]["cpu"]
    print()
    print(f"Merge benchmark: {cells} cells ({args.rows} x {args.cols}), {len(text) / MiB:.1f} "
          f"MiB JSON per snapshot, {args.edits} edits per side; Python "
          f"{platform.python_version()}, {platform.machine()}; median of {args.repeats} "
          f"({args.baseline_repeats} for the baseline)")
    print()
    print("| call | median | best | CPU (median run) | peak Python allocations "
          "(tracemalloc) | peak RSS growth | CPU vs clean merge |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        rss = "n/a" if row["rss_peak_kib"] is None else f"{row['rss_peak_kib'] / 1024:.1f} MiB"
        print(f"| {row['name']} | {row['median'] * 1000:.0f} ms | {row['best'] * 1000:.0f} ms"
              f" | {row['cpu'] * 1000:.0f} ms | {row['traced_peak'] / MiB:.2f} MiB | {rss} "
              f"| {row['cpu'] / ref:.1f} |")
    print()
    print(f"patch ops: merge {len(clean.patch)}, diff {len(two_way)}, "
          f"jsonpatch.make_patch {len(baseline)}. RSS: one parsed snapshot "
          f"{snapshot_kib / 1024:.0f} MiB; process peak (VmHWM, whole run, 5 snapshots "
          f"in memory) {status_kib_self('VmHWM') / 1024:.0f} MiB; peak RSS growth per "
          f"call measured with VmHWM reset: {'yes' if reset_hwm() else 'no (n/a)'}.")


if __name__ == "__main__":
    main()
