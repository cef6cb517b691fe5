"""Protected JSON Pointer prefixes and the RFC 6902 operations that touch them: pure
functions over a changeset, a document's bindings and a rights predicate (no database).

The rules (docs/protection.md, "What a changeset may not do"):

- A prefix protects itself and everything below it, on whole reference tokens compared
  decoded (RFC 6901: ``~1`` is ``/``, ``~0`` is ``~``): ``/a/b`` protects ``/a/b`` and
  ``/a/b/c``, not ``/a/bc``; ``/a~1b`` is the member ``a/b``.
- An operation (``test`` excepted: it changes nothing) is refused when its ``path`` or its
  ``from`` lies under a prefix the actor may not edit, or is an ancestor of one (a
  ``replace``/``remove``/``add`` of an ancestor, the root ``""`` included, replaces what
  it contains; a ``move``/``copy`` out of an ancestor carries it away).
- Array positions: a prefix is checked against the document as it is when the changeset
  is checked. An element protected at ``/rows/3`` stays index 3 only if nothing is
  inserted or removed before it, so an insertion (``add``, ``copy``/``move`` into) or a
  removal (``remove``, ``move`` from) at an index ``<= 3`` of that same array is refused;
  ``replace`` of another element and appending (``/rows/-``) are not. Whether a step is
  an array is read from the document, so member names that look like numbers (a sheet's
  ``cellData`` rows) are not array positions.
- The bindings themselves (``/protection``) change only through the permission-object
  routes: no changeset may write under it, and a root ``add``/``replace`` must carry the
  bindings unchanged.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jsonpointer import JsonPointer, JsonPointerException

#: The top-level member of a unit's document holding ``{object_id: target pointer}``.
BINDINGS = "protection"
#: Where a target may point: inside the document's body.
BODY = "body"
TARGET_MAX = 1024  # characters of a target pointer
_WRITES = ("add", "remove", "replace", "move", "copy")
_INSERTS = ("add", "copy", "move")  # at ``path``; a ``move`` also removes at ``from``


def tokens(pointer: object) -> tuple[str, ...] | None:
    """The decoded reference tokens of ``pointer`` (``""``: the root, ``()``); None when
    it is not an RFC 6901 pointer."""
    if not isinstance(pointer, str):
        return None
    try:
        return tuple(JsonPointer(pointer).parts)
    except (JsonPointerException, TypeError):
        return None


@dataclass(frozen=True)
class Protected:
    """A bound target: the object's id, its decoded tokens, and at which depths ``k`` the
    document holds an array at ``tokens[:k]`` (read when the changeset is checked)."""

    object_id: str
    tokens: tuple[str, ...]
    arrays: frozenset[int]


def protected(bindings: Mapping[str, Any], doc: Any, known: Callable[[str], bool]) -> \
        list[Protected]:
    """The effective bindings of a document: those naming an object the unit has
    (``known``) with a target that parses; unknown ids (an object since deleted, an ACL
    of another unit) protect nothing."""
    out = []
    for object_id, target in sorted(bindings.items()):
        parts = tokens(target)
        if parts is None or not known(object_id):
            continue
        arrays, node = set(), doc
        for k, token in enumerate(parts):
            if isinstance(node, list):
                arrays.add(k)
                node = node[int(token)] if token.isdigit() and int(token) < len(node) \
                    else None
            elif isinstance(node, dict):
                node = node.get(token)
            else:
                break
        out.append(Protected(object_id, parts, frozenset(arrays)))
    return out


def bindings_of(doc: Any) -> dict[str, Any]:
    """The document's ``/protection`` member, or ``{}``."""
    found = doc.get(BINDINGS) if isinstance(doc, dict) else None
    return found if isinstance(found, dict) else {}


def keep_bindings(doc: Any, source: Any) -> Any:
    """``doc`` with ``source``'s bindings instead of its own (a restore brings content
    back, not protections)."""
    if not isinstance(doc, dict):
        return doc
    out = {k: v for k, v in doc.items() if k != BINDINGS}
    if isinstance(source, dict) and BINDINGS in source:
        out[BINDINGS] = source[BINDINGS]
    return out


