"""wharf/worktrees/merge.py: the three-way JSON merge (spec assets-worktrees.md §8.3-§8.7, §17).

Worked examples of §8.6 as plain tests, the equality rules of §8.4, conflict records of §8.5
(cap, truncation), the root rule, rebase with resolutions (§8.7), then Hypothesis
properties: merge(b, b, d) == d, merge(b, t, b) == t, symmetry of conflict paths, the patch
applied to trunk gives the merged document (with ``jsonpatch`` and with Wharf's own applier,
``storage.unitpatch``), every path changed by one side only holds that side's value, inputs
never modified, rebase consistent with merge.

Pure functions, no services: the whole module runs in a few seconds.
"""
from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

import jsonpatch
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from jsonpointer import JsonPointer

from storage.unitpatch import UnitLimits, apply_changeset, parse_changeset
from wharf.worktrees.merge import (
    ABSENT,
    MAX_CONFLICT_VALUE_BYTES,
    MAX_CONFLICTS,
    Conflict,
    MergeTooDeep,
    UnknownConflictPaths,
    UnresolvedConflicts,
    diff,
    merge,
    rebase,
    same,
    same_within,
)
from wharf.worktrees.touched import touched_paths

BIG = UnitLimits(max_bytes=1 << 30, max_ops=1 << 30, max_depth=10_000)


def apply(doc: Any, patch: list[dict[str, Any]]) -> Any:
    """``patch`` applied to a copy of ``doc`` by jsonpatch and by storage.unitpatch (the
    applier Wharf writes revisions with); both must agree."""
    by_jsonpatch = jsonpatch.apply_patch(copy.deepcopy(doc), patch)
    if patch:
        ours = apply_changeset(copy.deepcopy(doc), parse_changeset(patch, BIG), BIG,
                               lambda: 0)
        assert ours == by_jsonpatch
    return by_jsonpatch


def sheet() -> dict[str, Any]:
    """The base of §8.6."""
    return {"sheets": {"s1": {"name": "Q1",
                              "cellData": {"0": {"0": {"v": 1}}, "1": {"0": {"v": 2}}}},
                       "s2": {"name": "Old", "cellData": {}}},
            "sheetOrder": ["s1", "s2"]}


def paths(result) -> list[str]:
    return [c.path for c in result.conflicts]


# --- §8.6 worked examples ------------------------------------------------------------------

def _example_1() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    base = sheet()
    trunk = sheet()
    trunk["sheets"]["s1"]["cellData"]["0"]["0"]["v"] = 10
    draft = sheet()
    draft["sheets"]["s1"]["cellData"]["1"]["0"]["v"] = 20
    draft["sheets"]["s1"]["cellData"]["2"] = {"0": {"v": 3}}
    return base, trunk, draft


def _example_2() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    base, trunk, draft = _example_1()
    draft["sheets"]["s1"]["cellData"]["0"]["0"]["v"] = 11
    del trunk["sheets"]["s2"]
    trunk["sheetOrder"] = ["s1"]
    draft["sheets"]["s2"]["name"] = "Renamed"
    return base, trunk, draft


def test_example_1_clean_three_way():
    base, trunk, draft = _example_1()
    result = merge(base, trunk, draft)
    assert result.outcome == "merged"
    assert result.patch == [
        {"op": "replace", "path": "/sheets/s1/cellData/1/0/v", "value": 20},
        {"op": "add", "path": "/sheets/s1/cellData/2", "value": {"0": {"v": 3}}}]
    assert result.conflicts == [] and result.conflict_count == 0 and not result.truncated
    merged = result.merged
    assert merged["sheets"]["s1"]["cellData"] == {
        "0": {"0": {"v": 10}}, "1": {"0": {"v": 20}}, "2": {"0": {"v": 3}}}
    assert apply(trunk, result.patch) == merged


