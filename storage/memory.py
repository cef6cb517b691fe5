"""Process-level memory: handing freed heap pages back to the operating system."""
from __future__ import annotations

from typing import Any

_malloc_trim: Any = None


def release_free_memory() -> None:
    """Hand the heap pages freed by a large upload back to the OS (glibc's ``malloc_trim``;
    a no-op elsewhere).

    The body arrives in socket reads of up to 1 MiB. Once glibc's dynamic mmap threshold
    has grown, those buffers come from the request thread's malloc arena, and the space
    they leave behind stays resident: without this, the API worker's RSS crept up by
    3-10 MiB for each gunicorn thread that had served an upload
    (tests/benchmarks/bench_blobs.py, section (b))."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes
            _malloc_trim = ctypes.CDLL(None).malloc_trim
            _malloc_trim.argtypes = [ctypes.c_size_t]
        except Exception:  # not glibc (or no libc symbols): nothing to do
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)
