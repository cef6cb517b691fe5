"""Workbooks read in a child process under a memory limit.

calamine (Rust) holds a sheet as a dense grid from its first to its last cell and aborts
the whole process when an allocation fails: a small hostile XLSB or ODS whose few cells
span a huge range would kill the worker with every operation it was running. So the
parent runs :func:`wharf.exchange.readers.sheets.read_workbook` in a child
(``python -m wharf.exchange.readers.isolated``) that limits its own address space
(``RLIMIT_AS``, ``WHARF_IMPORT_MAX_MEMORY_BYTES``) before it reads anything, under the
conversion time limit; a child that dies is ``file_too_complex``. The document comes back
as JSON in a file of the job's private directory.

The used-range check (:func:`~wharf.exchange.readers.sheets.check_used_ranges`) runs
here, in the parent, while the child starts and calamine loads the first sheet (the
child's address-space limit bounds that load either way): the child asks for its answer
(the sheet parts with formulas or styles, on its stdin) before it reads any cell, and a
workbook whose ranges are too large is ``file_too_complex`` (``used_range``) whatever the
child was doing: it is killed.

The body stays JSON: the child encodes its cells a few hundred rows at a time (no
million dicts kept), and the parent checks the answer's syntax and hands the body on as
that text (``msgspec.Raw``), which the unit store writes as it is: no Python object per
cell in the worker, whose part of an import went from decoding the document (0.3-0.7 s
and about 280 bytes per cell for a million cells) to reading a file. The child runs with
the cyclic garbage collector off (a short life, no cycles) and leaves without freeing
what it made (``os._exit`` once its answer is written)."""
from __future__ import annotations

import gc
import json
import os
import resource
import subprocess
import sys
import time
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
from wharf.exchange.readers.sheets import check_used_ranges, read_workbook
from wharf.infra.errors import WharfError

_ERRORS: dict[str, type[WharfError]] = {
    "unsupported_format": UnsupportedFormat, "file_too_complex": FileTooComplex,
    "corrupt_file": CorruptFile}


_OUT_OF_MEMORY = 3  # the child's exit status on a MemoryError
HOLD = "WHARF_TEST_READ_PAUSE_FILE"  # the child's environment: its test hook


class _Answer(msgspec.Struct):
    """The child's answer: the body as its JSON text, or an error."""

    body: msgspec.Raw = msgspec.Raw(b"")
    error: dict[str, Any] | None = None


def read_workbook_isolated(path: Path, name: str, limits: Limits, fmt: str, *,
                           memory: int, timeout: float,
                           hold: str | None = None) -> msgspec.Raw | dict[str, Any]:
    """The workbook body, as JSON text (``msgspec.Raw``, its syntax checked) or, in the
    rare answer msgspec cannot take (a lone surrogate the child escaped), decoded.

    ``hold`` (the test suite's hooks only, ``WHARF_TEST_READ_PAUSE_FILE``): a path; the
    child waits while it exists before it reads, so a test can kill the worker while its
    child is reading, however fast the reading is."""
    out = path.with_name(path.name + ".json")
    args = [sys.executable, "-P", "-m", "wharf.exchange.readers.isolated", str(path), fmt, name,
            str(out), str(limits.max_cells), str(limits.max_sheets),
            str(limits.max_string_length), str(limits.max_unpacked_bytes), str(memory)]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
           "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
           "PYTHONDONTWRITEBYTECODE": "1"}
    if hold:
        env[HOLD] = hold
    deadline = time.monotonic() + timeout
    with subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env, cwd=path.parent) as proc:
        try:  # while the child starts and calamine loads the first sheet
            flagged = check_used_ranges(path, limits) if fmt == "xlsx" else set()
            proc.communicate(json.dumps(sorted(flagged)).encode("utf-8") + b"\n",
                             timeout=max(deadline - time.monotonic(), 0.001))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise ConversionTimeout(f"reading the workbook took longer than {timeout:g} s") \
                from None
        except BaseException as exc:  # the used ranges too large, or unreadable: the
            proc.kill()                # child goes
            proc.communicate()
            if isinstance(exc, Exception) and not isinstance(exc, WharfError):
                # a part the zip module cannot open (an unsupported compression: Not-
                # ImplementedError; encrypted: RuntimeError) is the file's fault, as when
                # the check ran in the child; not an internal error the engine retries
                raise CorruptFile("the workbook cannot be read: "
                                  f"{type(exc).__name__}") from None
            raise
    if proc.returncode > 0 and proc.returncode != _OUT_OF_MEMORY:
        raise CorruptFile(f"the workbook cannot be read (exit {proc.returncode})")
    if proc.returncode != 0 or not out.is_file():  # killed (calamine aborts) or MemoryError
        raise FileTooComplex(
            "reading the workbook needed more memory than an import may use "
            f"(WHARF_IMPORT_MAX_MEMORY_BYTES, exit {proc.returncode})",
            details={"limit": "memory"})
    body, error = _decode(out.read_bytes())
    out.unlink()
    if error is not None:
        raise _ERRORS.get(error["code"], CorruptFile)(error["message"],
                                                      details=error.get("details") or None)
    return body


