"""structlog, imported without rich.

structlog's console and traceback modules import rich (and with it pygments) when it is
installed, as it is for ``wharf-client``'s progress bars. Wharf's renderers never use it
(``wharfd.logs``: plain tracebacks), and it cost every process about 80 CPU-ms of its
start (``import wharfd.logs``: median 193 -> 114 ms; docs/benchmarks.md, "Process start-up
without rich"). So rich is hidden while structlog is first imported; a later
``import rich`` works as usual.
``wharfd.logs`` takes structlog from here, and nothing in the layers below imports it at
run time (``wharf.observability.logctx`` only for its types)."""
from __future__ import annotations

import sys


def _load() -> None:
    if "structlog" in sys.modules or "rich" in sys.modules:
        return
    sys.modules["rich"] = None  # type: ignore[assignment]  # "import rich" fails at once
    try:
        import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]


_load()

import structlog  # noqa: E402

__all__ = ["structlog"]
