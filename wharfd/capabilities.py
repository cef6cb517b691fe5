"""Every capability of the core, imported by each process's composition (``runtime``).

A capability that reacts to another's event registers its reaction in that capability's
hook list when its package is imported: worktrees in ``trash.PURGE_BLOCKERS``, assets in
``trash.UNITS_PURGED``, issues in ``trash.NODES_PURGED``, webhooks in
``operations.finish.FINISHED_HOOKS``. A process that imported only the capabilities its
entry point names would miss some (a worker that purges trash has no reason of its own to
import issues), so every process imports them all here.
``tests/architecture/test_hook_lists.py`` checks it in a fresh interpreter.
"""
from __future__ import annotations

import wharf.accounts
import wharf.assets
import wharf.blobs
import wharf.dashboard
import wharf.deletion
import wharf.fsck
import wharf.identity
import wharf.issues
import wharf.recent
import wharf.retention
import wharf.sharing
import wharf.spaces
import wharf.trash
import wharf.units
import wharf.webhooks
import wharf.worktrees

CAPABILITIES = (wharf.accounts, wharf.assets, wharf.blobs, wharf.dashboard, wharf.deletion,
                wharf.fsck, wharf.identity, wharf.issues, wharf.recent, wharf.retention,
                wharf.sharing, wharf.spaces, wharf.trash, wharf.units, wharf.webhooks,
                wharf.worktrees)
