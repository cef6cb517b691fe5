"""Which RFC 6902 operations touch a protected JSON Pointer prefix
(wharf.protection.pointers, docs/protection.md "What a changeset may not do"), table
driven against one document: whole reference tokens, escaped pointers, ancestors up to
the root, move/copy out of and into a range, array positions shifting under a protected
element (and member names that only look like indexes), the bindings themselves."""
from __future__ import annotations

from wharf.protection.pointers import bindings_of, first_violation, protected

DOC = {"type": "sheet", "schemaVersion": 1,
       "body": {"a": {"b": 1, "bc": 2}, "x/y": {"k": 1}, "t~n": 3,
                "rows": [0, 1, 2, {"name": "r3"}, 4],
                "cellData": {"1": {}, "3": {"0": {"v": 1}}}},
       "protection": {"p1": "/body/a/b", "p2": "/body/x~1y", "p3": "/body/t~0n",
                      "p4": "/body/rows/3", "p5": "/body/cellData/3",
                      "gone": "/body/zzz", "p6": "not a pointer"}}
KNOWN = {"p1", "p2", "p3", "p4", "p5", "p6"}  # "gone": an object since deleted

# (operation, refused object id or None when allowed, or "reserved" for /protection)
CASES = [
    # /a/b protects /a/b and below, not its sibling /a/bc
    ({"op": "replace", "path": "/body/a/b", "value": 2}, "p1"),
    ({"op": "add", "path": "/body/a/b/c", "value": 2}, "p1"),
    ({"op": "replace", "path": "/body/a/bc", "value": 3}, None),
    ({"op": "add", "path": "/body/a/bcd", "value": 3}, None),
    # ancestors: replacing or removing what contains it, up to the root
    ({"op": "replace", "path": "/body/a", "value": {}}, "p1"),
    ({"op": "remove", "path": "/body"}, "p1"),
    ({"op": "replace", "path": "", "value": {"type": "sheet", "schemaVersion": 1, "body": {},
                                            "protection": DOC["protection"]}}, "p1"),
    # escaped pointers compare decoded: /x~1y is the member "x/y", /t~0n is "t~n"
    ({"op": "replace", "path": "/body/x~1y/k", "value": 2}, "p2"),
    ({"op": "add", "path": "/body/x", "value": {}}, None),
    ({"op": "replace", "path": "/body/t~0n", "value": 4}, "p3"),
    ({"op": "replace", "path": "/body/t~1n", "value": 4}, None),
    # move and copy out of it, into it, or over an ancestor
    ({"op": "move", "from": "/body/a/b", "path": "/body/z"}, "p1"),
    ({"op": "copy", "from": "/body/a/b", "path": "/body/z"}, "p1"),
    ({"op": "copy", "from": "/body/a/bc", "path": "/body/a/b"}, "p1"),
    ({"op": "move", "from": "/body/a", "path": "/body/q"}, "p1"),
    ({"op": "move", "from": "/body/a/bc", "path": "/body/q"}, None),
    # test changes nothing
    ({"op": "test", "path": "/body/a/b", "value": 1}, None),
    # arrays: /rows/3 is index 3 when checked; inserting or removing at or before it
    # shifts it, after it or appending does not, replacing another element does not
    ({"op": "add", "path": "/body/rows/1", "value": 9}, "p4"),
    ({"op": "add", "path": "/body/rows/3", "value": 9}, "p4"),
    ({"op": "remove", "path": "/body/rows/0"}, "p4"),
    ({"op": "move", "from": "/body/rows/2", "path": "/body/z"}, "p4"),
    ({"op": "copy", "from": "/body/a/bc", "path": "/body/rows/2"}, "p4"),
    ({"op": "add", "path": "/body/rows/4", "value": 9}, None),
    ({"op": "remove", "path": "/body/rows/4"}, None),
    ({"op": "add", "path": "/body/rows/-", "value": 9}, None),
    ({"op": "replace", "path": "/body/rows/1", "value": 9}, None),
    ({"op": "replace", "path": "/body/rows/3/name", "value": "x"}, "p4"),
    # cellData rows are object members named like numbers: nothing shifts
    ({"op": "add", "path": "/body/cellData/2", "value": {}}, None),
    ({"op": "remove", "path": "/body/cellData/1"}, None),
    ({"op": "add", "path": "/body/cellData/3/1", "value": {"v": 2}}, "p5"),
    # the bindings change only through the routes; a deleted object protects nothing
    ({"op": "remove", "path": "/protection/p1"}, "reserved"),
    ({"op": "add", "path": "/protection/new", "value": "/body"}, "reserved"),
    ({"op": "copy", "from": "/body/a/bc", "path": "/protection"}, "reserved"),
    ({"op": "replace", "path": "/body/zzz", "value": 1}, None),
]


def test_each_operation_against_the_bindings():
    bound = protected(bindings_of(DOC), DOC, KNOWN.__contains__)
    assert [p.object_id for p in bound] == ["p1", "p2", "p3", "p4", "p5"]  # p6: no pointer
    wrong = []
    for op, expected in CASES:
        v = first_violation([op], bound, lambda _: False, bindings_of(DOC))
        got = None if v is None else ("reserved" if v.object_id not in KNOWN or
                                      op.get("path", "").startswith("/protection")
                                      else v.object_id)
        if got != expected:
            wrong.append((op, expected, got))
    assert wrong == []


def test_rights_op_index_and_root_writes():
    bound = protected(bindings_of(DOC), DOC, KNOWN.__contains__)
    asked = []

    def only_p1(object_id: str) -> bool:
        asked.append(object_id)
        return object_id == "p1"

    changes = [{"op": "replace", "path": "/body/a/b", "value": 5},      # p1: allowed
               {"op": "test", "path": "/body/x~1y", "value": {}},       # read only
               {"op": "replace", "path": "/body/a/b", "value": 6},
               {"op": "add", "path": "/body/rows/0", "value": 9}]       # shifts p4
    v = first_violation(changes, bound, only_p1, bindings_of(DOC))
    assert (v.object_id, v.op_index) == ("p4", 3)
    assert asked == ["p1", "p4"]  # each object's right is asked once
    # an actor who may edit everything replaces the root only if it keeps the bindings
    everything = {**DOC, "body": {}}
    assert first_violation([{"op": "replace", "path": "", "value": everything}], bound,
                           lambda _: True, bindings_of(DOC)) is None
    dropped = {k: v for k, v in everything.items() if k != "protection"}
    v = first_violation([{"op": "replace", "path": "", "value": dropped}], bound,
                        lambda _: True, bindings_of(DOC))
    assert v is not None and v.object_id is None
    # a unit without objects: only the syntactic check of /protection
    assert first_violation([{"op": "add", "path": "/protection", "value": {}}], [],
                           lambda _: True, None) is not None
    assert first_violation([{"op": "replace", "path": "", "value": {"body": {}}}], [],
                           lambda _: True, None) is None
    assert first_violation([{"op": "replace", "path": "",
                             "value": {"body": {}, "protection": {"x": "/body"}}}], [],
                           lambda _: True, None) is not None