def _comparable(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """One is a prefix of the other (the same pointer included)."""
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _shifts(at: tuple[str, ...], p: Protected) -> bool:
    """An insertion or removal at ``at`` moves ``p``'s element within an array."""
    if not at:
        return False
    parent, last = at[:-1], at[-1]
    k = len(parent)
    if k >= len(p.tokens) or k not in p.arrays or p.tokens[:k] != parent:
        return False
    mine = p.tokens[k]
    return last.isdigit() and mine.isdigit() and int(last) <= int(mine)


@dataclass(frozen=True)
class Violation:
    object_id: str | None  # None: the bindings themselves, with no object named
    op_index: int
    reason: str


def _reserved(op: Mapping[str, Any], index: int, parts: Sequence[tuple[str, ...]],
              current: Mapping[str, Any] | None) -> Violation | None:
    """An operation on the bindings (``/protection``), or a root write that would change
    them (``current``: the document's bindings; None: not known, checked syntactically)."""
    for p in parts:
        if p and p[0] == BINDINGS:
            return Violation(p[1] if len(p) > 1 else None, index,
                             "the bindings change only through /api/permission-objects")
    if op["op"] in ("add", "replace") and parts[0] == ():
        value = op.get("value")
        mine = value.get(BINDINGS) if isinstance(value, dict) else None
        if mine != (current if current else None) and (mine is not None or current):
            return Violation(None, index, "a root write must keep the bindings unchanged")
    if op["op"] in ("move", "copy", "remove") and parts[0] == () and current:
        return Violation(None, index, "a root write must keep the bindings unchanged")
    return None


def first_violation(changes: Sequence[Any], bound: Sequence[Protected],
                    may_edit: Callable[[str], bool],
                    current: Mapping[str, Any] | None = None) -> Violation | None:
    """The first operation of ``changes`` the actor may not apply, or None.

    ``bound``: the document's effective bindings; ``may_edit(object_id)``: the actor's
    edit right on an object (asked once per object, lazily); ``current``: the document's
    raw bindings (for a root write). Malformed operations are left to the patch engine
    (it answers ``invalid_changeset``)."""
    denied: dict[str, bool] = {}

    def forbids(object_id: str) -> bool:
        if object_id not in denied:
            denied[object_id] = not may_edit(object_id)
        return denied[object_id]

    for index, op in enumerate(changes):
        if not isinstance(op, dict) or op.get("op") not in _WRITES:
            continue
        path = tokens(op.get("path"))
        source = tokens(op.get("from")) if op["op"] in ("move", "copy") else ()
        if path is None or source is None:
            continue
        parts = [path] + ([source] if op["op"] in ("move", "copy") else [])
        found = _reserved(op, index, parts, current)
        if found is not None:
            return found
        for p in bound:
            hit = any(_comparable(at, p.tokens) for at in parts)
            if not hit:
                inserted = path if op["op"] in _INSERTS else None
                removed = path if op["op"] == "remove" else \
                    source if op["op"] == "move" else None
                hit = any(at is not None and _shifts(at, p) for at in (inserted, removed))
            if hit and forbids(p.object_id):
                return Violation(p.object_id, index, "it touches a protected range")
    return None


def clean_target(value: object) -> tuple[str, tuple[str, ...]] | str:
    """A target pointer and its tokens, or why it is refused: an RFC 6901 pointer of at
    most ``TARGET_MAX`` characters inside ``/body``."""
    if not isinstance(value, str) or len(value) > TARGET_MAX:
        return f"target must be a JSON Pointer of at most {TARGET_MAX} characters"
    parts = tokens(value)
    if parts is None:
        return "target is not a JSON Pointer (RFC 6901)"
    if not parts or parts[0] != BODY:
        return "target must point inside the document's body (/body...)"
    return value, parts