def test_example_2_conflict():
    base, trunk, draft = _example_2()
    result = merge(base, trunk, draft)
    assert result.outcome == "conflict"
    assert [c.to_json() for c in result.conflicts] == [
        {"path": "/sheets/s1/cellData/0/0/v", "base": 1, "trunk": 10, "draft": 11},
        {"path": "/sheets/s2", "base": {"name": "Old", "cellData": {}},
         "draft": {"name": "Renamed", "cellData": {}}}]
    assert result.conflict_count == 2
    # sheetOrder is not a conflict (only trunk changed it); trunk's values stay at conflicts
    assert result.merged["sheetOrder"] == ["s1"]
    assert "s2" not in result.merged["sheets"]
    assert result.merged["sheets"]["s1"]["cellData"]["0"]["0"]["v"] == 10
    # the patch still carries the non-conflicting draft changes, consistent with merged
    assert apply(trunk, result.patch) == result.merged


def test_example_3_rebase_with_resolutions_then_fast_forward():
    base, trunk, draft = _example_2()
    rebased = rebase(base, trunk, draft, {"/sheets/s1/cellData/0/0/v": "draft",
                                          "/sheets/s2": "trunk"})
    assert rebased.resolved == 2
    assert rebased.draft == {
        "sheets": {"s1": {"name": "Q1", "cellData": {"0": {"0": {"v": 11}}, "1": {"0": {"v": 20}},
                                                     "2": {"0": {"v": 3}}}}},
        "sheetOrder": ["s1"]}
    assert apply(draft, rebased.patch) == rebased.draft
    # base := trunk head; nobody touched trunk since → the merge is a fast-forward
    again = merge(trunk, trunk, rebased.draft)
    assert again.outcome == "merged" and again.merged == rebased.draft
    assert apply(trunk, again.patch) == rebased.draft


def test_example_4_same_change_on_both_sides():
    base = sheet()
    trunk = sheet()
    trunk["sheets"]["s1"]["cellData"]["0"]["0"]["v"] = 10
    draft = copy.deepcopy(trunk)
    result = merge(base, trunk, draft)
    assert result.outcome == "unchanged" and result.patch == [] and result.conflicts == []
    assert result.merged is trunk
    # the same change plus another one: only the other one is written
    draft["sheets"]["s2"]["name"] = "New"
    result = merge(base, trunk, draft)
    assert result.patch == [{"op": "replace", "path": "/sheets/s2/name", "value": "New"}]


def test_example_5_add_add_of_objects():
    base = {"cellData": {}}
    trunk = {"cellData": {"5": {"0": {"v": 1}}}}
    draft = {"cellData": {"5": {"1": {"v": 2}}}}
    result = merge(base, trunk, draft)
    assert result.outcome == "merged"
    assert result.merged == {"cellData": {"5": {"0": {"v": 1}, "1": {"v": 2}}}}
    assert result.patch == [{"op": "add", "path": "/cellData/5/1", "value": {"v": 2}}]
    # both add 5/0 with different values: conflict at the deepest object level, no base
    result = merge(base, trunk, {"cellData": {"5": {"0": {"v": 7, "s": "b"}}}})
    assert [c.to_json() for c in result.conflicts] == [
        {"path": "/cellData/5/0/v", "trunk": 1, "draft": 7}]
    assert result.patch == [{"op": "add", "path": "/cellData/5/0/s", "value": "b"}]
    # different shapes (an object against a number): conflict at the cell
    result = merge(base, trunk, {"cellData": {"5": {"0": 3}}})
    assert [c.to_json() for c in result.conflicts] == [
        {"path": "/cellData/5/0", "trunk": {"v": 1}, "draft": 3}]


def test_example_6_fast_forward_content():
    base = sheet()
    draft = sheet()
    draft["sheets"]["s3"] = {"name": "New", "cellData": {"0": {"0": {"v": "x"}}}}
    draft["sheetOrder"].append("s3")
    del draft["sheets"]["s1"]["cellData"]["1"]
    result = merge(base, base, draft)
    assert result.outcome == "merged" and result.merged is draft
    assert apply(base, result.patch) == draft
    assert result.patch == [
        {"op": "remove", "path": "/sheets/s1/cellData/1"},
        {"op": "add", "path": "/sheets/s3", "value": draft["sheets"]["s3"]},
        {"op": "replace", "path": "/sheetOrder", "value": ["s1", "s2", "s3"]}]


