"""Applying an RFC 6902 JSON Patch to a unit's document with bounded work.

Any editor of a unit (a link editor too) may post a changeset, so applying one must not
let a client make the server build an arbitrarily large or deep document:

- at most ``max_ops`` operations per changeset;
- the operations are applied one at a time, in place (no recursive ``copy.deepcopy`` of
  the document, which is what made a deep document unpatchable); each value an operation
  inserts (``add``/``replace`` values, ``copy`` and deepening ``move`` subtrees) is
  measured at C speed by serializing it, and the bytes a changeset may copy are capped at
  ``max_bytes``: a changeset of doubling ``copy`` operations stops as soon as it crosses
  the cap, long before it builds a large document;
- nothing may be inserted below ``max_depth`` levels (the document itself is level 1);
- the resulting document may not exceed ``max_bytes`` of compact UTF-8 JSON, unless it is
  no larger than it was (a document stored before the limit, or under a higher one, can
  always be shrunk).

A document stored before these limits (deeper or larger) stays patchable: the checks
apply to what a changeset inserts, not to what is already there.

The RFC 6902 operations are applied here, with jsonpointer's public API only for parsing
pointers (``JsonPointer(text).parts``): the ``jsonpatch`` library deep-copies every value
it inserts and renders document values into its errors, and its internals differ between
releases. A value is inserted as a fresh object parsed from the serialization that measured
it, and a refusal names the operation and what the client sent (clipped), never a value of
the document.
"""
from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, count, repeat
from typing import Any

from jsonpointer import JsonPointer, JsonPointerException

from storage.errors import ChangesetTooLarge, InvalidChangeset, UnitTooDeep, UnitTooLarge

MESSAGE_LIMIT = 200  # characters of a client-supplied pointer or message echoed back

OPERATIONS = ("add", "remove", "replace", "move", "copy", "test")

__all__ = ["ChangesetTooLarge", "InvalidChangeset", "Journal", "UnitLimits", "UnitTooDeep",
           "UnitTooLarge", "apply_changeset", "apply_tracked", "check_document", "json_size",
           "json_text_depth", "parse_changeset"]


@dataclass(frozen=True)
class UnitLimits:
    max_bytes: int = 16 * 1024 * 1024
    max_ops: int = 1000
    max_depth: int = 400
    #: The changesets' values are the caller's own objects (decoded for one replay of
    #: stored revisions): inserted as they are instead of as fresh copies.
    owned_values: bool = False


