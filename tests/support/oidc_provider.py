"""A real OpenID provider for the external sign-in tests: node-oidc-provider (the npm
package ``oidc-provider``) run by Node from ``tests/support/oidc/provider.mjs``.

Its ``node_modules`` live in a cache directory (``WHARF_TEST_NODE_CACHE``, default
``~/.cache/wharf-tests``), installed by ``npm ci`` from the committed ``package-lock.json``
under a name derived from it and ``package.json``, so a change of version installs afresh.
``oidc-provider`` 8.x: the release line that supports the Node.js 20 of the CI machine (9.x
asks for 22). ``python -m tests.support.oidc_provider`` installs it (``make
test`` and ``.ci/run`` do, before the suite); a test that finds it missing installs it
itself (``npm install``: the npm registry must be reachable).
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.npm_cache import installed, missing
from tests.support.waiting import stop

SOURCE = Path(__file__).resolve().parent / "oidc"
CLIENT_ID, CLIENT_SECRET = "wharf", "wharf-test-secret-0123456789"
_script_lock = threading.Lock()
__all__ = ["OpenIDProvider", "install_dir", "missing"]


def install_dir() -> Path:
    """Where the provider runs from, ``node_modules`` installed (installing it if needed)."""
    target = installed(SOURCE, "oidc-provider", "oidc-provider/package.json")
    with _script_lock:
        # the script beside its node_modules (ES modules resolve from the script's folder)
        script = (SOURCE / "provider.mjs").read_bytes()
        placed = target / "provider.mjs"
        if not placed.exists() or placed.read_bytes() != script:
            tmp = target / f"provider.mjs.{os.getpid()}"
            tmp.write_bytes(script)
            tmp.replace(placed)
    return target


@dataclass(frozen=True)
class OpenIDProvider:
    issuer: str
    client_id: str = CLIENT_ID
    client_secret: str = CLIENT_SECRET


@contextmanager
def running() -> Iterator[OpenIDProvider]:
    """node-oidc-provider on a free port of 127.0.0.1 until the block ends."""
    where = install_dir()
    env = {**os.environ, "OIDC_CLIENT_ID": CLIENT_ID, "OIDC_CLIENT_SECRET": CLIENT_SECRET,
           "NODE_ENV": "test"}
    proc = subprocess.Popen(["node", str(where / "provider.mjs")], cwd=where, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # "listening <issuer>"
        if not line.startswith("listening "):
            proc.kill()
            raise RuntimeError(f"the OpenID provider did not start: {line!r} "
                               f"{proc.stderr.read() if proc.stderr else ''}")
        # keep draining its output so it never blocks on a full pipe
        for stream in (proc.stdout, proc.stderr):
            threading.Thread(target=lambda s=stream: s.read(), daemon=True).start()
        yield OpenIDProvider(issuer=line.split()[1])
    finally:
        stop(proc, 10)


if __name__ == "__main__":  # python -m tests.support.oidc_provider: install it
    print(install_dir(), file=sys.stderr)
