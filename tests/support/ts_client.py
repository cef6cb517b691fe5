"""The TypeScript client (``clients/typescript``) made runnable for the tests: its
``node_modules`` installed once by ``npm ci`` from the committed ``package-lock.json`` into
a cache directory (``WHARF_TEST_NODE_CACHE``, default ``~/.cache/wharf-tests``, as
:mod:`tests.support.oidc_provider` does), under a name derived from ``package.json`` and the
lock file, so a change of version installs afresh. A test works on a copy of the package
(:func:`workspace`) whose ``node_modules`` links to that installation, so it never writes in
the checkout. ``python -m tests.support.ts_client`` installs it (``make test-deps``, which
``make test`` and ``.ci/run`` run); a test that finds it missing installs it itself (the npm
registry must be reachable).
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tests.support.npm_cache import installed, missing

SOURCE = Path(__file__).resolve().parents[2] / "clients" / "typescript"
__all__ = ["install_dir", "missing", "workspace"]


def install_dir() -> Path:
    """The cached installation (``node_modules`` inside), installed if needed."""
    return installed(SOURCE, "ts-client", ".package-lock.json")


def workspace(parent: Path) -> Path:
    """A copy of ``clients/typescript`` under ``parent`` (without ``node_modules`` and
    ``dist``), its ``node_modules`` a link to the cached installation."""
    modules = install_dir() / "node_modules"
    work = parent / "typescript"
    shutil.copytree(SOURCE, work, ignore=shutil.ignore_patterns("node_modules", "dist"))
    (work / "node_modules").symlink_to(modules, target_is_directory=True)
    return work


if __name__ == "__main__":  # python -m tests.support.ts_client: install it
    print(install_dir(), file=sys.stderr)