def test_example_7_unchanged_by_content():
    base = sheet()
    trunk = sheet()
    trunk["sheets"]["s2"]["name"] = "Trunk"
    draft = sheet()
    draft["sheets"]["s1"]["cellData"]["0"]["0"]["v"] = 99
    draft["sheets"]["s1"]["cellData"]["0"]["0"]["v"] = 1  # edited back
    result = merge(base, trunk, draft)
    assert result.outcome == "unchanged" and result.merged is trunk and result.patch == []


# --- §8.4 equality ---------------------------------------------------------------------------

@pytest.mark.parametrize(("a", "b", "equal"), [
    (1, 1.0, True), (0, 0.0, True), (1, True, False), (0, False, False), (True, True, True),
    (None, None, True), (None, ABSENT, False), (ABSENT, ABSENT, True), (0, ABSENT, False),
    ("1", 1, False), ({}, [], False), ([], None, False), ({"a": 1}, {"a": 1.0}, True),
    ([1, 2], [1, 2], True), ([1, 2], [2, 1], False), ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
])
def test_same(a, b, equal):
    assert same(a, b) is equal
    assert same(b, a) is equal


def test_true_against_one_is_a_change_and_a_conflict():
    assert merge({"f": 1}, {"f": 1}, {"f": True}).patch == [
        {"op": "replace", "path": "/f", "value": True}]
    result = merge({"f": 2}, {"f": 1}, {"f": True})
    assert [c.to_json() for c in result.conflicts] == [
        {"path": "/f", "base": 2, "trunk": 1, "draft": True}]
    assert merge({"f": 0}, {"f": 0}, {"f": False}).outcome == "merged"


def test_one_and_one_point_zero_are_the_same_number():
    result = merge({"n": 1}, {"n": 2}, {"n": 1.0})  # only trunk changed
    assert result.outcome == "unchanged" and result.merged == {"n": 2}
    result = merge({"n": 0}, {"n": 1}, {"n": 1.0})  # the same change on both sides
    assert result.outcome == "unchanged" and result.conflicts == []


def test_true_against_one_inside_containers_is_seen_too():
    """Stricter than §8.4's accepted limit: containers equal by Python ``==`` are confirmed
    as JSON, so a bool against a number deep inside is a change (and can conflict)."""
    base = {"x": {"f": 1, "g": [0, 1]}}
    assert not same(base, {"x": {"f": True, "g": [0, 1]}})
    assert not same(base, {"x": {"f": 1, "g": [False, 1]}})
    assert same(base, {"x": {"g": [0.0, 1], "f": 1.0}})  # numbers and key order
    assert merge(base, base, {"x": {"f": True, "g": [0, 1]}}).patch == [
        {"op": "replace", "path": "/x/f", "value": True}]
    assert merge(base, {"x": {"f": True, "g": [0, 1]}}, base).merged["x"]["f"] is True
    result = merge(base, {"x": {"f": 1, "g": [0, True]}}, {"x": {"f": 1, "g": [0, 2]}})
    assert paths(result) == ["/x/g"]


def test_strings_msgspec_cannot_encode_compare_by_walking():
    a = {"s": "\ud800", "n": [1]}
    assert same(a, {"n": [1], "s": "\ud800"})
    assert not same(a, {"s": "\ud800", "n": [True]})
    assert merge(a, a, {"s": "\ud800", "n": [True]}).patch == [
        {"op": "replace", "path": "/n", "value": [True]}]


