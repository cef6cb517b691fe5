"""A fork server for the ``wharf`` processes the tests start.

A ``wharf`` process spends most of its start-up importing (SQLAlchemy, structlog, redis-py,
Falcon, Wharf's models: about 1 of its 1.5-1.9 CPU-seconds, docs/architecture.md "Tests"),
and the process tests start hundreds. This server (``python -m tests.support.zygote``, one
per test process, started at first use) imports the libraries once and forks a child for
each ``wharf`` command; the child runs ``python -m wharfd.cli <args>`` as that command
would (``runpy``: ``__main__`` is ``wharfd.cli``), in a session of its own (so its whole
process group can be killed), with the given environment, working directory and output
file. What the child then builds and runs is the real process's, from its own
environment: the preloaded modules (:data:`PRELOAD`) read none of it when imported, except
``prometheus_client`` (its multiprocess mode), so a process whose environment sets such a
variable (:data:`AT_IMPORT`) starts as a fresh interpreter instead. Whatever a process
reads at run time (settings, ``os.getpid()`` in its worker and process ids, its broker and
database connections, tracing) is its own; ``random`` is reseeded by CPython at fork.
(``/proc/<pid>/environ`` still shows the server's environment, the kernel's copy from its
``exec``; ``os.environ`` and C's ``getenv`` in the child, and its own children, see its own.)

The server is not the test's child's parent, so the test cannot ``waitpid`` it:
:class:`Child` is the ``subprocess.Popen`` the tests use (``pid``, ``poll``, ``wait``,
``returncode``, ``send_signal``/``terminate``/``kill``), its exit status reported by the
server, which reaps every child.

Protocol (the server's stdin and stdout, JSON lines): a request
``{"argv": [...], "env": {...}, "cwd": "...", "log": "...", "errors": "..." | null}`` is
answered
``{"pid": N}`` (or ``{"error": "..."}``); whenever a child exits the server writes
``{"exit": pid, "status": code}`` (``-signal`` when killed, as ``Popen.returncode``).
"""
from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

#: Imported once by the server: the libraries, then Wharf's modules (none of them reads the
#: environment when imported; ``wharfd.wsgi``, which builds the app when imported, is not
#: among them). ``prometheus_client`` fixes its multiprocess mode at import, so a process
#: whose environment sets ``PROMETHEUS_MULTIPROC_DIR`` is not started here (:data:`AT_IMPORT`).
PRELOAD = (
    "sqlalchemy", "sqlalchemy.orm", "sqlalchemy.dialects.postgresql",
    "sqlalchemy.dialects.sqlite", "psycopg", "alembic", "falcon", "msgspec",
    "wharfd.structlog_import", "redis", "dramatiq", "gunicorn.app.wsgiapp",
    "gunicorn.workers.gthread", "croniter", "argon2", "boto3", "botocore.session",
    "wharfd.cli", "wharfd.logs", "wharfd.gunicorn_logs", "wharfd.runtime", "api.app",
    "tasks.worker", "tasks.scheduler", "migrations.prepare",
)

#: Variables read when a module of :data:`PRELOAD` is imported: a process whose environment
#: differs from the server's in one of them is started by ``subprocess.Popen`` instead.
AT_IMPORT = ("PROMETHEUS_MULTIPROC_DIR", "OTEL_PYTHON_CONTEXT")


# -- the server ---------------------------------------------------------------------------
def _preload() -> None:
    import importlib
    for name in PRELOAD:
        importlib.import_module(name)


