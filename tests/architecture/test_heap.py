"""Start-up objects are kept out of the cyclic collector's full collections
(``wharfd.heap``): every long-running process (an API worker, a worker or scheduler process,
``wharf serve``) freezes what it built before it serves, so a full collection scans what
requests leave behind, not the whole process (it stalled an API worker 90-215 ms under load
before)."""
from __future__ import annotations

import gc
import json
import subprocess
import sys
import weakref
from pathlib import Path

import pytest

from tests.cli.test_cli import wharf_env
from wharfd import heap

REPO = Path(__file__).resolve().parents[2]

# Builds one process the way its command does, up to where it would start serving, then
# reports the collector's state there (how many objects are frozen, how many a full
# collection would scan) and again after the work a first request would do (SQLAlchemy
# configuring its mappers), and exits.
_PROCESS = """
import gc, json, sys
from wharfd import cli
from wharfd.commands import processes

def report(*_args, **_kwargs):
    state = {"frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects())}
    from sqlalchemy.orm import configure_mappers
    configure_mappers()
    state["after_first_use"] = len(gc.get_objects())
    print("HEAP " + json.dumps(state), flush=True)
    raise SystemExit(0)

which = sys.argv[1]
if which == "api":
    import wharfd.wsgi
    report()
elif which == "worker":
    import tasks.worker
    tasks.worker.make_worker = report  # run_child: built, about to consume
    processes.worker_process(0, 1)
elif which == "scheduler":
    import tasks.scheduler
    tasks.scheduler.scheduler_loop = report  # run_scheduler: built, about to tick
    cli.main(["scheduler"])
else:
    from wharfd import serving
    serving.serve_until = report  # serve: about to serve
    cli.main(["serve"])
"""


def _heap_of(tmp_path: Path, which: str) -> dict[str, int]:
    env = wharf_env(tmp_path, WHARF_PORT="0", PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", _PROCESS, which], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    line = next((x for x in done.stdout.splitlines() if x.startswith("HEAP ")), None)
    assert line is not None, (done.returncode, done.stdout[-2000:], done.stderr[-3000:])
    return json.loads(line[5:])


@pytest.mark.slow
@pytest.mark.parametrize("which", ["api", "worker", "scheduler", "serve"])
def test_a_process_freezes_what_it_built_before_it_serves(tmp_path, which):
    state = _heap_of(tmp_path, which)
    # More than a hundred thousand objects (modules, the app, mappers, schemas, actors)
    # are built at start; a full collection now scans a few hundred of them (serve: a few
    # thousand more, its server and threads), and the first request's set-up adds none.
    assert state["frozen"] > 50_000, state
    assert state["tracked"] < (5_000 if which == "serve" else 1_000), state
    assert state["after_first_use"] - state["tracked"] < 500, state


def test_settle_collects_garbage_then_freezes_the_survivors():
    class Node:
        def __init__(self) -> None:
            self.other: Node | None = None

    collected: list[str] = []
    gc.disable()  # no automatic collection between the steps below
    try:
        garbage_a, garbage_b = Node(), Node()
        garbage_a.other, garbage_b.other = garbage_b, garbage_a  # a cycle only gc frees
        weakref.finalize(garbage_a, collected.append, "cycle")
        del garbage_a, garbage_b
        survivor = Node()
        assert collected == []
        before = gc.get_freeze_count()
        frozen = heap.settle()
        assert collected == ["cycle"]
        assert frozen == gc.get_freeze_count() > before
        assert not any(o is survivor for o in gc.get_objects())  # frozen: never scanned
    finally:
        gc.unfreeze()
        gc.enable()
    assert any(o is survivor for o in gc.get_objects())
