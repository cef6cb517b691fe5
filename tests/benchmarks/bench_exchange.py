"""Office exchange against the raw libraries beneath (issue 38), in-process, same run:

- export: ``wharf.exchange.writers.write_xlsx`` of a sheet unit's body against xlsxwriter
  (constant-memory mode) writing the same cells from a plain list of rows, and the peak
  RSS growth of each;
- import: ``wharf.exchange.importer.convert`` of that XLSX file, as the worker runs it
  (format sniffing, the used-range check, the workbook read in a child process under
  the memory limit, the unit document built) against python-calamine reading the same
  file alone (every sheet's rows to Python values).

    .venv/bin/python tests/benchmarks/bench_exchange.py [--cells 1m] [--repeats 3]

Ratios are raw ÷ Wharf (time), so 1.0 means no overhead and the issue's goal is >= 0.5
for both.
"""
from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import xlsxwriter
from python_calamine import CalamineWorkbook

from tests.benchmarks.bench_units import parse_size
from wharf.exchange.formats import cell, workbook, worksheet
from wharf.exchange.importer import convert
from wharf.exchange.writers import write_xlsx
from wharf.infra.settings import Settings

COLS = 10


def rows_of(cells: int) -> list[list[Any]]:
    """The sheet's values: a text, a number and a boolean column pattern."""
    out = []
    for r in range(cells // COLS):
        out.append([f"row {r} col {c}" if c % 3 == 0 else (r * c + 0.5 if c % 3 == 1
                                                            else bool(r % 2))
                    for c in range(COLS)])
    return out


def body_of(rows: list[list[Any]]) -> dict[str, Any]:
    data = {str(r): {str(c): cell(v) for c, v in enumerate(row)} for r, row in enumerate(rows)}
    return workbook("Bench", [worksheet("s1", "Sheet1", data)])


def raw_xlsx(rows: list[list[Any]], path: str) -> None:
    wb = xlsxwriter.Workbook(path, {"constant_memory": True})
    ws = wb.add_worksheet("Sheet1")
    for r, row in enumerate(rows):
        for c, v in enumerate(row):
            ws.write(r, c, v)
    wb.close()


def max_rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def timed(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", default="1m")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    cells = parse_size(args.cells)
    rows = rows_of(cells)
    body = body_of(rows)
    with tempfile.TemporaryDirectory() as tmp:
        raw_path, ours_path = os.path.join(tmp, "raw.xlsx"), os.path.join(tmp, "ours.xlsx")
        before = max_rss_kib()
        raw = timed(lambda: raw_xlsx(rows, raw_path), args.repeats)
        raw_rss = max_rss_kib() - before
        before = max_rss_kib()
        ours = timed(lambda: write_xlsx(body, ours_path), args.repeats)
        ours_rss = max_rss_kib() - before
        sizes = os.path.getsize(raw_path), os.path.getsize(ours_path)
        settings = Settings.from_env({"WHARF_DATA_DIR": tmp,
                                      "WHARF_UNIT_MAX_SNAPSHOT_BYTES": str(2**31)})

        def calamine() -> None:
            wb = CalamineWorkbook.from_path(raw_path)
            for name in wb.sheet_names:
                for _ in wb.get_sheet_by_name(name).to_python():
                    pass
        read_raw = timed(calamine, args.repeats)
        read_ours = timed(lambda: convert(Path(raw_path), "bench.xlsx", "Bench", settings,
                                          Path(tmp)), args.repeats)
    print("| cells | raw xlsxwriter | Wharf write_xlsx | raw ÷ Wharf | file (raw / Wharf) | "
          "peak RSS growth (raw / Wharf) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| {cells:,} | {raw:.2f} s | {ours:.2f} s | {raw / ours:.2f} | "
          f"{sizes[0] / 1e6:.1f} / {sizes[1] / 1e6:.1f} MB | "
          f"{raw_rss / 1024:.0f} / {ours_rss / 1024:.0f} MiB |")
    print()
    print("| cells | raw python-calamine read | Wharf import (convert) | raw ÷ Wharf |")
    print("| ---: | ---: | ---: | ---: |")
    print(f"| {cells:,} | {read_raw:.2f} s | {read_ours:.2f} s | {read_raw / read_ours:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
