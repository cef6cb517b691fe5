"""Every capability of the core: importing this module imports them all.

A capability registers in lists owned by the engine or by capabilities below it when its
package is imported: its operation kinds in ``wharf.operations.registry.KINDS``, and its
reactions to another's event in that capability's hook list (worktrees in
``trash.PURGE_BLOCKERS``, assets, comments and protection in ``trash.UNITS_PURGED``,
issues in ``trash.NODES_PURGED``, webhooks in ``operations.finish.FINISHED_HOOKS``,
protection in ``units.CHANGESET_GUARDS``). A process that imported only the capabilities its
entry point names would miss some (a worker that purges trash has no reason of its own to
import issues), so every process imports them all: the composition root through
``wharfd.capabilities``, and the API's operation schemas (the tagged union of every
kind, built when ``api.schemas.operations`` is imported) through this module.
``tests/architecture/test_hook_lists.py`` checks it in a fresh interpreter.

The top of the core's layers (``core-layers``): nothing in ``wharf`` imports it.
"""
from __future__ import annotations

# ruff: noqa: F401  (each import is the point: the capability registers its kinds and hooks)
import wharf.accounts
import wharf.assets
import wharf.blobs
import wharf.comments
import wharf.dashboard
import wharf.deletion
import wharf.exchange.export_kinds  # (the package itself registers nothing: its __init__)
import wharf.exchange.import_kinds
import wharf.exchange.takeout_kinds
import wharf.feed
import wharf.fsck
import wharf.identity
import wharf.issues
import wharf.protection
import wharf.recent
import wharf.retention
import wharf.sharing
import wharf.spaces
import wharf.trash
import wharf.units
import wharf.webhooks
import wharf.worktrees
