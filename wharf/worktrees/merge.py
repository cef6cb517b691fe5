"""Three-way merge of JSON documents (unit snapshots), located per JSON Pointer path.

Pure: no I/O, no clock, no settings read here. Specification: ``assets-worktrees.md`` §8.3
(algorithm), §8.4 (equality), §8.5 (conflict records), §8.7 (rebase with resolutions).

``merge(base, trunk, draft)`` walks the three documents once:

- where trunk and draft agree, trunk's value stays (nothing to write);
- where only the draft changed a value, the draft's value is taken **and the RFC 6902
  operations turning trunk's value into it are emitted** (the patch for trunk comes out of
  the same walk, no second diff of the whole documents);
- where only trunk changed it, trunk's value stays;
- where both changed it and both values are objects (and the base one is an object or
  absent), the objects are merged key by key; otherwise (arrays, strings, numbers,
  booleans, null, or an object against anything else) it is a **conflict** at that path:
  trunk's value stays and a :class:`Conflict` records the base, trunk and draft values.

Arrays and strings are atomic: both sides changing one differently is a conflict at the
array or string, never an index-level merge, so the patch never needs index arithmetic;
its operations are ``add``/``remove``/``replace`` only, parents first, and
``apply(trunk, result.patch) == result.merged`` holds with or without conflicts (at a
conflict the patch leaves trunk's value, as ``merged`` does). The root stays an object: if
the draft changed the root (it differs from both base and trunk) and the trunk or draft
root is not an object, that is a conflict at ``""``; no operation ever targets the root.

Equality (§8.4), :func:`same`: absent only equals absent; ``1`` and ``1.0`` are the same
JSON number; ``true`` and ``1`` (``false`` and ``0``) differ, at a leaf *and* inside
containers; key order does not matter. This is stricter than the spec's accepted limit
(containers by Python ``==`` alone, which let ``true`` against ``1`` inside a container
pass unseen and even made ``{"f": 1}`` → ``{"f": true}`` vanish in a merge): containers
still compare with ``==`` first (C speed; it prunes every changed subtree), and only a pair
already equal by ``==`` is confirmed by comparing compact JSON bytes (msgspec, C speed) —
no Python walk unless the bytes differ.

The results share subtrees with the inputs (``merged``, the patch's values and the
conflicts' values are not copies): treat the inputs and the results as read-only, or
serialize them, which is what storage does.

Recursion: one Python frame per nesting level (plus C frames of ``==``), so documents
within Wharf's unit depth limit (400 levels) merge with the default recursion limit; a
deeper document raises :class:`MergeTooDeep` from :func:`merge`, :func:`rebase` and
:func:`diff` (:func:`same` alone lets the ``RecursionError`` through).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

import msgspec
from jsonpointer import escape

from wharf.worktrees.touched import Touched, Trie

__all__ = ["ABSENT", "MAX_CONFLICTS", "MAX_CONFLICT_VALUE_BYTES", "Conflict", "MergeResult",
           "MergeTooDeep", "RebaseResult", "Take", "UnknownConflictPaths",
           "UnresolvedConflicts", "clip", "diff", "merge", "rebase", "same", "same_within"]

#: A JSON value as ``json.loads`` returns it (dict, list, str, int, float, bool, None).
JSON: TypeAlias = Any
#: One RFC 6902 operation (``{"op": "add"|"remove"|"replace", "path": ..., "value": ...}``).
Op: TypeAlias = dict[str, Any]
#: Which side a rebase resolution takes at a conflict path (§8.7).
Take: TypeAlias = Literal["trunk", "draft"]

#: "Absent" (a missing key, or a side that deleted / never added a value). A conflict's
#: absent side holds it and is left out of the conflict's JSON.
ABSENT: Final = msgspec.UNSET

#: Conflicts kept per merge (§8.5); ``MergeResult.conflict_count`` keeps the true number.
#: The default of ``WHARF_MERGE_MAX_CONFLICTS``; callers pass the setting as ``max_conflicts``.
MAX_CONFLICTS: Final = 10_000

#: A conflict value whose compact UTF-8 JSON is larger than this is replaced by
#: ``{"$truncated": true, "size": N, "sha256": "…"}`` (§8.5).
MAX_CONFLICT_VALUE_BYTES: Final = 4096

_TAKES: Final = frozenset(("trunk", "draft"))
_encode: Final = msgspec.json.Encoder().encode


class Conflict(msgspec.Struct, frozen=True, omit_defaults=True):
    """Both sides changed the value at ``path`` (a JSON Pointer, ``""`` for the root)
    differently. ``base``/``trunk``/``draft`` hold each side's value, :data:`ABSENT` when
    that side has none (left out of :meth:`to_json`); a value over
    :data:`MAX_CONFLICT_VALUE_BYTES` is the truncation marker instead."""

    path: str
    base: Any | msgspec.UnsetType = msgspec.UNSET
    trunk: Any | msgspec.UnsetType = msgspec.UNSET
    draft: Any | msgspec.UnsetType = msgspec.UNSET

    def to_json(self) -> dict[str, Any]:
        """The stored/served record, e.g. ``{"path": "/a", "base": 1, "trunk": 2}``."""
        out: dict[str, Any] = msgspec.to_builtins(self)
        return out


@dataclass(frozen=True, slots=True)
class MergeResult:
    """What :func:`merge` found.

    ``merged``: the merged document (at a conflict, trunk's value). ``patch``: the RFC 6902
    operations that turn trunk into ``merged`` (empty: the draft adds nothing to trunk).
    ``conflicts``: the first ``max_conflicts`` conflicts in document order (trunk's key
    order, then draft-only keys); ``conflict_count``: all of them.
    """

    merged: JSON
    patch: list[Op]
    conflicts: list[Conflict]
    conflict_count: int

    @property
    def truncated(self) -> bool:
        """More conflicts were found than ``conflicts`` holds."""
        return self.conflict_count > len(self.conflicts)

    @property
    def outcome(self) -> Literal["conflict", "unchanged", "merged"]:
        """The three-way part of §8.2: ``conflict`` (trunk must stay untouched),
        ``unchanged`` (trunk already holds everything the draft changed, including
        ``draft == base``) or ``merged`` (write ``patch`` as one trunk revision). The
        caller decides ``fast_forward`` (trunk did not move since the base) before this."""
        if self.conflict_count:
            return "conflict"
        return "merged" if self.patch else "unchanged"


@dataclass(frozen=True, slots=True)
class RebaseResult:
    """The draft re-based on trunk (§8.7): ``draft`` = trunk + the draft's non-conflicting
    changes + the resolutions' choices; ``patch`` turns the old draft into it (the
    ``rebase`` draft revision; empty when nothing changes); ``resolved`` conflicts."""

    draft: JSON
    patch: list[Op]
    resolved: int


class MergeTooDeep(ValueError):
    """The documents nest deeper than the merge can walk (the recursion limit)."""


class UnresolvedConflicts(ValueError):
    """A rebase left conflicts without a resolution (API: 409 ``merge_conflict``).
    ``conflicts`` are the first of them (capped like a merge's), ``conflict_count`` all."""

    def __init__(self, conflicts: list[Conflict], conflict_count: int) -> None:
        super().__init__(f"{conflict_count} conflict(s) have no resolution")
        self.conflicts = conflicts
        self.conflict_count = conflict_count


class UnknownConflictPaths(ValueError):
    """Resolutions name paths that are not conflicts (API: 400 ``unknown_conflict_path``)."""

    def __init__(self, paths: list[str]) -> None:
        super().__init__(f"{len(paths)} resolution path(s) are not conflicts")
        self.paths = paths


def same(a: JSON, b: JSON) -> bool:
    """§8.4 equality: absent only equals absent; ``1 == 1.0`` (one JSON number); ``true``
    differs from ``1`` and ``false`` from ``0``, at a leaf or anywhere inside a container;
    object key order does not matter."""
    if a is b:
        return True
    if isinstance(a, dict | list):
        return a == b and _no_bool_mixup(a, b)
    return a == b and isinstance(a, bool) is isinstance(b, bool)


def _no_bool_mixup(a: dict[str, Any] | list[Any], b: dict[str, Any] | list[Any]) -> bool:
    """For containers already equal by Python ``==`` (C speed, which prunes every changed
    subtree before this runs): also equal as JSON, i.e. no ``true`` against ``1`` inside.
    Byte-identical compact JSON (msgspec, about half the time of the ``==``) settles it;
    only when the two texts differ (key order, ``1`` against ``1.0``, a bool mix-up, or a
    string msgspec cannot encode) are the children compared one by one."""
    try:
        if _encode(a) == _encode(b):
            return True
    except (ValueError, msgspec.EncodeError):  # e.g. a lone surrogate in a string
        pass
    if isinstance(a, dict):
        assert isinstance(b, dict)
        return all(same(value, b[key]) for key, value in a.items())
    return all(map(same, a, b))


def clip(value: JSON, limit: int = MAX_CONFLICT_VALUE_BYTES) -> JSON:
    """A conflict value as stored (``limit`` :data:`MAX_CONFLICT_VALUE_BYTES`) or shown in
    a bounded summary (a smaller ``limit``): itself, or the truncation marker when its
    compact UTF-8 JSON exceeds ``limit`` bytes (size and digest of that JSON, keys sorted,
    so equal values have equal digests). A marker (about 100 bytes) fits a limit of 128."""
    if value is ABSENT or value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str) and len(value) * 6 + 2 <= limit:
        return value  # even fully escaped it fits
    data = json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                      sort_keys=True).encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return value
    return {"$truncated": True, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def _emit(t: JSON, d: JSON, path: str, ops: list[Op]) -> None:
    """Append the operations turning ``t`` into ``d`` at ``path`` (not :func:`same`):
    objects recurse key by key, anything else is one ``add``/``remove``/``replace``."""
    if t is ABSENT:
        ops.append({"op": "add", "path": path, "value": d})
    elif d is ABSENT:
        ops.append({"op": "remove", "path": path})
    elif isinstance(t, dict) and isinstance(d, dict):
        for k, tk in t.items():
            dk = d.get(k, ABSENT)
            if tk is not dk and not same(tk, dk):
                _emit(tk, dk, f"{path}/{escape(k)}", ops)
        for k, dk in d.items():
            if k not in t:
                ops.append({"op": "add", "path": f"{path}/{escape(k)}", "value": dk})
    else:
        ops.append({"op": "replace", "path": path, "value": d})


class _Walk:
    """One three-way walk. ``draft_ops`` (rebase only) collects the operations turning the
    draft into the result; ``resolutions`` (rebase only) decide conflicts."""

    __slots__ = ("cap", "conflicts", "count", "draft_ops", "ops", "resolutions", "used")

    def __init__(self, cap: int, resolutions: Mapping[str, Take] | None = None) -> None:
        self.cap = cap
        self.ops: list[Op] = []
        self.draft_ops: list[Op] | None = None if resolutions is None else []
        self.conflicts: list[Conflict] = []
        self.count = 0
        self.resolutions = resolutions
        self.used: set[str] = set()

    def root(self, b: JSON, t: JSON, d: JSON) -> JSON:
        if same(t, d):
            return t
        if same(b, d):
            self._trunk_only(t, d, "")
            return t
        if isinstance(t, dict) and isinstance(d, dict):
            return self.value(b, t, d, "")
        return self.conflict(b, t, d, "")  # the root must stay an object

    def value(self, b: JSON, t: JSON, d: JSON, path: str) -> JSON:
        """The merged value at ``path`` (``t`` and ``d`` are known to differ)."""
        if same(b, t):  # only the draft changed here
            _emit(t, d, path, self.ops)
            return d
        if same(b, d):  # only trunk changed here
            self._trunk_only(t, d, path)
            return t
        if not (isinstance(t, dict) and isinstance(d, dict)
                and (b is ABSENT or isinstance(b, dict))):
            return self.conflict(b, t, d, path)
        if b is ABSENT:  # added on both sides: merge their keys
            b = {}
        out: dict[str, Any] = {}
        for k, tk in t.items():
            dk = d.get(k, ABSENT)
            if tk is dk or same(tk, dk):
                out[k] = tk
                continue
            r = self.value(b.get(k, ABSENT), tk, dk, f"{path}/{escape(k)}")
            if r is not ABSENT:
                out[k] = r
        for k, dk in d.items():
            if k not in t:
                r = self.value(b.get(k, ABSENT), ABSENT, dk, f"{path}/{escape(k)}")
                if r is not ABSENT:
                    out[k] = r
        return out

    def step(self, b: JSON, t: JSON, d: JSON, path: str, touched: Touched) -> JSON:
        """The merged value at ``path``, where only the keys ``touched`` names may differ
        between the three (``None``: anything may)."""
        if touched is not None and isinstance(b, dict) and isinstance(t, dict) \
                and isinstance(d, dict):
            return self.within(b, t, d, path, touched)
        if t is d or same(t, d):
            return t
        return self.value(b, t, d, path) if path else self.root(b, t, d)

    def within(self, b: dict[str, Any], t: dict[str, Any], d: dict[str, Any], path: str,
               touched: Trie) -> JSON:
        """Three objects equal outside the keys ``touched`` names: those keys merged
        one by one (in trunk's key order, then the draft's new keys in its order, as
        :meth:`value` goes), every other key kept from trunk without a comparison. The
        result is trunk's object when nothing changes, else a new one."""
        out: dict[str, Any] | None = None
        for k in _in_order(t, d, touched):
            tk, dk = t.get(k, ABSENT), d.get(k, ABSENT)
            sub = touched[k]
            if sub is None or not isinstance(tk, dict) or not isinstance(dk, dict):
                if tk is dk or same(tk, dk):
                    continue
                r = self.value(b.get(k, ABSENT), tk, dk, f"{path}/{escape(k)}")
            else:
                r = self.step(b.get(k, ABSENT), tk, dk, f"{path}/{escape(k)}", sub)
            if r is tk:
                continue
            if out is None:
                out = dict(t)
            if r is ABSENT:
                del out[k]
            else:
                out[k] = r
        return t if out is None else out

    def _trunk_only(self, t: JSON, d: JSON, path: str) -> None:
        if self.draft_ops is not None:
            _emit(d, t, path, self.draft_ops)

    def conflict(self, b: JSON, t: JSON, d: JSON, path: str) -> JSON:
        take = None if self.resolutions is None else self.resolutions.get(path)
        if take is not None:
            self.used.add(path)
            if take == "draft":
                if path:
                    _emit(t, d, path, self.ops)
                return d
            self._trunk_only(t, d, path)
            return t
        self.count += 1
        if len(self.conflicts) < self.cap:
            self.conflicts.append(Conflict(path, clip(b), clip(t), clip(d)))
        return t


def _in_order(t: dict[str, Any], d: dict[str, Any], touched: Trie) -> list[str]:
    """The keys of ``touched`` present in ``t`` or ``d``, in the order a whole walk meets
    them: ``t``'s, then those only in ``d`` in ``d``'s (the keys are scanned, no value is
    compared)."""
    if len(touched) * 4 < len(t):
        present = [k for k in touched if k in t]
        if len(present) > 1:  # trunk's order (one scan of its keys, not of its values)
            wanted = set(present)
            present = [k for k in t if k in wanted]
    else:
        present = [k for k in t if k in touched]
    if any(k in d and k not in t for k in touched):
        present += [k for k in d if k not in t and k in touched]
    return present


def _run(walk: _Walk, base: JSON, trunk: JSON, draft: JSON,
         touched: Touched = None) -> JSON:
    try:
        if touched is not None:
            return walk.step(base, trunk, draft, "", touched)
        return walk.root(base, trunk, draft)
    except RecursionError:
        raise MergeTooDeep("the documents nest too deeply to merge") from None


def merge(base: JSON, trunk: JSON, draft: JSON, *,
          max_conflicts: int = MAX_CONFLICTS, touched: Touched = None) -> MergeResult:
    """Three-way merge of ``draft`` (forked from ``base``) into ``trunk`` (§8.3).
    ``touched``: the paths outside which the three are known equal
    (:func:`wharf.worktrees.touched.touched_paths` of both sides' revisions): only those
    are walked, with the same patch, conflicts and counts as a walk of everything and a
    merged document equal to its (an object the draft re-created keeps trunk's key order:
    the order a reader replaying the patch onto trunk gets).

    ``merge(b, b, d).merged == d``, ``merge(b, t, b).merged == t`` (patch empty), and
    swapping trunk and draft gives the same conflict paths. The inputs are not modified.
    At most ``max_conflicts`` conflicts are recorded (values clipped per §8.5);
    ``conflict_count`` counts all of them.
    """
    if max_conflicts < 0:
        raise ValueError("max_conflicts must be >= 0")
    walk = _Walk(max_conflicts)
    merged = _run(walk, base, trunk, draft, touched)
    return MergeResult(merged, walk.ops, walk.conflicts, walk.count)


def rebase(base: JSON, trunk: JSON, draft: JSON, resolutions: Mapping[str, Take], *,
           max_conflicts: int = MAX_CONFLICTS, touched: Touched = None) -> RebaseResult:
    """Re-base ``draft`` onto ``trunk`` (§8.7): the merge of the three, where every
    conflict takes the side its resolution names (``"trunk"``: trunk's value or absence;
    ``"draft"``: the draft's). Raises :class:`UnknownConflictPaths` when a resolution path
    is not a conflict (checked first), :class:`UnresolvedConflicts` when a conflict has no
    resolution; nothing is returned then. The new base is ``trunk``.
    """
    if max_conflicts < 0:
        raise ValueError("max_conflicts must be >= 0")
    bad = sorted(take for take in set(resolutions.values()) if take not in _TAKES)
    if bad:
        raise ValueError(f"a resolution takes 'trunk' or 'draft', not {bad[0]!r}")
    walk = _Walk(max_conflicts, resolutions)
    rebased = _run(walk, base, trunk, draft, touched)
    unknown = [path for path in resolutions if path not in walk.used]
    if unknown:
        raise UnknownConflictPaths(unknown)
    if walk.count:
        raise UnresolvedConflicts(walk.conflicts, walk.count)
    assert walk.draft_ops is not None
    return RebaseResult(rebased, walk.draft_ops, len(walk.used))


def diff(source: JSON, target: JSON, touched: Touched = None) -> list[Op]:
    """The RFC 6902 operations turning ``source`` into ``target`` (two objects), minimal
    per object key and atomic for everything else, by the same rules and equality as
    :func:`merge` (e.g. the single revision of a fast-forward after a re-base, §8.2).
    A root that is not an object on either side is replaced as a whole. ``touched``: the
    paths outside which the two are known equal (only those are compared)."""
    ops: list[Op] = []
    try:
        if touched is not None and isinstance(source, dict) and isinstance(target, dict):
            _emit_within(source, target, "", touched, ops)
            return ops
        if same(source, target):
            return ops
        if isinstance(source, dict) and isinstance(target, dict):
            _emit(source, target, "", ops)
        else:
            ops.append({"op": "replace", "path": "", "value": target})
    except RecursionError:
        raise MergeTooDeep("the documents nest too deeply to compare") from None
    return ops


def same_within(a: JSON, b: JSON, touched: Touched) -> bool:
    """:func:`same`, for two documents known equal outside the paths ``touched`` names
    (``None``: compare everything)."""
    if touched is None or not isinstance(a, dict) or not isinstance(b, dict):
        return same(a, b)
    for k, sub in touched.items():
        ak, bk = a.get(k, ABSENT), b.get(k, ABSENT)
        if not same_within(ak, bk, sub) if isinstance(ak, dict) and isinstance(bk, dict) \
                else not same(ak, bk):
            return False
    return True


def _emit_within(s: dict[str, Any], t: dict[str, Any], path: str, touched: Trie,
                 ops: list[Op]) -> None:
    """:func:`_emit` of two objects equal outside the keys ``touched`` names."""
    for k in _in_order(s, t, touched):
        sk, tk = s.get(k, ABSENT), t.get(k, ABSENT)
        sub = touched[k]
        if sub is not None and isinstance(sk, dict) and isinstance(tk, dict):
            _emit_within(sk, tk, f"{path}/{escape(k)}", sub, ops)
        elif sk is not tk and not same(sk, tk):
            _emit(sk, tk, f"{path}/{escape(k)}", ops)
