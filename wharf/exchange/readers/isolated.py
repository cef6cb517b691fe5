"""Workbooks read in a child process under a memory limit.

calamine (Rust) holds a sheet as a dense grid from its first to its last cell and aborts
the whole process when an allocation fails: a small hostile XLSB or ODS whose few cells
span a huge range would kill the worker with every operation it was running. So the
parent runs :func:`wharf.exchange.readers.sheets.read_workbook` in a child
(``python -m wharf.exchange.readers.isolated``) that limits its own address space
(``RLIMIT_AS``, ``WHARF_IMPORT_MAX_MEMORY_BYTES``) before it reads anything, under the
conversion time limit; a child that dies is ``file_too_complex``. The document comes back
as JSON in a file of the job's private directory.

Both sides build a million small dicts (a cell is one) and free none: the cyclic garbage
collector, which would walk every live container again each time allocations pass its
threshold, is off for the child's whole life and paused in the parent while it decodes
(the cells hold no cycles; bench_exchange.py measured each side twice as fast)."""
from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from wharf.exchange.import_errors import (
    ConversionTimeout,
    CorruptFile,
    FileTooComplex,
    Limits,
    UnsupportedFormat,
)
from wharf.exchange.readers.sheets import read_workbook
from wharf.infra.errors import WharfError

_ERRORS: dict[str, type[WharfError]] = {
    "unsupported_format": UnsupportedFormat, "file_too_complex": FileTooComplex,
    "corrupt_file": CorruptFile}


_OUT_OF_MEMORY = 3  # the child's exit status on a MemoryError


def read_workbook_isolated(path: Path, name: str, limits: Limits, fmt: str, *,
                           memory: int, timeout: float) -> dict[str, Any]:
    out = path.with_name(path.name + ".json")
    args = [sys.executable, "-P", "-m", "wharf.exchange.readers.isolated", str(path), fmt, name,
            str(out), str(limits.max_cells), str(limits.max_sheets),
            str(limits.max_string_length), str(limits.max_unpacked_bytes), str(memory)]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
           "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        proc = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout, env=env, cwd=path.parent, check=False)
    except subprocess.TimeoutExpired:
        raise ConversionTimeout(f"reading the workbook took longer than {timeout:g} s") \
            from None
    if proc.returncode > 0 and proc.returncode != _OUT_OF_MEMORY:
        raise CorruptFile(f"the workbook cannot be read (exit {proc.returncode})")
    if proc.returncode != 0 or not out.is_file():  # killed (calamine aborts) or MemoryError
        raise FileTooComplex(
            "reading the workbook needed more memory than an import may use "
            f"(WHARF_IMPORT_MAX_MEMORY_BYTES, exit {proc.returncode})",
            details={"limit": "memory"})
    with _collector_paused():
        answer = _decode(out.read_bytes())
    out.unlink()
    if "error" in answer:
        error = answer["error"]
        raise _ERRORS.get(error["code"], CorruptFile)(error["message"],
                                                      details=error.get("details") or None)
    body: dict[str, Any] = answer["body"]
    return body


_paused = 0  # the decodes under way (a worker runs several threads)
_was_enabled = True
_pause_lock = threading.Lock()


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic collector off while the block runs, back on when the last of the
    threads in such a block leaves it (unless something else had turned it off)."""
    global _paused, _was_enabled
    with _pause_lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _pause_lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()


def _child(argv: list[str]) -> int:
    gc.disable()  # a short life that makes a million dicts and no cycles worth collecting
    src, fmt, name, out = argv[:4]
    cells, sheets, length, unpacked, memory = (int(a) for a in argv[4:9])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    try:
        answer: dict[str, Any] = {"body": read_workbook(
            Path(src), name, Limits(cells, sheets, length, unpacked), fmt)}
    except WharfError as exc:
        answer = {"error": {"code": exc.code, "message": exc.message, "details": exc.details}}
    except MemoryError:
        return _OUT_OF_MEMORY
    except Exception as exc:  # a parser's failure the reader did not classify
        answer = {"error": {"code": "corrupt_file", "details": {},
                            "message": f"the workbook cannot be read: {type(exc).__name__}"}}
    with open(out, "wb") as f:
        f.write(_encode(answer))
    return 0


# JSON by msgspec (C speed), or by the standard library where msgspec refuses (a lone
# surrogate), as storage.db does: the child imports neither storage nor SQLAlchemy.
def _encode(value: Any) -> bytes:
    try:
        return msgspec.json.encode(value)
    except (TypeError, ValueError, OverflowError):
        return json.dumps(value, separators=(",", ":")).encode("utf-8")


def _decode(data: bytes) -> Any:
    try:
        return msgspec.json.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return json.loads(data)


if __name__ == "__main__":  # the child: python -m wharf.exchange.readers.isolated …
    sys.exit(_child(sys.argv[1:]))