def _child(argv: list[str]) -> int:
    gc.disable()  # a short life; the dicts it makes hold no cycles
    src, fmt, name, out = argv[:4]
    cells, sheets, length, unpacked, memory = (int(a) for a in argv[4:9])
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    while os.environ.get(HOLD) and os.path.exists(os.environ[HOLD]):
        time.sleep(0.02)  # the test hook (read_workbook_isolated's ``hold``)
    try:
        answer: dict[str, Any] = {"body": read_workbook(
            Path(src), name, Limits(cells, sheets, length, unpacked), fmt, encoded=True,
            scanned=_scanned)}
    except WharfError as exc:
        answer = {"error": {"code": exc.code, "message": exc.message, "details": exc.details}}
    except MemoryError:
        return _OUT_OF_MEMORY
    except Exception as exc:  # a parser's failure the reader did not classify
        answer = {"error": {"code": "corrupt_file", "details": {},
                            "message": f"the workbook cannot be read: {type(exc).__name__}"}}
    with open(out, "wb") as f:
        f.write(_encode(answer))
    _leave(0)  # (what it made is left to the kernel: freeing it costs time)
    return 0


def _scanned() -> set[str]:
    """The parent's used-range check's answer: the sheet parts with formulas or styles
    (it kills this process instead when the ranges are too large)."""
    line = sys.stdin.buffer.readline()
    if not line:  # the parent is gone
        _leave(1)
    return set(json.loads(line))


def _leave(status: int) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


# JSON by msgspec (C speed), or by the standard library where msgspec refuses (a lone
# surrogate), as storage.db does: the child imports neither storage nor SQLAlchemy.
def _encode(value: Any) -> bytes:
    try:
        return msgspec.json.encode(value)
    except (TypeError, ValueError, OverflowError):  # the cells already encoded: as they are
        return json.dumps(value, separators=(",", ":"),
                          default=lambda raw: json.loads(bytes(raw))).encode("utf-8")


def _decode(data: bytes) -> tuple[msgspec.Raw | dict[str, Any], dict[str, Any] | None]:
    """The answer's body, or its error. The body's JSON syntax is checked (msgspec skips
    it at C speed and keeps its text) and so is its UTF-8 (the store writes it as text);
    an answer msgspec refuses (an escaped lone surrogate) is decoded as before."""
    try:
        answer = msgspec.json.decode(data, type=_Answer)
        body: msgspec.Raw | dict[str, Any] = answer.body
        error = answer.error
        if error is None and not data.isascii():
            data.decode("utf-8")
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeDecodeError):
        plain = json.loads(data)
        if not isinstance(plain, dict):
            raise CorruptFile("the workbook reader's answer is not an object") from None
        body, error = plain.get("body", {}), plain.get("error")
        if error is None and not isinstance(body, dict):
            raise CorruptFile("the workbook reader's answer holds no workbook") from None
    if error is None and not body:
        raise CorruptFile("the workbook reader's answer holds no workbook")
    return body, error


if __name__ == "__main__":  # the child: python -m wharf.exchange.readers.isolated …
    sys.exit(_child(sys.argv[1:]))
