"""A capability reacts to another's event through the event owner's hook list, and every
process registers every reaction: the composition root imports each capability
(``wharfd.capabilities``). Checked in a fresh interpreter, where nothing else has imported
the reacting capabilities, from each process's entry module."""
from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
import importlib
importlib.import_module(sys.argv[1])
from wharf.operations.finish import FINISHED_HOOKS
from wharf.trash.service import NODES_PURGED, PURGE_BLOCKERS, UNITS_PURGED
from wharf.worktrees.reactions import DROP_REACTIONS
from wharf.units.service import CHANGESET_GUARDS
print(json.dumps({
    "finished": sorted(h.__module__ for h in FINISHED_HOOKS),
    "units_purged": sorted(h.__module__ for h in UNITS_PURGED),
    "nodes_purged": sorted(h.__module__ for h in NODES_PURGED),
    "purge_blockers": sorted(type(b).__module__ for b in PURGE_BLOCKERS),
    "worktree_dropped": sorted(h.__module__ for h in DROP_REACTIONS),
    "changeset_guards": sorted(h.__module__ for h in CHANGESET_GUARDS),
}))
"""


def registered(entry: str) -> dict[str, list[str]]:
    out = subprocess.run([sys.executable, "-c", PROBE, entry], capture_output=True,
                         text=True, check=True, timeout=120)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def test_every_process_registers_every_reaction():
    """``wharfd.runtime`` builds every process (API, worker, scheduler, embedded)."""
    assert registered("wharfd.runtime") == {
        "finished": ["wharf.webhooks"],
        "units_purged": ["wharf.assets.lifecycle", "wharf.comments.lifecycle",
                         "wharf.protection.lifecycle"],
        "nodes_purged": ["wharf.issues.labels"],
        "purge_blockers": ["wharf.worktrees.blockers"],
        "worktree_dropped": ["wharf.assets.lifecycle"],
        "changeset_guards": ["wharf.protection.enforce"],
    }


def test_the_engine_alone_registers_nothing():
    """The check can fail: the operations engine imported alone knows no capability, so
    no reaction is registered until the composition root imports them. (The probe's own
    import of ``wharf.worktrees.reactions`` loads the worktrees package, whose blocker
    registers: only what reacts to trash and worktrees from above is missing.)"""
    assert registered("wharf.operations.executor") == {
        "finished": [], "units_purged": [], "nodes_purged": [], "purge_blockers": ["wharf.worktrees.blockers"],
        "worktree_dropped": [], "changeset_guards": []}
