"""In-process cost of deciding a worktree merge (issue 36): the three-way merge walk of the
touched paths only against the walk of the whole documents, and against the raw layer
beneath (one C-speed ``==`` of trunk against an equal copy of it: the least a whole-document
comparison costs), for sheets of growing size with the same edits a side.

    .venv/bin/python tests/benchmarks/bench_merge_walk.py [--sizes 200k,1m] [--edits 100]

Each figure is the median of ``--repeats`` runs of: ``merge`` (base, trunk, draft) with and
without the trie of touched paths, ``diff(draft, merged)`` (the draft's ``merge_sync``
revision) likewise, and ``trunk == copy of trunk``. What it shows: the walk of the touched
paths compares only what the two sides changed; it still scans the keys (not the values) of
each object on a changed path, to keep document order, so it grows with the width of those
objects; the whole walk grows with the whole document.
"""
from __future__ import annotations

import argparse
import copy
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.benchmarks.bench_units import parse_size
from wharf.worktrees.merge import diff, merge
from wharf.worktrees.touched import touched_paths

COLS = 10


def sheet(cells: int) -> dict[str, Any]:
    rows = cells // COLS
    return {"type": "sheet", "schemaVersion": 1, "body": {"sheets": {"s1": {"cellData": {
        str(r): {str(c): {"v": f"cell {r}:{c} " + "x" * 90, "t": 1} for c in range(COLS)}
        for r in range(rows)}}}}}


def edits(rng: random.Random, cells: int, count: int, tag: str) -> list[dict[str, Any]]:
    picked = rng.sample(range(cells), count)
    return [{"op": "replace", "path": f"/body/sheets/s1/cellData/{k // COLS}/{k % COLS}/v",
             "value": f"{tag} {k}"} for k in picked]


def apply(doc: dict[str, Any], ops: list[dict[str, Any]]) -> None:
    for op in ops:
        parts = op["path"].split("/")[1:]
        node = doc
        for part in parts[:-1]:
            node = node[part]
        node[parts[-1]] = op["value"]


def timed(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="200k,1m")
    p.add_argument("--edits", type=int, default=100, help="edits a side (100)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--seed", type=int, default=36)
    args = p.parse_args()
    rng = random.Random(args.seed)
    print("| cells | merge, touched paths | merge, whole walk | diff(draft, merged), "
          "touched | diff, whole | raw `trunk == copy` | touched ÷ raw | whole ÷ raw |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for cells in (parse_size(s) for s in args.sizes.split(",")):
        base = sheet(cells)
        trunk, draft = copy.deepcopy(base), copy.deepcopy(base)
        trunk_ops = edits(rng, cells, args.edits, "trunk")
        draft_ops = edits(rng, cells, args.edits, "draft")
        apply(trunk, trunk_ops)
        apply(draft, draft_ops)
        touched = touched_paths([trunk_ops, draft_ops])
        result = merge(base, trunk, draft, touched=touched)
        whole = merge(base, trunk, draft)
        assert result.patch == whole.patch and result.conflict_count == 0
        t_touched = timed(lambda: merge(base, trunk, draft, touched=touched), args.repeats)
        t_whole = timed(lambda: merge(base, trunk, draft), args.repeats)
        d_touched = timed(lambda: diff(draft, result.merged, touched), args.repeats)
        d_whole = timed(lambda: diff(draft, result.merged), args.repeats)
        twin = copy.deepcopy(trunk)
        raw = timed(lambda: trunk == twin, args.repeats)
        print(f"| {cells:,} | {t_touched * 1000:.1f} ms | {t_whole * 1000:.1f} ms | "
              f"{d_touched * 1000:.1f} ms | {d_whole * 1000:.1f} ms | {raw * 1000:.1f} ms | "
              f"{t_touched / raw:.2f} | {t_whole / raw:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
