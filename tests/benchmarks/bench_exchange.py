"""Office exchange against the raw libraries beneath (issue 38), in-process, same run:

- export: ``wharf.exchange.writers.write_xlsx`` of a sheet unit's body against xlsxwriter
  (constant-memory mode) writing the same cells from a plain list of rows, and the peak
  RSS growth of each;
- import: ``wharf.exchange.importer.convert`` of that XLSX file, as the worker runs it
  (format sniffing, the used-range check, the workbook read in a child process under
  the memory limit, the unit document built) against python-calamine reading the same
  file alone (every sheet's rows to Python values), in alternating rounds, by wall time
  and by CPU time (the reader child's included); and the
  import's peak RSS, measured in a fresh interpreter that runs ``convert`` once: its own
  peak (the worker's side: the document, its body as the child's JSON text) and its
  reader child's (calamine and the cells it encodes), each next to the same
  interpreter's RSS before the import.

    .venv/bin/python tests/benchmarks/bench_exchange.py [--cells 1m] [--repeats 3]
        [--part both|import|export]

Ratios are raw ÷ Wharf (time), so 1.0 means no overhead and the issue's goal is >= 0.5
for both.
"""
from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
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


def cpu_s() -> float:
    """CPU seconds (user + system) of this process and its waited-for children: less
    moved by other processes' load than wall time."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), \
        resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


# Run by the RSS probe in a fresh interpreter: the import once, then the peaks.
_PROBE = """
import resource, sys
from pathlib import Path
from wharf.exchange.importer import convert
from wharf.infra.settings import Settings
def status(key):  # this process's own figures (ru_maxrss would count its spawner's)
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
path, tmp = sys.argv[1], sys.argv[2]
settings = Settings.from_env({"WHARF_DATA_DIR": tmp, "WHARF_UNIT_MAX_SNAPSHOT_BYTES": str(2**31)})
before = status("VmRSS")
document = convert(Path(path), "bench.xlsx", "Bench", settings, Path(tmp))
print(before, status("VmHWM"), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def import_rss(path: str, tmp: str) -> tuple[int, int, int]:
    """KiB: a fresh interpreter's RSS before the import (its modules loaded), its peak
    with the document made, and its reader child's peak (an upper bound: Linux counts
    the spawner's RSS at the child's exec, here the ``before`` figure)."""
    out = subprocess.run([sys.executable, "-c", _PROBE, path, tmp], check=True,
                         capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve()
                                                              .parents[2])}).stdout.split()
    before, peak, child = (int(v) for v in out)
    return before, peak, child


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cells", default="1m")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--part", choices=("both", "import", "export"), default="both")
    args = p.parse_args()
    cells = parse_size(args.cells)
    rows = rows_of(cells)
    with tempfile.TemporaryDirectory() as tmp:
        raw_path, ours_path = os.path.join(tmp, "raw.xlsx"), os.path.join(tmp, "ours.xlsx")
        if args.part == "import":
            raw_xlsx(rows, raw_path)
        else:
            export(rows, raw_path, ours_path, cells, args.repeats)
        if args.part != "export":
            import_(raw_path, tmp, cells, args.repeats)
    return 0


def export(rows: list[list[Any]], raw_path: str, ours_path: str, cells: int,
           repeats: int) -> None:
    body = body_of(rows)
    before = max_rss_kib()
    raw = timed(lambda: raw_xlsx(rows, raw_path), repeats)
    raw_rss = max_rss_kib() - before
    before = max_rss_kib()
    ours = timed(lambda: write_xlsx(body, ours_path), repeats)
    ours_rss = max_rss_kib() - before
    sizes = os.path.getsize(raw_path), os.path.getsize(ours_path)
    print("| cells | raw xlsxwriter | Wharf write_xlsx | raw ÷ Wharf | file (raw / Wharf) | "
          "peak RSS growth (raw / Wharf) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    print(f"| {cells:,} | {raw:.2f} s | {ours:.2f} s | {raw / ours:.2f} | "
          f"{sizes[0] / 1e6:.1f} / {sizes[1] / 1e6:.1f} MB | "
          f"{raw_rss / 1024:.0f} / {ours_rss / 1024:.0f} MiB |")
    print()


def import_(raw_path: str, tmp: str, cells: int, repeats: int) -> None:
    settings = Settings.from_env({"WHARF_DATA_DIR": tmp,
                                  "WHARF_UNIT_MAX_SNAPSHOT_BYTES": str(2**31)})

    def calamine() -> None:
        wb = CalamineWorkbook.from_path(raw_path)
        for name in wb.sheet_names:
            for _ in wb.get_sheet_by_name(name).to_python():
                pass
    raws, ours, cpu_raw, cpu_ours = [], [], [], []
    for _ in range(repeats):  # alternating: the machine's load falls on both alike
        c0 = cpu_s()
        raws.append(timed(calamine, 1))
        c1 = cpu_s()
        ours.append(timed(lambda: convert(Path(raw_path), "bench.xlsx", "Bench", settings,
                                          Path(tmp)), 1))
        cpu_raw.append(c1 - c0)
        cpu_ours.append(cpu_s() - c1)
    read_raw, read_ours = statistics.median(raws), statistics.median(ours)
    cpu = statistics.median(cpu_raw), statistics.median(cpu_ours)
    before, peak, child = import_rss(raw_path, tmp)
    size = os.path.getsize(raw_path)
    with zipfile.ZipFile(raw_path) as zf:
        unpacked = sum(i.file_size for i in zf.infolist())
    print("| cells | raw python-calamine read | Wharf import (convert) | raw ÷ Wharf | "
          "each round (raw / Wharf) | CPU s, raw / Wharf (÷) |")
    print("| ---: | ---: | ---: | ---: | :--- | ---: |")
    print(f"| {cells:,} | {read_raw:.2f} s | {read_ours:.2f} s | {read_raw / read_ours:.2f} | "
          + ", ".join(f"{a:.2f} / {b:.2f}" for a, b in zip(raws, ours, strict=True))
          + f" | {cpu[0]:.2f} / {cpu[1]:.2f} ({cpu[0] / cpu[1]:.2f}) |")
    print()
    print("| file (zip / unpacked) | worker RSS before / peak | reader child peak RSS |")
    print("| ---: | ---: | ---: |")
    print(f"| {size / 2**20:.1f} / {unpacked / 2**20:.1f} MiB | {before / 1024:.0f} / "
          f"{peak / 1024:.0f} MiB | {child / 1024:.0f} MiB |")


if __name__ == "__main__":
    raise SystemExit(main())
