"""A private Redis behind a Sentinel, for the ``redis+sentinel://`` tests: a ``redis-server``
master and one ``redis-server --sentinel`` monitoring it, on free ports, their files in a
temporary directory, both killed afterwards. This process's Redis guard
(``services.guard_redis``) is told that both servers are the suite's own."""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.support import services
from tests.support.waiting import free_port

MASTER_NAME = "wharf-test-master"


def sentinel_error() -> str | None:
    if shutil.which("redis-server") is None:
        return "redis-server is not installed (needed to start a private Redis Sentinel)"
    return None


@dataclass
class SentinelRedis:
    """The servers' ports and a namespace's broker URL (``url``) through the sentinel."""

    master_port: int
    sentinel_port: int
    name: str

    @property
    def url(self) -> str:
        return (f"redis+sentinel://127.0.0.1:{self.sentinel_port}/{MASTER_NAME}/0"
                f"?client_name={self.name}")

    def client(self):  # the master, directly
        import redis
        return redis.Redis(host="127.0.0.1", port=self.master_port)

    def clients_elsewhere(self) -> list[dict]:
        """Connections of this namespace to the master on a DB other than 0: none."""
        with self.client() as c:
            return [x for x in c.client_list()
                    if x.get("name") == self.name and int(x.get("db", -1)) != 0]


def _wait_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"redis-server on {port} exited:\n{log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.05)
    raise RuntimeError(f"redis-server on {port} did not listen within {timeout}s")


@contextlib.contextmanager
def sentinel_redis(label: str) -> Iterator[SentinelRedis]:
    tmp = Path(tempfile.mkdtemp(prefix="wharf-sentinel-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        master_port, sentinel_port = free_port(), free_port()
        master_log = tmp / "master.log"
        services.allow_redis("127.0.0.1", master_port)
        services.allow_redis("127.0.0.1", sentinel_port)
        procs.append(subprocess.Popen(
            ["redis-server", "--port", str(master_port), "--bind", "127.0.0.1",
             "--save", "", "--appendonly", "no", "--dir", str(tmp),
             "--logfile", str(master_log)], start_new_session=True))
        _wait_port(master_port, procs[0], master_log)
        conf = tmp / "sentinel.conf"
        conf.write_text(f"port {sentinel_port}\nbind 127.0.0.1\ndir {tmp}\n"
                        f"logfile {tmp / 'sentinel.log'}\n"
                        f"sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} 1\n"
                        f"sentinel down-after-milliseconds {MASTER_NAME} 5000\n")
        procs.append(subprocess.Popen(["redis-server", str(conf), "--sentinel"],
                                      start_new_session=True))
        _wait_port(sentinel_port, procs[1], tmp / "sentinel.log")
        import redis
        with redis.Redis(host="127.0.0.1", port=sentinel_port) as s:
            deadline = time.monotonic() + 20
            while s.sentinel_get_master_addr_by_name(MASTER_NAME) is None:
                assert time.monotonic() < deadline, "the sentinel does not know its master"
                time.sleep(0.1)
        yield SentinelRedis(master_port, sentinel_port,
                            f"wharf-test-{label}-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    finally:
        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)