def _clip(value: Any) -> str:
    text = str(value)
    return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT] + "…"


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def json_size(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON."""
    return len(_dumps(value).encode("utf-8", "surrogatepass"))


_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_LEVELS = str.maketrans({"[": "\x01", "{": "\x01", "]": "\x00", "}": "\x00"})


def json_text_depth(text: str) -> int:
    """Nesting depth of serialized JSON (a scalar is 0, ``{}`` is 1), computed with C-speed
    primitives and no recursion: drop strings, keep brackets, take the maximum running
    count of open brackets."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_LEVELS)
    if not brackets:
        return 0
    opens = accumulate(brackets.encode("latin-1"))
    # depth after the i-th bracket (1-based) is opens_i - (i - opens_i) = 2 * opens_i - i
    depth: int = max(map(operator.sub, map(operator.mul, opens, repeat(2)), count(1)))
    return depth


def check_document(doc: Any, limits: UnitLimits, *, field: str = "snapshot") -> int:
    """A whole document given by a client (a unit's first snapshot): a JSON object of at
    most ``max_bytes`` (:class:`UnitTooLarge`) and ``max_depth`` levels, the document
    being level 1 (:class:`UnitTooDeep`), as a changeset's result must be. Its size."""
    if not isinstance(doc, dict):
        raise InvalidChangeset("a snapshot must be a JSON object", details={"field": field})
    try:
        text = _dumps(doc)
    except RecursionError:
        raise UnitTooDeep("The document is nested too deep.",
                          details={"field": field, "max_depth": limits.max_depth}) from None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limits.max_bytes:
        raise UnitTooLarge(f"The unit would be {size} bytes; at most {limits.max_bytes} are "
                           "allowed.", details={"field": field, "max_bytes": limits.max_bytes})
    depth = json_text_depth(text)
    if depth > limits.max_depth:
        raise UnitTooDeep(f"The document nests {depth} levels deep; at most "
                          f"{limits.max_depth} are allowed.",
                          details={"field": field, "max_depth": limits.max_depth})
    return size


def _json_equal(a: Any, b: Any) -> bool:
    """RFC 6902 §4.6 equality (1 == 1.0, true != 1). Recurses only as deep as both values
    are containers, and one of them comes from the request (nesting-limited)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and _json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_json_equal, a, b))
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    equal: bool = a == b
    return equal


def _pointer(raw: dict[str, Any], member: str, index: int) -> JsonPointer:
    value = raw.get(member)
    if not isinstance(value, str):
        raise InvalidChangeset(f"operation {index}: '{member}' must be a JSON Pointer string",
                               details={"op_index": index})
    try:
        return JsonPointer(value)
    except JsonPointerException:
        raise InvalidChangeset(f"operation {index}: '{member}' {_clip(value)!r} is not a "
                               f"JSON Pointer (RFC 6901)", details={"op_index": index}) from None


@dataclass
class ParsedOp:
    index: int
    name: str
    raw: dict[str, Any]
    path: JsonPointer
    source: JsonPointer | None  # ``from``: move and copy only

    @property
    def from_(self) -> JsonPointer:
        if self.source is None:  # parse_changeset sets it for move and copy
            raise InvalidChangeset(f"operation {self.index}: '{self.name}' has no 'from'",
                                   details={"op_index": self.index})
        return self.source


def parse_changeset(changes: Any, limits: UnitLimits) -> list[ParsedOp]:
    """Validate the changeset's shape and pointers before touching any document."""
    if not isinstance(changes, list) or not changes:
        raise InvalidChangeset("changes must be a non-empty RFC 6902 JSON Patch array")
    if len(changes) > limits.max_ops:
        raise ChangesetTooLarge(
            f"The changeset has {len(changes)} operations; at most {limits.max_ops} "
            f"are accepted.", details={"max_ops": limits.max_ops})
    ops = []
    for index, raw in enumerate(changes):
        if not isinstance(raw, dict):
            raise InvalidChangeset(f"operation {index} is not an object",
                                   details={"op_index": index})
        name = raw.get("op")
        if not isinstance(name, str) or name not in OPERATIONS:
            raise InvalidChangeset(f"operation {index}: 'op' must be one of add, remove, "
                                   f"replace, move, copy, test", details={"op_index": index})
        path = _pointer(raw, "path", index)
        source = _pointer(raw, "from", index) if name in ("move", "copy") else None
        if name in ("add", "replace", "test") and "value" not in raw:
            raise InvalidChangeset(f"operation {index}: '{name}' needs a 'value'",
                                   details={"op_index": index})
        ops.append(ParsedOp(index, name, raw, path, source))
    return ops


class _Budget:
    def __init__(self, limits: UnitLimits):
        self.limits = limits
        self.copied = 0   # bytes copied or measured for copy/move, capped at max_bytes
        self.grown = 0    # bytes inserted by the changeset (upper bound of the growth)

    def measure(self, value: Any, at: JsonPointer, index: int, *, charge: bool) -> str:
        """Serialize ``value`` (to be placed at ``at``), enforcing the depth limit and, for
        work that scales with the document (``charge``), the per-changeset copy budget."""
        text = _dumps(value)
        if charge:
            self.copied += len(text)
            if self.copied > self.limits.max_bytes:
                raise UnitTooLarge(
                    f"The changeset copies more than {self.limits.max_bytes} bytes.",
                    details={"op_index": index, "max_bytes": self.limits.max_bytes})
        if len(at.parts) + len(text) > self.limits.max_depth:  # (depth <= length)
            self.check_depth(len(at.parts) + json_text_depth(text), index)
        return text

    def check_depth(self, depth: int, index: int) -> None:
        if depth > self.limits.max_depth:
            raise UnitTooDeep(
                f"Operation {index} would nest the unit {depth} levels deep; at most "
                f"{self.limits.max_depth} are allowed.",
                details={"op_index": index, "max_depth": self.limits.max_depth})


class Journal:
    """What a changeset applied in place did, so it can be undone, and by how many bytes it
    changed the document's compact size (:func:`apply_tracked`).

    Each in-place mutation records its inverse; :meth:`undo` runs them newest first, which
    restores every container (an object's member order too). The size is counted per
    operation from the values it inserts and removes, never by serializing the document:
    a compact JSON container is its brackets, its members and one comma between each two,
    so inserting a member adds the member and (into a non-empty container) a comma.
    Undoing never copies a container: a removed object member goes back at the end
    (:attr:`reordered` says so; a caller that keeps the document drops it then)."""

    def __init__(self) -> None:
        self.delta = 0
        # set by an undo that put a removed member back at the end of its object (the
        # document is equal as JSON, its members' order is not the stored one)
        self.reordered = False
        self._undo: list[Callable[[], None]] = []

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()

    def set_member(self, container: dict[str, Any], key: str, value: Any, size: int) -> None:
        if key in container:
            old = container[key]
            self.delta += size - json_size(old)
            self._undo.append(lambda: container.__setitem__(key, old))
        else:
            self.delta += _member_size(key) + size + (1 if container else 0)
            self._undo.append(lambda: container.__delitem__(key))
        container[key] = value

    def set_item(self, array: list[Any], index: int, value: Any, size: int) -> None:
        old = array[index]
        self.delta += size - json_size(old)
        self._undo.append(lambda: array.__setitem__(index, old))
        array[index] = value

    def insert(self, array: list[Any], index: int, value: Any, size: int) -> None:
        self.delta += size + (1 if array else 0)
        self._undo.append(lambda: array.pop(index))
        array.insert(index, value)

    def pop_member(self, container: dict[str, Any], key: str) -> tuple[Any, int]:
        """Remove ``container[key]``: the value and its compact size."""
        last = next(reversed(container)) == key
        old = container.pop(key)
        size = json_size(old)
        self.delta -= _member_size(key) + size + (1 if container else 0)

        def put_back() -> None:
            container[key] = old  # at the end: the members' order may have changed
            if not last:
                self.reordered = True
        self._undo.append(put_back)
        return old, size

    def pop_item(self, array: list[Any], index: int) -> tuple[Any, int]:
        """Remove ``array[index]``: the value and its compact size."""
        old = array.pop(index)
        size = json_size(old)
        self.delta -= size + (1 if array else 0)
        self._undo.append(lambda: array.insert(index, old))
        return old, size


def _member_size(key: str) -> int:
    """Bytes of ``"key":`` in compact JSON."""
    return json_size(key) + 1


_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]{0,17}")  # RFC 6901 §4; longer is out of range anyway


