"""Requests: the JSON body (:func:`read_body`) and the query string (:func:`read_query`)
decoded into Structs; a mismatch is the 400 ``validation_failed`` problem
(:func:`validation_failed`)."""
from __future__ import annotations

import re
from functools import cache
from typing import Any, TypeVar

import falcon
import msgspec

from api import body as _body
from api.schemas.common import InvalidField
from wharf.infra.errors import ValidationFailed

T = TypeVar("T")


def _pointer(path: str) -> str:
    """msgspec's ``$.a.b[0]`` as a JSON pointer ``/a/b/0``."""
    parts = re.findall(r"\.([^.\[]+)|\[(\d+)\]", path[1:])
    return "".join("/" + (name or index) for name, index in parts)


_FIELD_IN_MESSAGE = re.compile(r"^Object (?:missing required|contains unknown) field `(.+)`$",
                               re.DOTALL)
_MAX_FIELD = 200  # an unknown field's name comes from the client: echo a bounded part


def _escape(name: str) -> str:
    """A member name as a JSON pointer token (RFC 6901: ``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return name[:_MAX_FIELD].replace("~", "~0").replace("/", "~1")


_STEP = re.compile(r"\.([^.\[]+)|\[([^\]]*)\]")


def _members(info: msgspec.inspect.Type) -> list[msgspec.inspect.Type]:
    """``info`` without its constraints, a union as its members."""
    while isinstance(info, msgspec.inspect.Metadata):
        info = info.type
    if isinstance(info, msgspec.inspect.UnionType):
        return [m for t in info.types for m in _members(t)]
    return [info]


def _inside(info: msgspec.inspect.Type, name: str | None) -> list[msgspec.inspect.Type]:
    """What msgspec's location step ``.name`` (a member) or ``[...]`` (None: an item, a
    value) leads to inside ``info``."""
    out: list[msgspec.inspect.Type] = []
    for t in _members(info):
        if name is not None and isinstance(t, msgspec.inspect.StructType |
                                           msgspec.inspect.TypedDictType |
                                           msgspec.inspect.DataclassType):
            out += [f.type for f in t.fields if f.encode_name == name]
        elif name is None and isinstance(t, msgspec.inspect.DictType):
            out.append(t.value_type)
        elif name is None and isinstance(t, msgspec.inspect.ListType |
                                         msgspec.inspect.SetType |
                                         msgspec.inspect.FrozenSetType |
                                         msgspec.inspect.VarTupleType):
            out.append(t.item_type)
    return out


def allowed_values(type_: Any, where: str) -> list[Any] | None:
    """The values an enum or ``Literal`` at msgspec's location ``where`` (``$.a[0].b``)
    of ``type_`` allows, from the type itself (None: no enum there)."""
    found: list[msgspec.inspect.Type] = [msgspec.inspect.type_info(type_)]
    for name, _index in _STEP.findall(where[1:]):
        found = [t for info in found for t in _inside(info, name or None)]
    values: list[Any] = []
    for t in (m for info in found for m in _members(info)):
        if isinstance(t, msgspec.inspect.EnumType):
            values += [member.value for member in t.cls]
        elif isinstance(t, msgspec.inspect.LiteralType):
            values += list(t.values)
    return list(dict.fromkeys(values)) or None


def validation_failed(exc: msgspec.ValidationError,
                      type_: Any = None) -> ValidationFailed:
    """A msgspec error as the 400 ``validation_failed`` problem the API always answered.

    msgspec says where as a `` - at `$.a.b[0]``` suffix, except at the top of the body
    (a missing or unknown member, a rule of the whole object). The field is the member the
    message names (missing, unknown) or the :class:`InvalidField` a Struct's own rule
    raised names; else the location (null: the body itself). A value outside an enum
    (``type_``: what was being decoded) lists the allowed values, read from the type, in
    the message and as ``details.allowed`` (as :func:`wharf.infra.validation.one_of` does)."""
    text = str(exc)
    message, located, where = text.rpartition(" - at `")
    if not located:  # no location: the top of the body
        message, where = text, "$`"
    where = where.removesuffix("`")
    pointer = _pointer(where)
    named = _FIELD_IN_MESSAGE.match(message)
    if named:  # missing or unknown: name the member itself
        pointer = f"{pointer}/{_escape(named.group(1))}"
    elif isinstance(exc.__cause__, InvalidField):  # a rule of the Struct about one field
        pointer = f"{pointer}/{_escape(exc.__cause__.field)}"
    field_name = pointer.lstrip("/") or None
    allowed = allowed_values(type_, where) \
        if type_ is not None and message.startswith("Invalid enum value") else None
    error: dict[str, Any] = {"pointer": pointer, "message": message[:200]}
    details: dict[str, Any] = {"field": field_name, "errors": [error]}
    if allowed is not None:  # the value echoed is the client's: a bounded part of it
        clipped = message if len(message) <= 100 else message[:99] + "…'"
        message = f"{clipped}; expected one of: {', '.join(map(str, allowed))}"
        error["message"] = message[:500]
        details["allowed"] = allowed
    return ValidationFailed(f"{field_name + ': ' if field_name else ''}{message}"[:500],
                            details=details)


def read_body(req: falcon.Request, type_: type[T]) -> T:
    """The JSON body as a ``type_`` (hardened parse, then validation)."""
    data = _body.parse_object(req)
    try:
        return msgspec.convert(data, type_)
    except msgspec.ValidationError as exc:
        raise validation_failed(exc, type_) from None


@cache
def _int_fields(type_: type) -> frozenset[str]:
    info = msgspec.inspect.type_info(type_)
    out = set()
    for f in getattr(info, "fields", ()):
        types = [f.type, *getattr(f.type, "types", ())]
        types = [getattr(t, "type", t) if isinstance(t, msgspec.inspect.Metadata) else t
                 for t in types]
        if any(isinstance(t, msgspec.inspect.IntType) for t in types):
            out.add(f.encode_name)
    return frozenset(out)


def read_query(req: falcon.Request, type_: type[T]) -> T:
    """The query string as a ``type_``. Integers must be plain ASCII digits (``int()``
    would also take `` 3``, ``+3``, ``1_0``, ``3.0`` or other scripts' digits)."""
    ints = _int_fields(type_)  # type: ignore[arg-type]
    params: dict[str, Any] = {}
    for name in type_.__struct_fields__:  # type: ignore[attr-defined]
        raw = req.get_param(name)
        if raw is None or raw == "":
            continue
        if name in ints:
            if not (raw.isascii() and raw.isdigit()) or len(raw) > 6:
                raise ValidationFailed(f"{name}: must be an integer",
                                       details={"field": name, "errors": [
                                           {"pointer": f"/{name}",
                                            "message": "must be an integer"}]})
            params[name] = int(raw)
        else:
            params[name] = raw
    try:
        return msgspec.convert(params, type_, strict=False)
    except msgspec.ValidationError as exc:
        raise validation_failed(exc, type_) from None
