"""``has_children`` on node listings (issue 41 item 4): one correlated ``EXISTS`` in the
page's SELECT, trashed children left out, on both databases."""
from __future__ import annotations

import threading

import pytest
from sqlalchemy import event, insert

from storage.models import Node
from tests.support.foundation import make_node, team_space
from wharf.infra.ids import new_id

pytestmark = pytest.mark.both_databases


def _flags(page: dict) -> dict[str, bool]:
    return {n["name"]: n["has_children"] for n in page["items"]}


def test_listings_say_which_nodes_have_children(world):
    alice = world.user("alice")
    sp = team_space(alice)["id"]
    full = make_node(alice, sp, "full")["id"]
    make_node(alice, sp, "empty")
    only_trashed = make_node(alice, sp, "only-trashed")["id"]
    gone = make_node(alice, sp, "gone", only_trashed)["id"]
    assert alice.post(f"/api/nodes/{gone}/trash").status_code == 200
    mixed = make_node(alice, sp, "mixed")["id"]
    make_node(alice, sp, "kept", mixed)
    assert alice.post(f"/api/nodes/{make_node(alice, sp, 'binned', mixed)['id']}/trash"
                      ).status_code == 200
    inner = make_node(alice, sp, "inner", full)["id"]
    make_node(alice, sp, "leaf", inner)

    roots = alice.get(f"/api/spaces/{sp}/nodes").json
    assert _flags(roots) == {"empty": False, "full": True, "mixed": True,
                             "only-trashed": False}
    assert _flags(alice.get(f"/api/nodes/{full}/children").json) == {"inner": True}
    assert _flags(alice.get(f"/api/nodes/{inner}/children").json) == {"leaf": False}
    # restoring the trashed child brings the expander back
    batch = alice.get(f"/api/spaces/{sp}/trash").json["items"]
    restore = next(b for b in batch if b["root_node_id"] == gone)["id"]
    assert alice.post(f"/api/trash-batches/{restore}/restore").status_code == 200
    assert _flags(alice.get(f"/api/spaces/{sp}/nodes").json)["only-trashed"] is True
    # the single-node read is unchanged: the flag is a listing's
    assert "has_children" not in alice.get(f"/api/nodes/{full}").json


def test_has_children_costs_no_statement_per_row(world, db):
    """The flag is evaluated inside the page's own SELECT: one statement with an
    ``EXISTS`` whether the page holds 3 nodes or 60, and no statement per row that reads
    a node's children. (The caller's access to each node is still resolved per row, as
    before: that cost is the same with or without the flag.)"""
    alice = world.user("alice")
    sp = alice.personal_space_id
    small, big = make_node(alice, sp, "small")["id"], make_node(alice, sp, "big")["id"]
    rows = []
    for parent, count in ((small, 3), (big, 60)):
        for i in range(count):
            nid = new_id()
            rows.append(dict(id=nid, space_id=sp, parent_id=parent, name=f"n{i:02}",
                             created_by=alice.user_id))
            if i % 2:
                rows.append(dict(id=new_id(), space_id=sp, parent_id=nid, name="c",
                                 created_by=alice.user_id))
    with db.write() as s:
        s.execute(insert(Node), rows)
    me = threading.get_ident()

    def counted(parent: str) -> tuple[int, dict]:
        statements: list[str] = []

        def count(conn, cursor, statement, parameters, context, executemany):
            if threading.get_ident() == me:
                statements.append(" ".join(statement.split()).upper())

        engines = {db.write_engine, db.read_engine}
        for engine in engines:
            event.listen(engine, "before_cursor_execute", count)
        try:
            r = alice.get(f"/api/nodes/{parent}/children", params={"limit": "100"})
        finally:
            for engine in engines:
                event.remove(engine, "before_cursor_execute", count)
        assert r.status_code == 200, r.text
        return [st for st in statements if "EXISTS" in st], r.json

    few, small_page = counted(small)
    many, big_page = counted(big)
    assert len(few) == len(many) == 1, (few, many)
    assert "LIMIT" in many[0]  # the page's own SELECT
    assert [n["has_children"] for n in big_page["items"]] == [bool(i % 2) for i in range(60)]
    assert len(small_page["items"]) == 3