def _fail(op: ParsedOp, why: str) -> InvalidChangeset:
    """A refusal that names the operation and only what the client sent (clipped): never a
    document value, and never a library's exception text (which may render one)."""
    return InvalidChangeset(f"operation {op.index} ({op.name}): {why}",
                            details={"op_index": op.index})


def _where(op: ParsedOp, member: str) -> str:
    return f"'{member}' {_clip(op.raw[member])!r}"


def _index(op: ParsedOp, member: str, array: list[Any], part: str, *, end_ok: bool) -> int:
    """``part`` as an index into ``array``: ``len(array)`` (and ``-``) only if ``end_ok``."""
    if part == "-" and end_ok:
        return len(array)
    if not _ARRAY_INDEX.fullmatch(part):
        raise _fail(op, f"{_where(op, member)}: not an array index")
    i = int(part)
    if i > len(array) or (i == len(array) and not end_ok):
        raise _fail(op, f"{_where(op, member)}: array index out of range")
    return i


def _resolve(op: ParsedOp, member: str, doc: Any, parts: list[str]) -> Any:
    """The value at ``parts`` (a prefix of the pointer in ``op.raw[member]``)."""
    for part in parts:
        if isinstance(doc, dict):
            if part not in doc:
                raise _fail(op, f"{_where(op, member)}: no such member")
            doc = doc[part]
        elif isinstance(doc, list):
            doc = doc[_index(op, member, doc, part, end_ok=False)]
        else:
            raise _fail(op, f"{_where(op, member)}: goes through a value that is neither "
                            f"an object nor an array")
    return doc


