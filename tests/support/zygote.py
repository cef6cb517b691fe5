"""A fork server for the ``wharf`` processes the tests start.

A ``wharf`` process spends most of its start-up importing (SQLAlchemy, structlog, redis-py,
Falcon, Wharf's models: about 1 of its 1.5-1.9 CPU-seconds, docs/architecture.md "Tests"),
and the process tests start hundreds. This server (``python -m tests.support.zygote``, one
per test process, started at first use) imports the libraries once and forks a child for
each ``wharf`` command; the child runs ``python -m wharfd.cli <args>`` as that command
would (``runpy``: ``__main__`` is ``wharfd.cli``), in a session of its own (so its whole
process group can be killed), with the given environment, working directory and output
file. What the child then builds and runs is the real process's, from its own
environment. A few variables are read when the interpreter starts or when a preloaded
module (:data:`PRELOAD`) is imported (``PYTHON*``, the locale, prometheus_client's
multiprocess mode, psycopg's implementation, gunicorn's defaults: :data:`AT_START`,
:data:`AT_IMPORT`): a process whose environment differs from the server's in one of them
starts as a fresh interpreter instead (:func:`usable`; ``PYTHONUNBUFFERED`` the child
applies itself). Whatever a process reads at run time (settings, ``os.getpid()`` in its
worker and process ids, its broker and database connections, tracing) is its own;
``random`` is reseeded by CPython at fork. (``/proc/<pid>/environ`` still shows the
server's environment, the kernel's copy from its ``exec``; ``os.environ`` and C's
``getenv`` in the child, and its own children, see its own.) The price: a command whose
code forgot an import that a preloaded module happens to make would pass here; the
installed script's own tests (``run_wharf(..., script=True)``), ``wharf serve`` and the
import probes still start fresh interpreters.

The server is not the test's child's parent, so the test cannot ``waitpid`` it:
:class:`Child` is the ``subprocess.Popen`` the tests use (``pid``, ``poll``, ``wait``,
``returncode``, ``send_signal``/``terminate``/``kill``). The server reports each exit
and leaves the child a zombie until the test has seen its status (``WNOWAIT``), so, as
with Popen, a pid or process group the test still holds is never another process's.

Protocol (the server's stdin and stdout, JSON lines): a request
``{"id": n, "argv": [...], "env": {...}, "cwd": "...", "log": "...", "errors": ...}`` is
answered ``{"id": n, "pid": N}`` (or ``{"id": n, "error": "..."}``); whenever a child
exits the server writes ``{"exit": pid, "status": code}`` (``-signal`` when killed, as
``Popen.returncode``), and ``{"release": pid}`` from the test reaps it.
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

#: Variables read when a module of :data:`PRELOAD` is imported (prometheus_client's
#: multiprocess mode, psycopg's implementation, gunicorn's setting defaults, dramatiq's
#: tunables, OpenTelemetry's context): a process whose environment differs from the
#: server's in one of them starts as a fresh interpreter instead (:func:`usable`).
AT_IMPORT = ("PROMETHEUS_MULTIPROC_DIR", "PROMETHEUS_DISABLE_CREATED_SERIES",
             "OTEL_PYTHON_CONTEXT", "PSYCOPG_IMPL", "PSYCOPG_WAIT_FUNC", "PORT",
             "WEB_CONCURRENCY", "FORWARDED_ALLOW_IPS", "NO_COLOR", "FORCE_COLOR", "TZ",
             "LANG")
#: Prefixes of the variables read when the interpreter starts (``PYTHON*``, the locale,
#: which sets the standard streams' encoding) or by dramatiq at import, likewise.
#: ``PYTHONUNBUFFERED`` is the exception: the child sets its streams from its own.
AT_START = ("PYTHON", "LC_", "dramatiq_")


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
    if os.environ.get("PYTHONUNBUFFERED"):  # as ``python -u``: each write reaches the file
        for stream in (sys.stdout, sys.stderr):
            stream.reconfigure(write_through=True)  # type: ignore[union-attr]
    sys.argv = [sys.executable, *request["argv"]]
    # As under ``python -m``, the module runs as ``__main__`` only (its imports stay loaded).
    sys.modules.pop("wharfd.cli", None)


def _exit_status(pid: int) -> int | None:
    """``pid``'s status as ``Popen.returncode`` gives it once it has exited (``-signal``
    when killed), else None; the child is left a zombie (``WNOWAIT``), so its pid and
    process group id are not reused until the test has seen the status, as with Popen."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    if info is None or info.si_pid == 0:
        return None
    return info.si_status if info.si_code == os.CLD_EXITED else -info.si_status


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
    running: set[int] = set()  # children whose exit has not been reported
    reported: set[int] = set()  # exited, reported, not yet released (zombies)

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
        for pid in sorted(running):  # a SIGCHLD may stand for several exits
            status = _exit_status(pid)
            if status is not None:
                running.discard(pid)
                reported.add(pid)
                say({"exit": pid, "status": status})
        if stdin in readable:
            chunk = os.read(stdin, 65536)
            if not chunk:
                return  # the test process is gone: its children are its fixtures' to kill
            buffered += chunk
            while b"\n" in buffered:
                line, buffered = buffered.split(b"\n", 1)
                request = json.loads(line)
                if "release" in request:  # the test has the status: reap the zombie
                    if request["release"] in reported:
                        reported.discard(request["release"])
                        os.waitpid(request["release"], 0)
                    continue
                try:
                    pid = os.fork()
                except OSError as exc:
                    say({"id": request["id"], "error": str(exc)})
                    continue
                if pid == 0:
                    _become(request, (wake_r, wake_w))  # stdin and stdout: replaced
                    import runpy
                    runpy.run_module("wharfd.cli", run_name="__main__", alter_sys=True)
                    return
                running.add(pid)
                say({"id": request["id"], "pid": pid})


