"""npm packages the tests run, installed once into a cache directory
(``WHARF_TEST_NODE_CACHE``, default ``~/.cache/wharf-tests``) by ``npm ci`` from a committed
``package-lock.json``, under a name derived from it and ``package.json``, so a change of
version installs afresh (:mod:`tests.support.oidc_provider`, :mod:`tests.support.ts_client`).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import threading
from pathlib import Path

_install_lock = threading.Lock()


def missing() -> str | None:
    """Why Node packages cannot run here (None: they can)."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


def installed(source: Path, name: str, marker: str) -> Path:
    """The cached installation of ``source``'s package and lock file (``node_modules``
    inside), installed unless ``node_modules/<marker>`` is there already."""
    package = (source / "package.json").read_bytes()
    lock = (source / "package-lock.json").read_bytes()
    root = Path(os.environ.get("WHARF_TEST_NODE_CACHE")
                or Path.home() / ".cache" / "wharf-tests")
    target = root / f"{name}-{hashlib.sha256(package + lock).hexdigest()[:12]}"
    with _install_lock:
        if not (target / "node_modules" / marker).exists():
            target.mkdir(parents=True, exist_ok=True)
            (target / "package.json").write_bytes(package)
            (target / "package-lock.json").write_bytes(lock)
            # npm ci: exactly the versions of the committed lock file
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts",
                            "--loglevel=error"], cwd=target, check=True, timeout=300,
                           stdout=subprocess.DEVNULL)
    return target