def _become(request: dict[str, Any], keep: tuple[int, ...]) -> None:
    """In the forked child: the session, signals, files, directory, environment and
    arguments of ``python -m wharfd.cli <argv>`` started by ``subprocess.Popen`` with
    ``start_new_session=True`` and its output to the log file."""
    os.setsid()
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the server's own handler
    for fd in keep:
        os.close(fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, path in ((1, request["log"]), (2, request.get("errors") or request["log"])):
        out = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(out, fd)
        os.close(out)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [sys.executable, *request["argv"]]
    # As under ``python -m``, the module runs as ``__main__`` only (its imports stay loaded).
    sys.modules.pop("wharfd.cli", None)


def serve() -> None:
    """The server's loop. In a forked child it returns once the ``wharf`` command has run,
    and the interpreter ends as ``python -m wharfd.cli`` would (non-daemon threads joined,
    ``atexit`` run, ``SystemExit``'s status, a traceback on an exception)."""
    _preload()
    import gc
    gc.collect()
    gc.freeze()  # the children share these pages instead of touching them in collections
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    stdin = sys.stdin.fileno()
    out = sys.stdout

    def say(message: dict[str, Any]) -> None:
        out.write(json.dumps(message) + "\n")
        out.flush()

    say({"ready": os.getpid()})
    buffered = b""
    while True:
        try:
            readable, _, _ = select.select([stdin, wake_r], [], [])
        except InterruptedError:
            readable = [wake_r]
        if wake_r in readable:
            with contextlib.suppress(BlockingIOError):
                os.read(wake_r, 4096)
        while True:  # reap every child that has exited
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            say({"exit": pid, "status": os.waitstatus_to_exitcode(status)})
        if stdin in readable:
            chunk = os.read(stdin, 65536)
            if not chunk:
                return  # the test process is gone: its children are its fixtures' to kill
            buffered += chunk
            while b"\n" in buffered:
                line, buffered = buffered.split(b"\n", 1)
                request = json.loads(line)
                try:
                    pid = os.fork()
                except OSError as exc:
                    say({"error": str(exc)})
                    continue
                if pid == 0:
                    _become(request, (wake_r, wake_w))  # stdin and stdout: replaced
                    import runpy
                    runpy.run_module("wharfd.cli", run_name="__main__", alter_sys=True)
                    return
                say({"pid": pid})


# -- the client (in the test process) --------------------------------------------------------
class Zygote:
    """The test process's connection to its server: ``start`` a command, and the exit
    statuses the server reports."""

    def __init__(self) -> None:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("WHARF_") and k not in AT_IMPORT}
        env.update(PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.zygote"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, cwd=REPO, env=env,
            start_new_session=True)
        self.lock = threading.Lock()  # one request at a time
        self.cond = threading.Condition()
        self.exits: dict[int, int] = {}
        self.answers: list[dict[str, Any]] = []
        assert self.proc.stdout is not None
        first = json.loads(self.proc.stdout.readline() or b"{}")
        if "ready" not in first:
            raise RuntimeError(f"the fork server did not start: {first}")
        threading.Thread(target=self._read, name="zygote-reader", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.cond:
                if "exit" in message:
                    self.exits[message["exit"]] = message["status"]
                else:  # a new child: an earlier one of the same pid has been reaped
                    self.exits.pop(message.get("pid", 0), None)
                    self.answers.append(message)
                self.cond.notify_all()
        with self.cond:  # the server is gone
            self.answers.append({"error": "the fork server exited"})
            self.cond.notify_all()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def start(self, argv: list[str], env: dict[str, str], cwd: Path, log: Path,
              errors: Path | None = None) -> Child:
        """``python -m wharfd.cli *argv``, its stdout to ``log`` and its stderr there too
        or to ``errors``."""
        for path in (log, errors):
            if path is not None:
                path.touch()  # there before the child writes, as Popen's output file is
        request = json.dumps({"argv": argv, "env": env, "cwd": str(cwd), "log": str(log),
                              "errors": str(errors) if errors else None})
        with self.lock:
            assert self.proc.stdin is not None
            self.proc.stdin.write(request.encode() + b"\n")
            self.proc.stdin.flush()
            with self.cond:
                self.cond.wait_for(lambda: bool(self.answers), timeout=60)
                answer = self.answers.pop(0) if self.answers else {"error": "no answer"}
        if "pid" not in answer:
            raise RuntimeError(f"the fork server could not start {argv}: {answer}")
        return Child(self, answer["pid"], argv)

    def run(self, argv: list[str], env: dict[str, str], cwd: Path,
            timeout: float) -> subprocess.CompletedProcess[str]:
        """As ``subprocess.run([python, -m, wharfd.cli, *argv], capture_output=True,
        text=True, stdin=DEVNULL, timeout=timeout)``."""
        with tempfile.TemporaryDirectory(prefix="wharf-run-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            child = self.start(argv, env, cwd, out, err)
            try:
                code = child.wait(timeout)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(10)
                raise
            return subprocess.CompletedProcess(
                [sys.executable, "-m", "wharfd.cli", *argv], code,
                out.read_text(errors="replace"), err.read_text(errors="replace"))

    def status(self, pid: int, timeout: float | None) -> int | None:
        with self.cond:
            self.cond.wait_for(lambda: pid in self.exits or not self.alive(), timeout=timeout)
            return self.exits.get(pid)

    def close(self) -> None:
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Child:
    """A process the fork server started, as much of ``subprocess.Popen`` as the tests use."""

    def __init__(self, zygote: Zygote, pid: int, args: list[str]) -> None:
        self.zygote = zygote
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.zygote.status(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            self.returncode = self.zygote.status(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def usable(env: dict[str, str]) -> bool:
    """Whether a process with ``env`` may be forked from the server: not when
    ``WHARF_TEST_FORK_SERVER=0`` (every process then starts as ``python -m wharfd.cli``),
    nor when ``env`` sets a variable the preloaded modules read at import
    (:data:`AT_IMPORT`)."""
    if os.environ.get("WHARF_TEST_FORK_SERVER", "1").strip() == "0":
        return False
    return not any(env.get(name) for name in AT_IMPORT)


def run(argv: list[str], env: dict[str, str], cwd: Path | None = None,
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A short ``wharf`` command (``python -m wharfd.cli *argv``) with its output captured as
    text: forked from the server where :func:`usable`, else a fresh interpreter."""
    cwd = cwd or REPO
    if usable(env):
        return zygote().run(argv, env, cwd, timeout)
    return subprocess.run([sys.executable, "-m", "wharfd.cli", *argv], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


_zygote: Zygote | None = None
_zygote_lock = threading.Lock()


def zygote() -> Zygote:
    """This test process's fork server, started at first use (again if it died)."""
    global _zygote
    with _zygote_lock:
        if _zygote is None or not _zygote.alive():
            _zygote = Zygote()
        return _zygote


if __name__ == "__main__":
    serve()
