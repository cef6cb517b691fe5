"""Protected ranges: content permission objects inside a unit (issue 42,
docs/protection.md).

An object's ACL (its scopes, strategies and explicit collaborators) is product data
(:mod:`wharf.protection.service`); its target, a JSON Pointer prefix of the document, is
bound in the document itself (:mod:`wharf.protection.binding`), so a worktree draft sees
the bindings of its base and a merge those of trunk when it commits. Who may do what:
:mod:`wharf.protection.rules`; which operations touch a target:
:mod:`wharf.protection.pointers`; where it is enforced: :mod:`wharf.protection.enforce`.
"""
from __future__ import annotations

from wharf.infra.hooks import register
from wharf.protection.enforce import check_trunk
from wharf.protection.lifecycle import units_purged
from wharf.trash import service as trash
from wharf.units import service as units

# Every process imports this package (wharf.capabilities): a purged unit's objects go in
# the purge's transaction, and every trunk changeset is checked.
register(trash.UNITS_PURGED, units_purged)
register(units.CHANGESET_GUARDS, check_trunk)
