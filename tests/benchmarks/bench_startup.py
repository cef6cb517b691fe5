#!/usr/bin/env python
"""What a ``wharf`` process costs to start: CPU-seconds of its process tree (from
``/proc``) until it serves, and the wall time, for ``wharf api`` (gunicorn, until
``/healthz`` answers 200) and ``wharf worker`` (until its child logs "consuming with").

A script, not a test. Each process runs on a fresh embedded data dir (SQLite) with the
suite's Redis DB (``WHARF_TEST_REDIS_URL``) under a namespace of its own, deleted after.
The process tests start hundreds of these, so this is most of the suite's CPU
(docs/architecture.md, "Tests").

    PYTHONPATH=. .venv/bin/python tests/benchmarks/bench_startup.py [--runs 3] [--api-workers 1]
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from tests.benchmarks.harness import CpuMeter
from tests.support import services
from tests.support.waiting import free_port

REPO = Path(__file__).resolve().parents[2]


def ready(kind: str, port: int, log: Path) -> bool:
    if kind == "worker":
        return b"consuming with" in log.read_bytes()
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def start_once(kind: str, api_workers: int) -> tuple[float, float]:
    ns = services.RedisNamespace("startup")
    port = free_port()
    try:
        with tempfile.TemporaryDirectory() as data:
            env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
            env.update(WHARF_DATA_DIR=data, WHARF_BROKER_URL=ns.url,
                       WHARF_BROKER_NAMESPACE=ns.name, WHARF_PORT=str(port),
                       PYTHONUNBUFFERED="1")
            subprocess.run([sys.executable, "-m", "wharfd.cli", "migrate"], cwd=REPO, env=env,
                           check=True, capture_output=True)
            args = ["api", "--workers", str(api_workers)] if kind == "api" else \
                ["worker", "--processes", "1", "--threads", "1"]
            log = Path(data) / "log"
            with log.open("wb") as out:
                t0 = time.monotonic()
                proc = subprocess.Popen([sys.executable, "-m", "wharfd.cli", *args], cwd=REPO,
                                        env=env, stdout=out, stderr=subprocess.STDOUT,
                                        start_new_session=True)
            meter = CpuMeter({"start": proc.pid})  # its tree, reaped children included
            meter.start()
            try:
                while not ready(kind, port, log):
                    if proc.poll() is not None or time.monotonic() - t0 > 60:
                        raise SystemExit(f"{kind} did not start:\n{log.read_text()[-2000:]}")
                    time.sleep(0.02)
                wall = time.monotonic() - t0
                cpu = meter.stop()["groups"]["start"]
            finally:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            return wall, cpu
    finally:
        ns.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--api-workers", type=int, default=1)
    args = parser.parse_args()
    for kind in ("api", "worker"):
        results = [start_once(kind, args.api_workers) for _ in range(args.runs)]
        walls = ", ".join(f"{w:.2f}" for w, _ in results)
        cpus = ", ".join(f"{c:.2f}" for _, c in results)
        print(f"wharf {kind}: ready in {walls} s; {cpus} CPU-s", flush=True)


if __name__ == "__main__":
    main()