def test_null_is_not_absence():
    assert merge({"a": None}, {"a": None}, {}).patch == [{"op": "remove", "path": "/a"}]
    assert merge({}, {}, {"a": None}).patch == [{"op": "add", "path": "/a", "value": None}]
    result = merge({"a": 1}, {"a": None}, {})
    assert [c.to_json() for c in result.conflicts] == [{"path": "/a", "base": 1, "trunk": None}]
    assert result.merged == {"a": None}


# --- atomic arrays and strings, escaping, root ------------------------------------------------

def test_arrays_and_strings_are_atomic():
    base = {"order": ["a", "b"], "text": "hello"}
    trunk = {"order": ["a", "b", "c"], "text": "hello world"}
    draft = {"order": ["x", "a", "b"], "text": "Hello"}
    result = merge(base, trunk, draft)
    assert paths(result) == ["/order", "/text"]
    # the same new array on both sides is no conflict
    assert merge(base, trunk, {**base, "order": ["a", "b", "c"]}).outcome == "unchanged"
    # only one side changed an array: replaced as a whole, no index arithmetic
    assert merge(base, base, draft).patch == [
        {"op": "replace", "path": "/order", "value": ["x", "a", "b"]},
        {"op": "replace", "path": "/text", "value": "Hello"}]
    # objects inside arrays are not merged either
    base = {"rows": [{"a": 1}]}
    result = merge(base, {"rows": [{"a": 1, "b": 2}]}, {"rows": [{"a": 1, "c": 3}]})
    assert paths(result) == ["/rows"]


def test_keys_are_escaped_as_json_pointers():
    base = {"a/b": {"~x": 1}, "": {"": 1}}
    draft = {"a/b": {"~x": 2}, "": {"": 2}}
    result = merge(base, base, draft)
    assert [op["path"] for op in result.patch] == ["/a~1b/~0x", "//"]
    assert apply(base, result.patch) == draft
    result = merge(base, {"a/b": {"~x": 3}, "": {"": 3}}, draft)
    assert paths(result) == ["/a~1b/~0x", "//"]


def test_root_must_stay_an_object():
    base = {"a": 1}
    for draft in ([1], "text", None, 3):
        result = merge(base, base, draft)
        assert result.outcome == "conflict" and result.patch == [] and result.merged is base
        assert [c.to_json() for c in result.conflicts] == [
            {"path": "", "base": base, "trunk": base, "draft": draft}]
    # a non-object trunk root (never stored by Wharf) is not replaced by the merge either
    result = merge(base, [1], {"a": 2})
    assert paths(result) == [""] and result.patch == []
    # nothing changed on the draft side: no conflict, whatever trunk is
    assert merge(base, [1], base).outcome == "unchanged"


def test_base_of_another_type_under_objects_on_both_sides_is_a_conflict():
    result = merge({"a": [1]}, {"a": {"x": 1}}, {"a": {"y": 1}})
    assert [c.to_json() for c in result.conflicts] == [
        {"path": "/a", "base": [1], "trunk": {"x": 1}, "draft": {"y": 1}}]


def test_deleted_on_both_sides_and_delete_against_edit():
    base = {"a": {"x": 1}, "b": 1}
    assert merge(base, {"b": 1}, {"b": 1}).outcome == "unchanged"
    result = merge(base, {"a": {"x": 2}, "b": 1}, {"b": 1})
    assert [c.to_json() for c in result.conflicts] == [
        {"path": "/a", "base": {"x": 1}, "trunk": {"x": 2}}]
    # deleted by the draft, unchanged on trunk: removed
    assert merge(base, base, {"b": 1}).patch == [{"op": "remove", "path": "/a"}]
    # deleted by the draft while trunk changed something inside it: a conflict at the object
    result = merge(base, {"a": {"x": 1, "y": 2}, "b": 1}, {"b": 1})
    assert paths(result) == ["/a"]


# --- §8.5 conflict records -------------------------------------------------------------------

def _many(n: int) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    keys = [f"k{i:03d}" for i in range(n)]
    return ({k: 0 for k in keys}, {k: 1 for k in keys}, {k: 2 for k in keys})


