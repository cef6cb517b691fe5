"""Start-up objects are kept out of the cyclic collector's full collections
(``wharfd.heap``): every long-running process (an API worker, a worker or scheduler process,
``wharf serve``) freezes what it built before it serves, so a full collection scans what
requests leave behind, not the whole process (it stalled an API worker 90-140 ms under load
before)."""
from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import wharf_env
from wharfd import heap

REPO = Path(__file__).resolve().parents[1]

# Builds one process the way its command does, then reports the collector's state as it
# starts serving: how many objects are frozen, how many a full collection would scan.
_PROCESS = """
import gc, json, sys
from wharfd import cli

def report(*_args):
    print("HEAP " + json.dumps({"frozen": gc.get_freeze_count(),
                                "tracked": len(gc.get_objects())}), flush=True)

which = sys.argv[1]
if which == "api":
    import wharfd.wsgi
    report()
elif which == "worker":
    from wharf.config import Settings
    cli._components(Settings.from_env())
    report()
else:
    from wharf import serving
    serving.serve_until = report  # serve: report where it would start serving, then stop
    cli.main(["serve"])
"""


def _heap_of(tmp_path: Path, which: str) -> dict[str, int]:
    env = wharf_env(tmp_path, WHARF_PORT="0", PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", _PROCESS, which], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("HEAP "))
    return json.loads(line[5:])


@pytest.mark.slow
@pytest.mark.parametrize("which", ["api", "worker", "serve"])
def test_a_process_freezes_what_it_built_before_it_serves(tmp_path, which):
    state = _heap_of(tmp_path, which)
    # Tens of thousands of objects (modules, the app, mappers, schemas, actors) are built at
    # start; a full collection now scans a small fraction of them.
    assert state["frozen"] > 50_000, state
    assert state["tracked"] < state["frozen"] / 10, state


def test_settle_collects_garbage_then_freezes_the_survivors():
    class Node:
        def __init__(self) -> None:
            self.other: Node | None = None

    collected: list[str] = []
    garbage_a, garbage_b = Node(), Node()
    garbage_a.other, garbage_b.other = garbage_b, garbage_a  # a cycle only gc frees
    import weakref
    weakref.finalize(garbage_a, collected.append, "cycle")
    del garbage_a, garbage_b
    survivor = Node()
    gc.disable()  # no automatic collection between the steps below
    try:
        before = gc.get_freeze_count()
        frozen = heap.settle()
        assert collected == ["cycle"]
        assert frozen == gc.get_freeze_count() > before
        assert not any(o is survivor for o in gc.get_objects())  # frozen: never scanned
    finally:
        gc.unfreeze()
        gc.enable()
    assert any(o is survivor for o in gc.get_objects())