def _parent(op: ParsedOp, member: str, doc: Any, pointer: JsonPointer) -> tuple[Any, str]:
    """The container of the location ``pointer`` names, and its last reference token."""
    container = _resolve(op, member, doc, pointer.parts[:-1])
    if not isinstance(container, (dict, list)):
        raise _fail(op, f"{_where(op, member)}: the parent is neither an object nor an array")
    return container, pointer.parts[-1]


def _root(journal: Journal, doc: Any, value: Any, size: int) -> Any:
    """The root replaced: the old document is left as it was (nothing to undo)."""
    journal.delta += size - json_size(doc)
    return value


def _add(op: ParsedOp, doc: Any, value: Any, size: int, journal: Journal) -> Any:
    """RFC 6902 §4.1 at ``op.path``: set an object member, insert into an array (``-``
    appends); the root is replaced. ``size``: the value's compact size. Returns the
    document."""
    if not op.path.parts:
        return _root(journal, doc, value, size)
    container, part = _parent(op, "path", doc, op.path)
    if isinstance(container, dict):
        journal.set_member(container, part, value, size)
    else:
        journal.insert(container, _index(op, "path", container, part, end_ok=True), value,
                       size)
    return doc


def _replace(op: ParsedOp, doc: Any, value: Any, size: int, journal: Journal) -> Any:
    """RFC 6902 §4.3: replace the existing value at ``op.path`` (the root too)."""
    if not op.path.parts:
        return _root(journal, doc, value, size)
    container, part = _parent(op, "path", doc, op.path)
    if isinstance(container, dict):
        if part not in container:
            raise _fail(op, f"{_where(op, 'path')}: no such member")
        journal.set_member(container, part, value, size)
    else:
        journal.set_item(container, _index(op, "path", container, part, end_ok=False), value,
                         size)
    return doc