def test_conflicts_are_capped_and_counted():
    base, trunk, draft = _many(50)
    result = merge(base, trunk, draft, max_conflicts=10)
    assert result.conflict_count == 50 and len(result.conflicts) == 10 and result.truncated
    assert paths(result) == [f"/k{i:03d}" for i in range(10)]  # document order
    assert result.outcome == "conflict"
    result = merge(base, trunk, draft, max_conflicts=0)
    assert result.conflict_count == 50 and result.conflicts == [] and result.truncated
    result = merge(base, trunk, draft, max_conflicts=50)
    assert len(result.conflicts) == 50 and not result.truncated
    assert MAX_CONFLICTS == 10_000
    with pytest.raises(ValueError):
        merge(base, trunk, draft, max_conflicts=-1)


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                      sort_keys=True).encode()


def test_large_conflict_values_are_truncated():
    assert MAX_CONFLICT_VALUE_BYTES == 4096
    fits = "é" * ((4096 - 2) // 2)  # 4094 bytes of UTF-8 + 2 quotes = 4096
    over = fits + "x"
    big = {"rows": {str(i): {"v": i} for i in range(500)}}
    result = merge({"a": 0, "b": 0, "c": 0}, {"a": fits, "b": over, "c": big},
                   {"a": 1, "b": 1, "c": {"other": 1}})
    by_path = {c.path: c for c in result.conflicts}
    assert by_path["/a"].trunk == fits
    data = _json_bytes(over)
    assert len(_json_bytes(fits)) == 4096 and len(data) == 4097
    assert by_path["/b"].trunk == {"$truncated": True, "size": 4097,
                                   "sha256": hashlib.sha256(data).hexdigest()}
    data = _json_bytes(big)
    assert by_path["/c"].trunk == {"$truncated": True, "size": len(data),
                                   "sha256": hashlib.sha256(data).hexdigest()}
    assert by_path["/c"].draft == {"other": 1}
    # the digest does not depend on key order
    reordered = {"rows": dict(reversed(list(big["rows"].items())))}
    again = merge({"c": 0}, {"c": reordered}, {"c": 1})
    assert again.conflicts[0].trunk == by_path["/c"].trunk
    # the merged document keeps the real values
    assert result.merged["c"] is big


def test_conflict_json_round_trip():
    import msgspec

    conflict = Conflict("/a", base=1, draft=None)
    assert conflict.to_json() == {"path": "/a", "base": 1, "draft": None}
    assert msgspec.convert(conflict.to_json(), Conflict) == conflict
    assert Conflict("/a").trunk is ABSENT


# --- §8.7 rebase -----------------------------------------------------------------------------

def test_rebase_refuses_unknown_and_unresolved_paths():
    base, trunk, draft = _example_2()
    with pytest.raises(UnresolvedConflicts) as caught:
        rebase(base, trunk, draft, {"/sheets/s2": "draft"})
    assert caught.value.conflict_count == 1
    assert [c.path for c in caught.value.conflicts] == ["/sheets/s1/cellData/0/0/v"]
    with pytest.raises(UnknownConflictPaths) as unknown:
        rebase(base, trunk, draft, {"/sheets/s2": "draft", "/sheets/s1": "trunk",
                                    "/sheets/s1/cellData/0/0/v": "trunk"})
    assert unknown.value.paths == ["/sheets/s1"]
    # unknown is reported before unresolved
    with pytest.raises(UnknownConflictPaths):
        rebase(base, trunk, draft, {"/nope": "trunk"})
    with pytest.raises(ValueError, match="trunk"):
        rebase(base, trunk, draft, {"/sheets/s2": "base"})  # type: ignore[dict-item]


def test_rebase_take_draft_keeps_deletions_and_take_trunk_restores():
    base = {"a": {"x": 1}, "b": 1}
    trunk = {"a": {"x": 2}, "b": 2}
    draft = {"b": 1, "c": 3}  # deleted a, added c
    rebased = rebase(base, trunk, draft, {"/a": "draft"})
    assert rebased.draft == {"b": 2, "c": 3}
    assert rebased.patch == [{"op": "replace", "path": "/b", "value": 2}]
    rebased = rebase(base, trunk, draft, {"/a": "trunk"})
    assert rebased.draft == {"a": {"x": 2}, "b": 2, "c": 3}
    assert apply(draft, rebased.patch) == rebased.draft
    # nothing to rebase onto: no conflicts, no resolutions, empty patch
    assert rebase(base, base, draft, {}).patch == []


# --- diff, depth, inputs ----------------------------------------------------------------------

def test_diff():
    assert diff({"a": 1}, {"a": 1.0}) == []
    assert diff({"a": 1, "b": [1]}, {"b": [1, 2], "c": None}) == [
        {"op": "remove", "path": "/a"}, {"op": "replace", "path": "/b", "value": [1, 2]},
        {"op": "add", "path": "/c", "value": None}]
    assert diff({"a": 1}, [1]) == [{"op": "replace", "path": "", "value": [1]}]


def _nest(depth: int, leaf: Any) -> dict[str, Any]:
    doc: Any = leaf
    for _ in range(depth):
        doc = {"k": doc}
    return doc


def test_documents_at_the_unit_depth_limit_merge():
    depth = UnitLimits().max_depth
    base = _nest(depth, 0)
    result = merge(base, _nest(depth, 1), _nest(depth, 2))
    assert paths(result) == ["/k" * depth]
    result = merge(base, base, _nest(depth, 2))
    assert result.patch == [{"op": "replace", "path": "/k" * depth, "value": 2}]


def test_too_deep_documents_raise_a_clean_error():
    with pytest.raises(MergeTooDeep):
        merge(_nest(5000, 0), _nest(5000, 1), _nest(5000, 2))
    with pytest.raises(MergeTooDeep):
        diff(_nest(5000, 0), _nest(5000, 1))


# --- Hypothesis properties --------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c", "0", "1", "a/b", "~", ""])
LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-1, 2), st.sampled_from([0.0, 1.0, 2.5]),
    st.text("xy", max_size=2))
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=2),
                            st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=12)
