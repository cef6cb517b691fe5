"""``wharf-client watch`` against a real ``wharf serve`` (the feed on its own port): one
JSON line per event, ``ready`` first, then the events of the changes made meanwhile; a
stream the server ends (the feed's buffer or a restart) is re-opened with a new ticket
and the last cursor; Ctrl-C exits 130; nothing to watch is a usage error."""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading

import pytest

from tests.cli.test_client_exchange import CLIENT

pytestmark = pytest.mark.slow


def start(wharf, *args: str) -> tuple[subprocess.Popen, queue.Queue]:
    server, _user, token = wharf
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
    env.update(WHARF_URL=f"http://127.0.0.1:{server.port}", WHARF_TOKEN=token,
               WHARF_CLIENT_CONFIG="/nonexistent")
    proc = subprocess.Popen([*CLIENT, "watch", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout],
                     daemon=True).start()
    return proc, lines


def next_event(lines: queue.Queue, type_: str, timeout: float = 20) -> dict:
    while True:
        event = json.loads(lines.get(timeout=timeout))
        if event["type"] == type_:
            return event


def test_watch_prints_ready_then_the_changes_and_ctrl_c_exits_130(wharf):
    _server, user, _token = wharf
    proc, lines = start(wharf, "--space", user.space_id, "--operations", "--json")
    try:
        ready = next_event(lines, "ready")
        assert ready["cursor"]
        status, _, node = user.call("POST", "/api/nodes",
                                    {"space_id": user.space_id, "name": "Watched"})
        assert status == 201, node
        changed = next_event(lines, "tree.changed")
        assert changed["space_id"] == user.space_id and "Watched" not in json.dumps(changed)
        assert changed["cursor"] > ready["cursor"]
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(15) == 130, proc.stderr.read() if proc.stderr else ""


def test_watch_without_a_subscription_is_a_usage_error(wharf):
    proc, _lines = start(wharf)
    assert proc.wait(30) == 2
    assert "watch what?" in (proc.stderr.read() if proc.stderr else "")