# -- the client (in the test process) --------------------------------------------------------
def _server_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if not k.startswith("WHARF_") and k != "PYTHONUNBUFFERED"}


class ForkServerGone(RuntimeError):
    """The fork server exited: the statuses of its children are lost (a broken harness,
    not a test's outcome)."""


class Zygote:
    """The test process's connection to its server: ``start`` a command, and the exit
    statuses the server reports."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.zygote"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, cwd=REPO, env=_server_env(), start_new_session=True)
        self.lock = threading.Lock()  # one request at a time
        self.cond = threading.Condition()
        self.exits: dict[int, int] = {}
        self.answers: dict[int, dict[str, Any]] = {}
        self.requests = 0
        self.gone = False
        assert self.proc.stdout is not None
        first = json.loads(self.proc.stdout.readline() or b"{}")
        if "ready" not in first:
            raise RuntimeError(f"the fork server did not start: {first}")
        threading.Thread(target=self._read, name="zygote-reader", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        try:
            for line in self.proc.stdout:
                message = json.loads(line)
                with self.cond:
                    if "exit" in message:
                        self.exits[message["exit"]] = message["status"]
                    else:
                        self.answers[message["id"]] = message
                    self.cond.notify_all()
        finally:
            with self.cond:  # the server is gone (or spoke nonsense): nothing more comes
                self.gone = True
                self.cond.notify_all()

    def alive(self) -> bool:
        return not self.gone and self.proc.poll() is None

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def start(self, argv: list[str], env: dict[str, str], cwd: Path, log: Path,
              errors: Path | None = None) -> Child:
        """``python -m wharfd.cli *argv``, its stdout to ``log`` and its stderr there too
        or to ``errors``."""
        for path in (log, errors):
            if path is not None:
                path.touch()  # there before the child writes, as Popen's output file is
        with self.lock:
            self.requests += 1
            ident = self.requests
            self._send({"id": ident, "argv": argv, "env": env, "cwd": str(cwd),
                        "log": str(log), "errors": str(errors) if errors else None})
            with self.cond:
                self.cond.wait_for(lambda: ident in self.answers or self.gone, timeout=60)
                answer = self.answers.pop(ident, None)
        if answer is None or "pid" not in answer:
            raise ForkServerGone(f"the fork server did not start {argv}: {answer}")
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
        """``pid``'s exit status, waiting up to ``timeout``; then the server may reap it."""
        with self.cond:
            self.cond.wait_for(lambda: pid in self.exits or self.gone, timeout=timeout)
            if pid not in self.exits:
                if self.gone:
                    raise ForkServerGone(f"the fork server exited before process {pid}")
                return None
            status = self.exits.pop(pid)
        with self.lock, contextlib.suppress(OSError):
            self._send({"release": pid})
        return status


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
        if self.poll() is None:  # not yet seen exited: a zombie at worst, never a new pid
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def usable(env: dict[str, str]) -> bool:
    """Whether a process with ``env`` may be forked from the server: not when
    ``WHARF_TEST_FORK_SERVER=0`` (every process then starts as ``python -m wharfd.cli``),
    nor when ``env`` differs from the server's in a variable read when the interpreter
    starts or when a preloaded module is imported (:data:`AT_IMPORT`, :data:`AT_START`)."""
    if os.environ.get("WHARF_TEST_FORK_SERVER", "1").strip() == "0":
        return False
    server = _server_env()
    names = {k for k in (*env, *server)
             if (k.startswith(AT_START) or k in AT_IMPORT) and k != "PYTHONUNBUFFERED"}
    return all(env.get(k) == server.get(k) for k in names)


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