DOCS = st.dictionaries(KEYS, VALUES, max_size=5)


def _objects(doc: Any, at: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Key paths of every object in ``doc`` (arrays are atomic: not entered)."""
    if not isinstance(doc, dict):
        return []
    found = [at]
    for key, value in doc.items():
        found += _objects(value, (*at, key))
    return found


def _resolve(doc: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        if not isinstance(doc, dict) or key not in doc:
            return ABSENT
        doc = doc[key]
    return doc


@st.composite
def mutated(draw: st.DrawFn, doc: dict[str, Any], least: int = 0) -> dict[str, Any]:
    """``doc`` after up to 4 (at least ``least``) edits at random object paths: set (new
    or existing key, leaf or object) or delete."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(least, 4))):
        keys = draw(st.sampled_from(_objects(doc)))
        target = _resolve(doc, keys)
        key = draw(st.one_of(KEYS, st.sampled_from(sorted(target) or ["a"])))
        if draw(st.booleans()) and key in target:
            del target[key]
        else:
            target[key] = draw(VALUES)
    return doc


@st.composite
def triples(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(base, trunk, draft): mostly both sides edited from a common base (sometimes with
    the same edits), sometimes three unrelated documents."""
    base = draw(DOCS)
    shape = draw(st.integers(0, 5))
    if shape == 0:
        return base, draw(DOCS), draw(DOCS)
    trunk = draw(mutated(base))
    draft = draw(mutated(trunk if shape == 1 else base, least=1))  # shape 1: trunk's edits and more
    if shape == 2:
        trunk, draft = draft, trunk
    return base, trunk, draft


def _snap(*docs: Any) -> str:
    return json.dumps(docs, sort_keys=True)


PROPERTY = hsettings(max_examples=200, deadline=None, database=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(base=DOCS, draft=DOCS)
def test_property_trunk_unchanged_gives_the_draft(base, draft):
    result = merge(base, base, draft)
    assert result.conflict_count == 0
    assert same(result.merged, draft)
    assert same(apply(base, result.patch), draft)
    assert result.outcome == ("unchanged" if same(draft, base) else "merged")


@PROPERTY
@given(triple=triples())
def test_property_draft_unchanged_gives_trunk(triple):
    base, trunk, _ = triple
    result = merge(base, trunk, base)
    assert result.merged is trunk and result.patch == [] and result.conflict_count == 0
    assert result.outcome == "unchanged"


@PROPERTY
@given(triple=triples())
def test_property_patch_applied_to_trunk_gives_merged(triple):
    base, trunk, draft = triple
    before = _snap(base, trunk, draft)
    result = merge(base, trunk, draft)
    assert _snap(base, trunk, draft) == before  # inputs untouched
    assert same(apply(trunk, result.patch), result.merged)
    assert isinstance(result.merged, dict)
    assert all(op["path"] for op in result.patch)  # never the root
    assert result.outcome == ("conflict" if result.conflict_count
                              else "unchanged" if same(result.merged, trunk) else "merged")
    assert same(apply(trunk, diff(trunk, result.merged)), result.merged)


@PROPERTY
@given(triple=triples())
def test_property_symmetry(triple):
    base, trunk, draft = triple
    one = merge(base, trunk, draft)
    two = merge(base, draft, trunk)
    assert sorted(paths(one)) == sorted(paths(two))
    assert one.conflict_count == two.conflict_count
    swapped = {c.path: (c.base, c.draft, c.trunk) for c in two.conflicts}
    assert {c.path: (c.base, c.trunk, c.draft) for c in one.conflicts} == swapped
    if one.conflict_count == 0:
        assert same(one.merged, two.merged)


@PROPERTY
@given(triple=triples())
def test_property_one_sided_changes_hold_that_sides_value(triple):
    """At every object-key path not at or below a conflict: changed by the draft only →
    the draft's value; changed by trunk only (or by neither) → trunk's; changed alike on
    both → that value (equality: :func:`same`)."""
    base, trunk, draft = triple
    result = merge(base, trunk, draft)
    conflicted = [tuple(JsonPointer(p).parts) for p in paths(result)]
    every = set(_objects(base)) | set(_objects(trunk)) | set(_objects(draft))
    every |= {(*at, key) for doc in (base, trunk, draft) for at in _objects(doc)
              for key in _resolve(doc, at)}
    for keys in every:
        if any(keys[:len(c)] == c for c in conflicted):
            continue
        b, t, d, m = (_resolve(doc, keys) for doc in (base, trunk, draft, result.merged))
        if same(t, b):
            assert same(m, d), keys
        if same(d, b) or same(t, d):
            assert same(m, t), keys


@PROPERTY
@given(triple=triples(), data=st.data())
def test_property_rebase_resolves_every_conflict(triple, data):
    base, trunk, draft = triple
    result = merge(base, trunk, draft)
    takes = {p: data.draw(st.sampled_from(["trunk", "draft"])) for p in paths(result)}
    rebased = rebase(base, trunk, draft, takes)
    assert rebased.resolved == len(takes)
    assert same(apply(draft, rebased.patch), rebased.draft)
    # re-based on trunk: merging it now is conflict-free and gives the rebased draft
    again = merge(trunk, trunk, rebased.draft)
    assert again.conflict_count == 0 and same(again.merged, rebased.draft)
    # all "trunk" is the merge itself; all "draft" is the merge with the sides swapped
    if all(take == "trunk" for take in takes.values()):
        assert same(rebased.draft, result.merged)
    if all(take == "draft" for take in takes.values()):
        assert same(rebased.draft, merge(base, draft, trunk).merged)
    for path, take in takes.items():
        keys = tuple(JsonPointer(path).parts)
        chosen = _resolve(trunk if take == "trunk" else draft, keys)
        assert same(_resolve(rebased.draft, keys), chosen)


@PROPERTY
@given(source=DOCS, target=DOCS)
def test_property_diff(source, target):
    ops = diff(source, target)
    assert same(apply(source, ops), target)
    assert (ops == []) is same(source, target)


# --- a walk of the touched paths only (issue 36) --------------------------------------------

@st.composite
def touched_triples(draw: st.DrawFn):
    """A triple and the trie of paths its sides' changesets wrote (the diffs from base),
    sometimes with paths nobody changed on top (a trie may say more, never less)."""
    base, trunk, draft = draw(triples())
    changesets = [diff(base, trunk), diff(base, draft)]
    extra = draw(st.lists(st.lists(KEYS, min_size=1, max_size=3), max_size=3))
    changesets.append([{"op": "remove", "path": "".join(
        "/" + k.replace("~", "~0").replace("/", "~1") for k in keys)} for keys in extra])
    return base, trunk, draft, touched_paths(changesets)


@PROPERTY
@given(case=touched_triples())
def test_property_a_walk_of_the_touched_paths_merges_as_a_whole_walk(case):
    base, trunk, draft, touched = case
    whole, within = merge(base, trunk, draft), merge(base, trunk, draft, touched=touched)
    assert same(within.merged, whole.merged) and within.patch == whole.patch
    assert within.conflicts == whole.conflicts
    assert within.conflict_count == whole.conflict_count
    assert same(apply(trunk, within.patch), within.merged)
    assert diff(trunk, draft, touched) == diff(trunk, draft)
    assert diff(draft, within.merged, touched) == diff(draft, within.merged)
    assert same_within(draft, base, touched) == same(draft, base)


def test_untouched_keys_are_kept_without_being_compared():
    """The keys no changeset names are not compared at all: values that would blow up
    on any comparison pass through, the touched ones merge."""
    class Untouchable(dict):
        def __eq__(self, other):
            raise AssertionError("an untouched value was compared")
        __hash__ = None  # type: ignore[assignment]
    cells = {str(r): {"v": r} if r == 7 else Untouchable({"v": r}) for r in range(1000)}
    base = {"body": {"cells": cells, "title": "a", "n": 1}}
    trunk = {"body": {"cells": dict(cells), "title": "b", "n": 1}}
    draft = {"body": {"cells": {**cells, "7": {"v": "edited"}}, "title": "a", "n": 2}}
    touched = touched_paths([[{"op": "replace", "path": "/body/title", "value": "b"}],
                             [{"op": "replace", "path": "/body/cells/7", "value": {}},
                              {"op": "replace", "path": "/body/n", "value": 2}]])
    result = merge(base, trunk, draft, touched=touched)
    assert result.patch == [{"op": "replace", "path": "/body/cells/7/v", "value": "edited"},
                            {"op": "replace", "path": "/body/n", "value": 2}]
    assert result.merged["body"]["title"] == "b" and result.merged["body"]["n"] == 2
    assert result.merged["body"]["cells"]["7"] == {"v": "edited"}
    assert result.merged["body"]["cells"]["8"] is cells["8"]


def test_a_root_write_or_too_many_paths_touch_everything():
    assert touched_paths([[{"op": "replace", "path": "", "value": {}}]]) is None
    assert touched_paths([[{"op": "test", "path": "", "value": {}}]]) == {}
    assert touched_paths([[{"op": "move", "from": "/a/b", "path": "/c"}],
                          [{"op": "add", "path": "/a/b/d", "value": 1}]]) == \
        {"a": {"b": None}, "c": None}
    from wharf.worktrees import touched as module
    many = [[{"op": "add", "path": f"/k{n}", "value": 1} for n in range(module.MAX_NODES + 1)]]
    assert touched_paths(many) is None
