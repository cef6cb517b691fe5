"""One answer to "what may this caller do with this worktree unit?" (spec assets-worktrees
§5), asked by every path that needs it: the worktree's own requests
(``wharf.worktrees.access.unit_access``: review lists and reads the unit, edits need its
edit right), the merge (``POST …/merge``: 409 ``unit_unavailable`` for a unit whose node or
target folder is trashed or gone, 403 for a refused edit right) and the worktree scope of
an asset (``wharf.assets.scope.check``: 404 without read, 403 with read but no edit).

The rule pinned here, for a unit of alice's user worktree:

- a trunk unit (or a local one a merge activated): *read* / *edit* = viewer / editor on its
  node; a trashed or vanished node is *unavailable* and allows nothing;
- a local unit still to be created: *read* = a viewer role in its target space, and in a
  user worktree (only its creator discovers it) always: the draft is the worktree's own,
  a trashed target or a role lost since hides nothing (tests/worktrees/test_purge_worktrees.py: a
  revoked grantee still lists his unit); *edit* = the right to create in its target
  (``resolve_parent``); a trashed or vanished target is *unavailable* (409 to a merge),
  a target the caller may not create in is refused (403 to a merge, not *unavailable*).

Each case goes through all three paths, so a path that answers on its own fails it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from sqlalchemy import select, update

from storage.models import Worktree, WorktreeNodeIntent
from tests.support.foundation import assert_problem, make_node
from tests.worktrees.test_worktree_merge import (
    add_local_unit,
    add_trunk_unit,
    make_doc,
    make_worktree,
    merge,
)
from wharf.assets import scope
from wharf.infra.context import Principal
from wharf.infra.errors import Forbidden, NotFound
from wharf.worktrees import access

DOC = {"type": "doc", "schemaVersion": 1, "body": {}}


@dataclass(frozen=True)
class Case:
    setup: Callable[..., str]   # (components, db, alice, bob, wt) -> unit id
    read: bool
    edit: bool
    available: bool

    @property
    def merge(self) -> tuple[int, str | None]:
        if not self.available:
            return 409, "unit_unavailable"
        return (202, None) if self.edit else (403, None)


def _grant(owner, node_id: str, user_id: str, role: str) -> None:
    r = owner.put(f"/api/nodes/{node_id}/grants/{user_id}", json={"role": role})
    assert r.status_code in (200, 201), r.text


def _trunk(components, db, owner, wt: str, alice) -> dict:
    doc = make_doc(components, owner, {"a": 1})
    add_trunk_unit(components, db, wt, alice.user_id, doc, 0)
    return doc


def _local(components, db, alice, wt: str, space_id: str, parent_id: str | None) -> str:
    unit = add_local_unit(components, db, wt, alice, 0, DOC)
    with db.write() as s:
        s.execute(update(WorktreeNodeIntent).where(
            WorktreeNodeIntent.worktree_id == wt,
            WorktreeNodeIntent.unit_id == unit["unit_id"]).values(
            target_space_id=space_id, target_parent_id=parent_id))
    return unit["unit_id"]


def own_trunk(components, db, alice, bob, wt):
    return _trunk(components, db, alice, wt, alice)["unit_id"]


def trunk_viewer_grant(components, db, alice, bob, wt):
    doc = _trunk(components, db, bob, wt, alice)
    _grant(bob, doc["node_id"], alice.user_id, "viewer")
    return doc["unit_id"]


def trunk_no_role(components, db, alice, bob, wt):
    return _trunk(components, db, bob, wt, alice)["unit_id"]


def trunk_trashed(components, db, alice, bob, wt):
    doc = _trunk(components, db, alice, wt, alice)
    assert alice.post(f"/api/nodes/{doc['node_id']}/trash").status_code in (200, 201)
    return doc["unit_id"]


def local_own_root(components, db, alice, bob, wt):
    return _local(components, db, alice, wt, alice.personal_space_id, None)


def local_target_trashed(components, db, alice, bob, wt):
    folder = make_node(alice, alice.personal_space_id, "Target")["id"]
    unit_id = _local(components, db, alice, wt, alice.personal_space_id, folder)
    assert alice.post(f"/api/nodes/{folder}/trash").status_code in (200, 201)
    return unit_id


def local_editor_grant(components, db, alice, bob, wt):
    folder = make_node(bob, bob.personal_space_id, "Shared")["id"]
    _grant(bob, folder, alice.user_id, "editor")
    return _local(components, db, alice, wt, bob.personal_space_id, folder)


def local_viewer_grant(components, db, alice, bob, wt):
    folder = make_node(bob, bob.personal_space_id, "Shared")["id"]
    _grant(bob, folder, alice.user_id, "viewer")
    return _local(components, db, alice, wt, bob.personal_space_id, folder)


def local_no_role_root(components, db, alice, bob, wt):
    return _local(components, db, alice, wt, bob.personal_space_id, None)


def local_no_role_folder(components, db, alice, bob, wt):
    folder = make_node(bob, bob.personal_space_id, "Private")["id"]
    return _local(components, db, alice, wt, bob.personal_space_id, folder)


CASES = {
    "own_trunk": Case(own_trunk, read=True, edit=True, available=True),
    "trunk_viewer_grant": Case(trunk_viewer_grant, read=True, edit=False, available=True),
    "trunk_no_role": Case(trunk_no_role, read=False, edit=False, available=True),
    "trunk_trashed": Case(trunk_trashed, read=False, edit=False, available=False),
    "local_own_root": Case(local_own_root, read=True, edit=True, available=True),
    "local_target_trashed": Case(local_target_trashed, read=True, edit=False,
                                 available=False),
    "local_editor_grant": Case(local_editor_grant, read=True, edit=True, available=True),
    "local_viewer_grant": Case(local_viewer_grant, read=True, edit=False, available=True),
    "local_no_role_root": Case(local_no_role_root, read=True, edit=False, available=True),
    "local_no_role_folder": Case(local_no_role_folder, read=True, edit=False,
                                 available=True),
}


def _scope_answer(db, principal: Principal, wt: str, unit_id: str, action: str) -> int:
    with db.read() as s:
        try:
            scope.check(s, principal, unit_id, wt, action, check_state=False)
        except NotFound:
            return 404
        except Forbidden:
            return 403
    return 200


@pytest.mark.parametrize("name", list(CASES))
def test_one_answer_per_worktree_unit(world, components, db, name):
    case = CASES[name]
    alice, bob = world.user("alice"), world.user("bob")
    wt = make_worktree(components, alice)
    unit_id = case.setup(components, db, alice, bob, wt)
    principal = Principal(kind="user", user_id=alice.user_id, username="alice")

    # the worktree's own answer
    with db.read() as s:
        row = s.get(Worktree, wt)
        rights = access.unit_access(s, principal, row, only=unit_id)[unit_id]
        assert (rights.read, rights.edit, rights.available) == \
            (case.read, case.edit, case.available)
    got = alice.get(f"/api/worktrees/{wt}/units/{unit_id}")
    assert got.status_code == (200 if case.read else 404), got.text

    # an asset in the worktree's scope: reading needs read (404), uploading edit (403
    # when the unit can be read)
    assert _scope_answer(db, principal, wt, unit_id, scope.READ) == \
        (200 if case.read else 404)
    assert _scope_answer(db, principal, wt, unit_id, scope.EDIT) == \
        (200 if case.edit else 403 if case.read else 404)

    # the merge: every unit available (409), then every unit's edit right (403)
    with db.write() as s:
        s.execute(update(Worktree).where(Worktree.id == wt).values(state="ready"))
    status, code = case.merge
    r = merge(alice, wt)
    if status == 202:
        assert r.status_code == 202, r.text
    else:
        problem = assert_problem(r, status, code)
        if code == "unit_unavailable":
            assert problem["details"]["unit_ids"] == [unit_id]
        with db.read() as s:
            assert s.scalar(select(Worktree.state).where(Worktree.id == wt)) == "ready"
