"""``wharf-client login`` (issue 40 item 5, RFC 8628) against a real ``wharf serve`` over
real TCP: the CLI prints the verification URL and user code, polls, and once the
logged-in user approves in the browser's place (the JSON route the ``/device`` page calls)
stores a login session of its own in the profile file, which later commands use; a
denied login exits 3 with ``access_denied`` and stores nothing; other profiles are kept.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CLIENT = [sys.executable, "-m", "wharfclient"]
CODE = re.compile(r"enter the code\s+([A-Z]{4}-[A-Z]{4})")


def _env(config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
    env["WHARF_CLIENT_CONFIG"] = str(config)
    return env


def _login(url: str, config: Path, decide, *extra: str) -> tuple[int, str, str]:
    """Run ``wharf-client login``; ``decide(user_code)`` once the code is printed."""
    proc = subprocess.Popen([*CLIENT, "login", "--url", url, *extra], env=_env(config),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    err: list[str] = []
    seen = threading.Event()

    def read() -> None:
        for line in proc.stderr:
            err.append(line)
            m = CODE.search(line)
            if m and not seen.is_set():
                seen.set()
                decide(m.group(1))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc.wait(timeout=60)  # stdout is a few lines: it never fills the pipe
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(5)
    out = proc.stdout.read()
    assert seen.is_set(), "".join(err)
    return proc.returncode, out, "".join(err)


def test_login_stores_a_session_the_next_commands_use(wharf, tmp_path):
    server, user, _token = wharf
    url = f"http://127.0.0.1:{server.port}"
    config = tmp_path / "cfg" / "client.toml"
    config.parent.mkdir()
    config.write_text('[ci]\nurl = "http://elsewhere:1"\ntoken = "wharf_keep"\n')
    decided = {}

    def approve(code: str) -> None:
        status, _, body = user.call("GET", f"/api/device-authorizations/{code}")
        assert status == 200 and body["status"] == "pending", body
        decided["client"] = body["client_name"]
        status, _, body = user.call("POST", f"/api/device-authorizations/{code}/approve")
        assert status == 200, body

    code, out, err = _login(url, config, approve, "--name", "ci laptop")
    assert code == 0, err
    assert f"{url}/device" in err and "logged in as alice" in out
    assert decided["client"] == "ci laptop"
    assert oct(config.stat().st_mode & 0o777) == "0o600"
    profiles = tomllib.loads(config.read_text())
    assert profiles["ci"] == {"url": "http://elsewhere:1", "token": "wharf_keep"}
    assert profiles["default"]["url"] == url
    credential = profiles["default"]["token"]
    assert not credential.startswith("wharf_")  # a login session, not an API token
    # the stored credential is a session of alice's own that later commands use
    ops = subprocess.run([*CLIENT, "ops", "--json"], env=_env(config), capture_output=True,
                         text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert ops.returncode == 0, ops.stderr
    status, _, sessions = user.call("GET", "/api/login-sessions")
    assert status == 200
    cli_session = [s for s in sessions["items"] if (s["user_agent"] or "").startswith("wharf-client")]
    assert len(cli_session) == 1 and cli_session[0]["current"] is False


def test_denied_login_exits_3_and_stores_nothing(wharf, tmp_path):
    server, user, _token = wharf
    url = f"http://127.0.0.1:{server.port}"
    config = tmp_path / "client.toml"

    def deny(code: str) -> None:
        status, _, body = user.call("POST", f"/api/device-authorizations/{code}/deny")
        assert status == 200, body

    code, out, err = _login(url, config, deny, "--profile", "work")
    assert code == 3, (out, err)
    assert "(access_denied)" in err and not config.exists()
