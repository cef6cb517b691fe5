"""The tests' fork server (tests/support/zygote.py) starts a ``wharf`` command as
``python -m wharfd.cli`` would: its own arguments, environment, session and output, its
exit status and signals as ``subprocess.Popen`` reports them."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli.test_cli import wharf_env
from tests.support import zygote
from tests.support.waiting import free_port, wait_until


def test_a_short_command_runs_with_its_own_arguments_environment_and_status(tmp_path):
    server = zygote.zygote()
    help_ = server.run(["--help"], wharf_env(tmp_path), tmp_path, 60)
    assert help_.returncode == 0 and help_.stdout.startswith("usage: wharf")
    assert help_.stderr == ""  # nothing of the fork (no runpy warning)
    bad = server.run(["migrate"], wharf_env(tmp_path, WHARF_PORT="abc"), tmp_path, 60)
    assert bad.returncode == 2
    assert bad.stderr.strip() == "wharf: configuration error: WHARF_PORT='abc': " \
                                 "expected an integer"
    assert not (tmp_path / "data").exists()  # the settings were its own, checked first
    done = server.run(["migrate"], wharf_env(tmp_path), tmp_path, 60)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "data" / "wharf.db").is_file()


def test_a_long_running_command_is_a_process_of_its_own_that_a_signal_stops(tmp_path):
    port = free_port()
    log = tmp_path / "serve.log"
    child = zygote.zygote().start(["serve"], wharf_env(tmp_path, WHARF_PORT=str(port)),
                                  tmp_path, log)
    try:
        wait_until(lambda: b"serving on" in log.read_bytes(), 60, "wharf serve to listen")
        assert child.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            child.wait(0.1)
        assert os.getpgid(child.pid) == child.pid  # its own session and process group
        assert os.getsid(child.pid) == child.pid
        assert f"http://127.0.0.1:{port}".encode() in log.read_bytes()  # its WHARF_PORT
        assert Path(f"/proc/{child.pid}/cwd").resolve() == tmp_path.resolve()
        child.terminate()  # wharf serve stops on SIGTERM and exits 0
        assert child.wait(30) == 0
        assert b"wharf: stopped" in log.read_bytes()
    finally:
        child.kill()


def test_kill_9_of_a_process_group_is_reported_as_popen_reports_it(tmp_path):
    log = tmp_path / "serve.log"
    child = zygote.zygote().start(["serve"], wharf_env(tmp_path, WHARF_PORT=str(free_port())),
                                  tmp_path, log)
    wait_until(lambda: b"serving on" in log.read_bytes(), 60, "wharf serve to listen")
    started = time.monotonic()
    os.killpg(child.pid, signal.SIGKILL)
    # Until the test has seen the status the pid stays taken (a zombie), as with Popen:
    # a signal to it or to its group can reach no other process.
    wait_until(lambda: _state(child.pid) == "Z", 10, "the killed process to be a zombie")
    time.sleep(0.5)  # the server has heard of the exit by now; it still does not reap
    assert _state(child.pid) == "Z"
    assert child.wait(10) == -signal.SIGKILL
    assert time.monotonic() - started < 5
    assert child.poll() == -signal.SIGKILL
    wait_until(lambda: _state(child.pid) is None, 10, "the zombie to be reaped")


def _state(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def test_a_process_whose_environment_is_read_at_import_starts_fresh(tmp_path):
    assert zygote.usable(wharf_env(tmp_path))
    assert zygote.usable(wharf_env(tmp_path, PYTHONUNBUFFERED="1"))  # the child applies it
    assert not zygote.usable(wharf_env(tmp_path, PROMETHEUS_MULTIPROC_DIR=str(tmp_path)))
    other = {name: os.environ.get(name, "") + "-other" for name in ("PYTHONHASHSEED", "LC_ALL")}
    for name, value in other.items():  # read when the interpreter starts
        assert not zygote.usable(wharf_env(tmp_path, **{name: value}))
