"""The kinds of the worktrees capability, their payloads and results, declared once here
(``wharf.operations.registry``): ``create_worktree``, ``discard_worktree`` (its failure
gives the worktree back its state: discard again instead of retrying),
``add_worktree_unit``, ``create_worktree_unit``, ``merge_worktree`` and
``activate_worktree_resource``."""
from __future__ import annotations

from typing import Any

from wharf.operations.kinds import Shape
from wharf.operations.registry import Collaborators, KindSpec, register

CREATE_WORKTREE = "create_worktree"
DISCARD_WORKTREE = "discard_worktree"
ADD_WORKTREE_UNIT = "add_worktree_unit"
CREATE_WORKTREE_UNIT = "create_worktree_unit"
MERGE_WORKTREE = "merge_worktree"
ACTIVATE_WORKTREE_RESOURCE = "activate_worktree_resource"


class CreateWorktreePayload(Shape, frozen=True):
    """The new worktree, its id fixed at submission (``team_space_id`` None: a user
    worktree, always ``private``)."""

    worktree_id: str
    kind: str
    name: str
    summary: str | None
    team_space_id: str | None
    visibility: str


class CreateWorktreeResult(Shape, frozen=True):
    worktree_id: str


class DiscardWorktreePayload(Shape, frozen=True):
    """The worktree being discarded and the state it left at submission (restored if
    the operation fails)."""

    worktree_id: str
    from_state: str


class DiscardWorktreeResult(Shape, frozen=True):
    worktree_id: str
    state: str
    assets_deleted: int
    uploads_cancelled: int
    intents_discarded: int


# --- add_worktree_unit, create_worktree_unit (wharf/worktrees/units.py) ---------------

class AddWorktreeUnitPayload(Shape, frozen=True):
    """A trunk unit to add to a worktree: its draft is forked from the trunk head."""

    worktree_id: str
    resource_id: str
    unit_id: str
    unit_type: str


class AddWorktreeUnitResult(Shape, frozen=True):
    worktree_id: str
    unit_id: str
    resource_id: str
    base_revision: int


class CreateWorktreeUnitPayload(Shape, frozen=True):
    """A unit new in the worktree, its ids fixed at submission (``resource_id`` and
    ``node_id`` are reserved: they exist once a merge activates the unit), where its node
    will be created, and its first document (None: the type's initial snapshot)."""

    worktree_id: str
    unit_id: str
    resource_id: str
    node_id: str
    unit_type: str
    name: str
    space_id: str
    parent_id: str | None
    initial_snapshot: dict[str, Any] | None = None


class CreateWorktreeUnitResult(Shape, frozen=True):
    worktree_id: str
    unit_id: str
    resource_id: str
    node_id: str
# --- merge_worktree (wharf/worktrees/merging.py) -------------------------------------

class MergeWorktreePayload(Shape, frozen=True):
    """The worktree being merged (it is ``merging``, held by this operation)."""

    worktree_id: str


class MergeUnitResult(Shape, frozen=True):
    """One unit's outcome (``unchanged``, ``fast_forward``, ``merged``, ``created``,
    ``conflict`` or ``activation_blocked``); ``conflict_count``: all its conflicts;
    ``conflicts``: a bounded sample (the first 3 of the unit, 10 in the whole result, each
    path and value clipped to 128 bytes of JSON); the full list is the unit's
    ``/conflicts``."""

    unit_id: str
    resource_id: str
    node_id: str | None
    outcome: str
    trunk_revision_before: int | None
    trunk_revision_after: int | None
    conflict_count: int
    conflicts: list[dict[str, Any]]


class MergeWorktreeResult(Shape, frozen=True):
    """A bounded summary (under 64 KiB): ``counts`` has every unit, ``units`` the first
    200 in ordinal order (``units_truncated`` when there are more)."""

    worktree_id: str
    state: str
    counts: dict[str, int]
    assets_published: int
    units: list[MergeUnitResult]
    units_truncated: bool = False


# --- activate_worktree_resource (wharf/worktrees/activation.py) ------------------------

class ActivateWorktreeResourcePayload(Shape, frozen=True):
    """A unit new in a worktree, in trunk already, whose node's activation was blocked
    (its target folder went away): its node is created at the intent's (new) target."""

    worktree_id: str
    unit_id: str
    node_id: str
    resource_id: str


class ActivateWorktreeResourceResult(Shape, frozen=True):
    worktree_id: str
    unit_id: str
    node_id: str
    resource_id: str



def _create_worktree(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.worktrees.handlers import CreateWorktree
    return CreateWorktree(c.settings)


def _discard_worktree(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.worktrees.handlers import DiscardWorktree
    return DiscardWorktree(c.db, c.unitstore, c.settings)


def _add_worktree_unit(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.worktrees.unit_handlers import AddWorktreeUnit
    return AddWorktreeUnit(c.db, c.unitstore, c.settings)


def _create_worktree_unit(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.worktrees.unit_handlers import CreateWorktreeUnit
    return CreateWorktreeUnit(c.db, c.unitstore, c.settings)


def _merge_worktree(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.worktrees.merging import MergeWorktree
    return MergeWorktree(c.db, c.unitstore, c.settings)


def _activate_worktree_resource(c: Collaborators) -> object:
    # imported here: the handler's module imports this one
    from wharf.worktrees.activation import ActivateWorktreeResource
    return ActivateWorktreeResource(c.db, c.unitstore)


register(KindSpec(
    name=CREATE_WORKTREE, payload=CreateWorktreePayload, result=CreateWorktreeResult,
    handler=_create_worktree,
    doc="``create_worktree``: a worktree created (POST /api/worktrees).",
    result_doc="Once completed: the new worktree."))
register(KindSpec(
    name=DISCARD_WORKTREE, payload=DiscardWorktreePayload, result=DiscardWorktreeResult,
    handler=_discard_worktree, failure_consumes_input=True,
    doc="``discard_worktree``: a worktree discarded, its assets deleted.",
    result_doc="Once completed: what the discard deleted and cancelled."))
register(KindSpec(
    name=ADD_WORKTREE_UNIT, payload=AddWorktreeUnitPayload, result=AddWorktreeUnitResult,
    handler=_add_worktree_unit,
    doc="``add_worktree_unit``: a trunk unit added to a worktree (its draft forked).",
    result_doc="Once completed: the unit and the trunk revision its draft starts at."))
register(KindSpec(
    name=CREATE_WORKTREE_UNIT, payload=CreateWorktreeUnitPayload,
    result=CreateWorktreeUnitResult, handler=_create_worktree_unit,
    doc="``create_worktree_unit``: a unit new in a worktree (node created at merge).",
    result_doc="Once completed: the unit and its reserved resource and node ids."))
register(KindSpec(
    name=MERGE_WORKTREE, payload=MergeWorktreePayload, result=MergeWorktreeResult,
    handler=_merge_worktree,
    doc="``merge_worktree``: a ready worktree merged into trunk, unit by unit.",
    result_doc="Once completed: each unit's outcome and the worktree's new state "
               "(a conflict is an outcome, not a failure); a bounded summary (under "
               "64 KiB): each unit's conflicts are a clipped sample, read them all "
               "through the unit's `/conflicts`."))
register(KindSpec(
    name=ACTIVATE_WORKTREE_RESOURCE, payload=ActivateWorktreeResourcePayload,
    result=ActivateWorktreeResourceResult, handler=_activate_worktree_resource,
    doc="``activate_worktree_resource``: the node of a merged unit, blocked at the merge,\n"
        "    created at its (new) target.",
    result_doc="Once completed: the unit and its new node and resource."))