def _remove(op: ParsedOp, member: str, doc: Any, pointer: JsonPointer,
            journal: Journal) -> tuple[Any, int]:
    """RFC 6902 §4.2: remove the existing value at ``pointer``; it and its compact size."""
    if not pointer.parts:
        raise _fail(op, "the whole document cannot be removed")
    container, part = _parent(op, member, doc, pointer)
    if isinstance(container, dict):
        if part not in container:
            raise _fail(op, f"{_where(op, member)}: no such member")
        return journal.pop_member(container, part)
    return journal.pop_item(container, _index(op, member, container, part, end_ok=False))


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _apply_one(op: ParsedOp, doc: Any, budget: _Budget, journal: Journal) -> Any:
    """Apply one operation in place and return the document. A value is inserted as a fresh
    object parsed from its serialization (C speed, no recursive deepcopy): never the
    request's own object, which later operations would otherwise alter in the recorded
    changeset, nor a subtree shared with the document."""
    name, raw = op.name, op.raw
    if name in ("add", "replace"):
        text = budget.measure(raw["value"], op.path, op.index, charge=False)
        value = raw["value"] if budget.limits.owned_values else json.loads(text)
        doc = (_replace if name == "replace" else _add)(op, doc, value, _utf8(text), journal)
        budget.grown += len(text)
        return doc
    if name == "remove":
        _remove(op, "path", doc, op.path, journal)
        return doc
    if name == "test":
        if not _json_equal(_resolve(op, "path", doc, op.path.parts), raw["value"]):
            raise _fail(op, f"test failed: the value at {_where(op, 'path')} differs")
        return doc
    if name == "copy":
        text = budget.measure(_resolve(op, "from", doc, op.from_.parts), op.path, op.index,
                              charge=True)
        doc = _add(op, doc, json.loads(text), _utf8(text), journal)
        budget.grown += len(text)
        return doc
    # move (§4.4): the subtree keeps its size; it is measured only if it goes deeper.
    source, target = op.from_.parts, op.path.parts
    if source == target:
        _resolve(op, "from", doc, source)  # must exist; moving it in place changes nothing
        return doc
    if target[:len(source)] == source:
        raise _fail(op, "a value cannot be moved into one of its children")
    value, size = _remove(op, "from", doc, op.from_, journal)
    if len(target) > len(source):  # deeper: its depth checked where it goes
        budget.measure(value, op.path, op.index, charge=True)
    return _add(op, doc, value, size, journal)


def apply_changeset(doc: dict[str, Any], ops: list[ParsedOp], limits: UnitLimits,
                    original_size: Callable[[], int]) -> dict[str, Any]:
    """Apply ``ops`` to ``doc`` **in place** (the caller passes a document it owns and
    discards it on error) and return the new document. ``original_size`` is called only
    when the result exceeds the size limit, to let an already-oversized unit shrink."""
    new_doc, budget = _apply_all(doc, ops, limits, Journal())
    if budget.grown:
        size = json_size(new_doc)
        if size > limits.max_bytes and size > original_size():
            raise UnitTooLarge(
                f"The unit would be {size} bytes; at most {limits.max_bytes} are allowed.",
                details={"max_bytes": limits.max_bytes})
    return new_doc


def apply_tracked(doc: dict[str, Any], size: int, ops: list[ParsedOp], limits: UnitLimits,
                  journal: Journal) -> tuple[dict[str, Any], int]:
    """Apply ``ops`` to ``doc`` in place, whose compact size is ``size``: the new document
    and its size, counted from what the operations insert and remove (the document is
    never serialized whole, so the work follows the changeset). On any refusal the
    document is as it was: ``journal`` is undone before the error propagates. A refusal
    for size: the result over ``limits.max_bytes`` and larger than ``size``."""
    start = journal.delta  # the journal may carry earlier changesets' operations
    try:
        new_doc, _ = _apply_all(doc, ops, limits, journal)
        new_size = size + journal.delta - start
        if new_size > limits.max_bytes and new_size > size:
            raise UnitTooLarge(
                f"The unit would be {new_size} bytes; at most {limits.max_bytes} are "
                f"allowed.", details={"max_bytes": limits.max_bytes})
    except BaseException:
        journal.undo()
        raise
    return new_doc, new_size


def _apply_all(doc: dict[str, Any], ops: list[ParsedOp], limits: UnitLimits,
               journal: Journal) -> tuple[dict[str, Any], _Budget]:
    budget = _Budget(limits)
    new_doc: Any = doc
    for op in ops:
        try:
            new_doc = _apply_one(op, new_doc, budget, journal)
        except RecursionError:
            raise UnitTooDeep(f"Operation {op.index} reaches too deep into the unit.",
                              details={"op_index": op.index,
                                       "max_depth": limits.max_depth}) from None
    if not isinstance(new_doc, dict):
        raise InvalidChangeset("a snapshot must stay a JSON object")
    return new_doc, budget
