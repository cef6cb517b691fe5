"""The typed HTTP contract: route metadata, request decoding, response encoding and the
OpenAPI 3.1 document generated from the mounted app.

Usage (a responder)::

    from api import contract
    from api.schemas.spaces import CreateSpaceRequest, Space

    class Spaces:
        @contract.op(operation_id="createSpace", summary="Create a team space", tags=["spaces"],
                     body=CreateSpaceRequest, responses={201: contract.Answer(Space,
                     headers=("Location",))}, problems=(409,))
        def on_post(self, req, resp):
            body = contract.read_body(req, CreateSpaceRequest)   # typed, validated
            ...
            resp.media = Space(...)                              # encoded by msgspec
            resp.status = falcon.HTTP_201

- ``read_body(req, T)``: the hardened JSON parse of ``api.body`` (size, depth, duplicate
  keys, NaN/Infinity, lone surrogates) then ``msgspec.convert``; a mismatch is the 400
  ``validation_failed`` problem (``details.field``, ``details.errors[].pointer``).
- ``read_query(req, T)``: the query string into a Struct (integers as plain ASCII digits).
- ``resp.media = <Struct>``: ``install(app)`` makes msgspec the JSON encoder.
- ``@op(...)``: every responder of a mounted resource needs it; ``auth`` is the single
  source for the middleware (``"required"``: a user; ``"optional"``: visitors too, given
  credentials are checked; ``"none"``: credentials are not read; ``"metrics"``: the
  monitoring bearer token; :func:`auth_modes`). 401/403 are documented from it.
- :class:`App`: ``falcon.App`` that records every route it mounts (template, resource and
  its responders as Falcon maps them, ``suffix=`` included).
- ``document(app)``: the OpenAPI document of those routes (``/api/openapi.json`` serves
  the document of the app it is mounted in). A responder without metadata makes building
  fail (:class:`Undocumented`).
"""
from __future__ import annotations

import copy
import functools
import http
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any, Literal, NamedTuple, TypeVar

import falcon
import falcon.media
import falcon.routing
import msgspec

from api import body as _body
from api.errors import PROBLEM
from api.schemas.common import InvalidField
from api.schemas.operations import MAX_WAIT
from api.schemas.problem import Problem
from wharf.assets.upload import SHA256_PATTERN
from wharf.infra.errors import ProblemCode, ValidationFailed
from wharf.operations.service import IDEMPOTENCY_KEY_PATTERN

Auth = Literal["required", "optional", "none", "metrics"]
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")

JSON = "application/json"
REF = "#/components/schemas/{name}"


# --- route metadata ---------------------------------------------------------------------
@dataclass(frozen=True)
class Answer:
    """One documented response: a Struct (or None for no body), or a raw ``schema`` for
    other media types; ``headers`` are names of ``HEADERS`` the server sends with it."""

    type: Any = None
    description: str = ""
    headers: tuple[str, ...] = ()
    content_type: str = JSON
    schema: dict[str, Any] | None = None
    also: tuple[str, ...] = ()  # more media types of the same schema (e.g. "*/*")


@dataclass(frozen=True)
class Operation:
    operation_id: str
    summary: str
    tags: tuple[str, ...]
    responses: dict[int, Answer]
    description: str = ""
    body: Any = None
    query: Any = None
    problems: tuple[int, ...] = ()
    auth: Auth = "required"
    headers: tuple[str, ...] = ()  # request header parameters (names in components)
    raw_body: tuple[str, dict[str, Any]] | None = None  # (media type, schema): not JSON


def op(*, operation_id: str, summary: str, tags: list[str] | tuple[str, ...],
       responses: dict[int, Any], description: str = "", body: Any = None, query: Any = None,
       problems: tuple[int, ...] = (), auth: Auth = "required",
       headers: tuple[str, ...] = (),
       raw_body: tuple[str, dict[str, Any]] | None = None) -> Callable[[F], F]:
    """Attach the contract of one responder (see the module docstring). ``raw_body`` is a
    request body that is not JSON (e.g. streamed bytes): its media type and schema."""
    answers = {status: a if isinstance(a, Answer) else Answer(a)
               for status, a in responses.items()}
    meta = Operation(operation_id=operation_id, summary=summary, tags=tuple(tags),
                     responses=answers, description=description, body=body, query=query,
                     problems=tuple(problems), auth=auth, headers=tuple(headers),
                     raw_body=raw_body)

    def decorate(fn: F) -> F:
        fn.__contract__ = meta  # type: ignore[attr-defined]
        return fn
    return decorate


def operation_of(responder: Callable[..., Any]) -> Operation | None:
    """The contract ``@op`` attached to ``responder`` (None: undeclared)."""
    meta = getattr(responder, "__contract__", None)
    return meta if isinstance(meta, Operation) else None


# --- routes -----------------------------------------------------------------------------
class Route(NamedTuple):
    """A mounted route: its resource and responders by HTTP method."""

    resource: object
    responders: dict[str, Callable[..., Any]]


def _head_of(get: Callable[..., Any]) -> Callable[..., Any]:
    """HEAD answered by the GET responder ``get``: the same status and headers (Falcon
    drops the body of a HEAD answer and keeps the ``Content-Length`` of the body it
    rendered), so it has no effect a GET would not have. A stream the GET opened is closed
    unread (content routes declare their own ``on_head``, which opens none)."""

    @functools.wraps(get)  # the GET's contract (``__contract__``): its auth mode
    def on_head(req: falcon.Request, resp: falcon.Response, **params: Any) -> None:
        get(req, resp, **params)
        stream = resp.stream
        if stream is not None:
            resp.stream = None
            close = getattr(stream, "close", None)
            if close is not None:
                close()

    on_head.__implicit_head__ = True  # type: ignore[attr-defined]
    return on_head


def is_implicit_head(responder: Callable[..., Any]) -> bool:
    """A HEAD responder added by :func:`with_head` (the document does not list it)."""
    return bool(getattr(responder, "__implicit_head__", False))


def with_head(methods: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    """A route's responders by method, with HEAD wherever GET is answered: the resource's
    own ``on_head`` if it has one, else its GET (:func:`_head_of`). The one place HEAD is
    added: Falcon's router (:class:`_Router`) and :attr:`App.routes` both take it."""
    out = dict(methods)
    if "GET" in out and "HEAD" not in out:
        out["HEAD"] = _head_of(out["GET"])
    return out


class _Router(falcon.routing.CompiledRouter):
    """Falcon's router, mapping HEAD wherever GET is mapped (:func:`with_head`)."""

    def map_http_methods(self, resource: object, **kwargs: Any) -> Any:
        return with_head(super().map_http_methods(resource, **kwargs))


class App(falcon.App[falcon.Request, falcon.Response]):
    """The WSGI app (Falcon's own request and response types) that records what it mounts:
    ``add_route`` also keeps the resource and its responders, mapped the way Falcon maps
    them (``on_<method>``, or ``on_<method>_<suffix>`` with ``suffix=``), HEAD included
    wherever GET is (:func:`with_head`). The document and the auth middleware read
    :attr:`routes`, not Falcon's router."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._routes: dict[str, Route] = {}
        kwargs.setdefault("router", _Router())
        super().__init__(*args, **kwargs)

    def add_route(self, uri_template: str, resource: object, **kwargs: Any) -> None:
        super().add_route(uri_template, resource, **kwargs)
        responders = falcon.routing.map_http_methods(resource, suffix=kwargs.get("suffix"))
        self._routes[uri_template] = Route(resource, with_head(responders))

    @property
    def routes(self) -> Mapping[str, Route]:
        """Every mounted route by URI template (a template mounted again: the last)."""
        return MappingProxyType(self._routes)


#: ``falcon.App`` as this module found it (``App``'s base).
_FALCON_APP = falcon.App


@cache
def _on_top_of(base: type[Any]) -> type[App]:
    return type("App", (App, base), {"__doc__": App.__doc__})


def new_app() -> App:
    """An :class:`App`. When ``falcon.App`` was replaced since this module was imported --
    OpenTelemetry's Falcon instrumentation replaces it with a traced subclass
    (``wharfd.tracing``) -- the app is built on top of the replacement as well, so the
    instrumentation applies whatever the import order."""
    current = falcon.App
    if current is _FALCON_APP or issubclass(App, current):
        return App()
    return _on_top_of(current)()


def routes(app: App) -> dict[str, Route]:
    return dict(app.routes)


def auth_modes(app: App) -> dict[str, dict[str, Auth | None]]:
    """The declared ``auth`` of every mounted responder: URI template -> HTTP method ->
    mode (None: a responder without contract metadata)."""
    out: dict[str, dict[str, Auth | None]] = {}
    for template, route in app.routes.items():
        modes: dict[str, Auth | None] = {}
        for method, responder in route.responders.items():
            meta = operation_of(responder)
            modes[method] = meta.auth if meta is not None else None
        out[template] = modes
    return out


# --- requests ---------------------------------------------------------------------------
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


# --- responses --------------------------------------------------------------------------
def _dumps(media: object) -> str:
    return json.dumps(msgspec.to_builtins(media), ensure_ascii=False)


class MsgspecJSON(falcon.media.JSONHandler):
    """``resp.media`` (Structs, dicts, lists): msgspec turns Structs and enums into plain
    JSON values (``to_builtins``), which ``json.dumps`` writes with the formatting Falcon's
    own handler used (``ensure_ascii=False``, ``", "`` and ``": "`` separators). A Struct's
    keys come in the order its fields are declared: a response that was a hand-built dict
    before may list its keys in another order (an ``Operation`` starts with ``kind`` and has
    ``error`` before ``result``); the values are the same. Request bodies are decoded by
    :func:`read_body`; this handler's ``loads`` (``req.media``) is msgspec's decoder."""

    def __init__(self) -> None:
        super().__init__(dumps=_dumps, loads=msgspec.json.decode)


def install(app: App) -> None:
    app.resp_options.media_handlers[falcon.MEDIA_JSON] = MsgspecJSON()


# --- the document -----------------------------------------------------------------------
class Undocumented(RuntimeError):
    """A mounted responder has no contract metadata."""


TAGS = {
    "system": "Liveness, readiness, dependency status, metrics and this document.",
    "identity": "Registration, login sessions, the current principal and API tokens.",
    "spaces": "Personal and team spaces and team membership.",
    "nodes": "The node tree: folders and the nodes that hold resources.",
    "sharing": "Direct grants and link sharing on nodes of personal spaces.",
    "trash": "Trash batches, restore and permanent deletion.",
    "recent": "Recently opened resources.",
    "resources": "Unit resources, created by operations.",
    "units": "Unit snapshots and JSON Patch changesets.",
    "operations": "Durable, idempotent operations: read, long-poll, retry, cancel.",
    "blobs": "Upload sessions, blob content, ranged reads and downloads.",
    "assets": "Files embedded in units (images in a doc): uploaded, published by a "
              "worker, served through a permission gate.",
    "worktrees": "Isolated drafts of units, merged back into trunk by operations: "
                 "create, list, rename, ready/reopen, discard.",
    "dashboard": "The operator dashboard (WHARF_OPERATORS only): its page, its numbers.",
    "issues": "Team-space issues: #N per space, comments and events, labels, assignees "
              "and node references.",
}

#: Response headers the server sends, declared once and referenced by name.
HEADERS: dict[str, dict[str, Any]] = {
    "Location": {"description": "The URL of the created or tracked resource.",
                 "schema": {"type": "string"}},
    "ETag": {"description": "Strong entity tag of the representation.",
             "schema": {"type": "string"}},
    "Set-Cookie": {"description": "`wharf_session=<secret>; HttpOnly; SameSite=Lax; Path=/` "
                                  "(login) or its removal (logout).",
                   "schema": {"type": "string"}},
    "Retry-After": {"description": "Seconds to wait before trying again.",
                    "schema": {"type": "string", "pattern": "^[0-9]+$"}},
    "Accept-Ranges": {"description": "`bytes`: single byte ranges are served (`Range`).",
                      "schema": {"type": "string", "enum": ["bytes"]}},
    "Content-Range": {"description": "`bytes <first>-<last>/<size>` of a 206, or "
                                     "`bytes */<size>` of a 416.",
                      "schema": {"type": "string"}},
    "Content-Disposition": {"description": "`attachment; filename=\"<ASCII fallback>\"; "
                                           "filename*=UTF-8''<percent-encoded name>` "
                                           "(RFC 6266).",
                            "schema": {"type": "string"}},
    "Preference-Applied": {"description": "`wait=<seconds>` (the wait the server "
                                          "allowed: the request's, at most the server's "
                                          "limit): the request's `Prefer: wait` was "
                                          "honoured and the answer is the finished "
                                          "operation (RFC 7240).",
                           "schema": {"type": "string"}},
    "X-Request-Id": {"description": "The request's id (the client's `X-Request-Id` when "
                                    "it is 1-128 of `[A-Za-z0-9._:-]`); logs carry it.",
                     "schema": {"type": "string"}},
}
#: Sent with every answer.
ALWAYS = ("X-Request-Id",)

#: Request header parameters, declared once (components/parameters).
HEADER_PARAMETERS: dict[str, dict[str, Any]] = {
    "Idempotency-Key": {
        "name": "Idempotency-Key", "in": "header", "required": True,
        "description": "Repeating a request with the same key (and body) answers with the "
                       "same operation instead of starting another one.",
        "schema": {"type": "string", "pattern": IDEMPOTENCY_KEY_PATTERN},
        "example": "create-q3-plans-2026-01-31"},
    "Prefer": {
        "name": "Prefer", "in": "header", "required": False,
        "description": "`wait=<seconds>` (RFC 7240): wait up to that long (at most "
                       f"{MAX_WAIT:g} s) for the operation to be done and answer 200 with it (and "
                       "`Preference-Applied`) instead of 202 at once: one request instead of "
                       "a POST and a long-poll. Still 202 if it is not done by then, if "
                       "the server's long-poll slots are taken, or if the operation could "
                       "not be read while waiting (the submission stands either way). "
                       "Other preferences, and a malformed one, are ignored.",
        "schema": {"type": "string"}, "example": "wait=10"},
    "If-Match": {
        "name": "If-Match", "in": "header", "required": True,
        "description": "The current strong ETag (as sent in `ETag`); 412 if it changed.",
        "schema": {"type": "string"}, "example": '"5d41402abc4b2a76b9719d911017c592"'},
    "If-None-Match": {
        "name": "If-None-Match", "in": "header", "required": False,
        "description": "ETags of the copy the client has (or `*`): 304 if one is current.",
        "schema": {"type": "string"}},
    "Range": {
        "name": "Range", "in": "header", "required": False,
        "description": "One byte range (`bytes=0-99`, `bytes=100-`, `bytes=-100`): 206 with "
                       "that part; a range beyond the end is 416. Several ranges or a "
                       "malformed value: the whole content (200).",
        "schema": {"type": "string"}, "example": "bytes=0-1023"},
    "Content-SHA256": {
        "name": "Content-SHA256", "in": "header", "required": False,
        "description": "The SHA-256 of the body (64 hex digits): the upload fails 400 "
                       "`checksum_mismatch` if the bytes differ, and a replay of the same "
                       "Idempotency-Key naming other bytes is 409 `idempotency_key_reused`.",
        "schema": {"type": "string", "pattern": SHA256_PATTERN}},
    "If-Range": {
        "name": "If-Range", "in": "header", "required": False,
        "description": "Serve `Range` only if the ETag still matches (else the whole "
                       "content).",
        "schema": {"type": "string"}},
}

#: Problem responses (components/responses), by status.
PROBLEM_RESPONSES: dict[int, tuple[str, str, tuple[str, ...]]] = {
    400: ("BadRequest", "The request is malformed or fails validation "
                        "(`malformed_json`, `validation_failed`, `invalid_cursor`, ...).", ()),
    401: ("Unauthenticated", "No valid credentials (`unauthenticated`, `invalid_token`, ...).",
          ()),
    403: ("Forbidden", "Not allowed (`forbidden`, `insufficient_scope`, `cross_origin`, ...).",
          ()),
    404: ("NotFound", "No such target, or the caller may not see it.", ()),
    409: ("Conflict", "The request conflicts with the current state.", ()),
    410: ("Gone", "It existed, and retention deleted it (`draft_purged`).", ()),
    411: ("LengthRequired", "Send `Content-Length`.", ()),
    412: ("PreconditionFailed", "A precondition (`If-Match`) did not hold.", ()),
    413: ("PayloadTooLarge", "The body is larger than the configured limit.", ()),
    415: ("UnsupportedMediaType", "Send `application/json`.", ()),
    416: ("RangeNotSatisfiable", "The range is outside the content.", ()),
    428: ("PreconditionRequired", "Send `If-Match`.", ()),
    429: ("TooManyRequests", "Too many attempts (`rate_limited`), or a quota is used up "
                             "(`quota_exceeded`: `details` name the `quota`, its `limit` "
                             "and the `current` count); retry after `Retry-After` seconds.",
          ("Retry-After",)),
    503: ("ServiceUnavailable", "A dependency is busy or down; retry after `Retry-After`.",
          ("Retry-After",)),
}

SECURITY_SCHEMES = {
    "bearer": {"type": "http", "scheme": "bearer",
               "description": "An API token (`wharf_...`); scopes `read` (safe methods) "
                              "and `write` (the rest)."},
    "session": {"type": "apiKey", "in": "cookie", "name": "wharf_session",
                "description": "The login session cookie. Cookie-authenticated writes must "
                               "come from the server's own origin."},
    "metricsToken": {"type": "http", "scheme": "bearer",
                     "description": "`WHARF_METRICS_TOKEN`, when one is configured."},
}

PATH_PARAMETER_DESCRIPTION = "An id (32 lowercase hex digits); unknown ids are 404."
#: Path parameters that are not ids.
PATH_PARAMETER_DESCRIPTIONS = {
    "number": "An issue's `#N` in its space (digits); an unknown number is 404.",
}


def problem_codes() -> tuple[str, ...]:
    """Every problem ``code`` the server can answer with
    (:class:`wharf.infra.errors.ProblemCode`)."""
    return tuple(sorted(code.value for code in ProblemCode))


def _ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(name=name)}


def _struct_types(meta: Operation) -> Iterator[Any]:
    if meta.body is not None:
        yield meta.body
    for answer in meta.responses.values():
        if answer.type is not None:
            yield answer.type


def _schema_name(type_: Any) -> str | None:
    return getattr(type_, "__name__", None)


class _Builder:
    def __init__(self, app: App, server_url: str | None) -> None:
        self.app = app
        self.server_url = server_url
        self.types: list[Any] = [Problem]
        self.paths: dict[str, dict[str, Any]] = {}
        self.used_tags: set[str] = set()
        self.parameters: dict[str, Any] = {}
        self.inline: dict[int, dict[str, Any]] = {}  # id(type) -> its schema (unions)
        self.query_types: set[str] = set()

    def build(self) -> dict[str, Any]:
        ops: list[tuple[str, str, object, Operation]] = []
        missing = []
        for template, route in sorted(self.app.routes.items()):
            for method, responder in sorted(route.responders.items()):
                if is_implicit_head(responder):
                    continue  # HEAD wherever GET: said once, in the info's description
                meta = operation_of(responder)
                if meta is None:
                    missing.append(f"{method} {template} ({type(route.resource).__name__})")
                else:
                    ops.append((template, method, route.resource, meta))
        if missing:
            raise Undocumented("responders without contract metadata: " + ", ".join(missing))
        for *_, meta in ops:
            self.types.extend(_struct_types(meta))
            if meta.query is not None:
                self.types.append(meta.query)
        inline, schemas = _schema_components(tuple(self.types))
        self.inline = {id(t): schema for t, schema in zip(self.types, inline)}
        for template, method, _resource, meta in ops:
            item = self.paths.setdefault(template, {})
            params = re.findall(r"\{([^}]+)\}", template)
            if params and "parameters" not in item:
                item["parameters"] = [self._path_param(p) for p in params]
            item[method.lower()] = self._operation(meta, params, schemas)
        schemas = {name: self._polish(name, schema) for name, schema in schemas.items()
                   if name not in self.query_types}  # query Structs became parameters
        schemas["ProblemCode"] = {"type": "string", "enum": list(problem_codes()),
                                  "description": "Every `code` a problem may carry."}
        schemas["Problem"]["properties"]["code"] = {
            **_ref("ProblemCode"), "description": "Stable machine-readable error code."}
        document: dict[str, Any] = {
            "openapi": "3.1.0",
            "info": {"title": "Wharf", "version": "0.1.0",
                     "description": "Document workspace backend. Errors are RFC 9457 "
                                    "`application/problem+json` with a stable `code`. "
                                    "Every path that answers `GET` answers `HEAD` too, "
                                    "with the same status and headers and no body; "
                                    "`HEAD` is listed only where it is its own operation "
                                    "(content downloads)."},
            "servers": [{"url": self.server_url or "/",
                         "description": "This server"}],
            "tags": [{"name": t, "description": d} for t, d in TAGS.items()
                     if t in self.used_tags],
            "paths": dict(sorted(self.paths.items())),
            "components": {
                "schemas": dict(sorted(schemas.items())),
                "responses": {name: self._problem_response(desc, hdrs)
                              for name, desc, hdrs in PROBLEM_RESPONSES.values()},
                "parameters": {**{n: p for n, p in sorted(self.parameters.items())},
                               **_component_parameters()},
                "headers": HEADERS,
                "securitySchemes": SECURITY_SCHEMES,
            },
            # Every operation declares its own; this default is for tools that ignore it.
            "security": [{"bearer": []}, {"session": []}],
        }
        return document

    def _polish(self, name: str, schema: dict[str, Any]) -> dict[str, Any]:
        schema = dict(schema)
        schema.pop("title", None)
        if "enum" in schema and "type" not in schema:
            schema = {"type": "string", **schema}
        for type_ in self.types:  # class-level rules (e.g. minProperties of PATCH bodies)
            if _schema_name(type_) == name:
                schema.update(getattr(type_, "__contract_schema__", None) or {})
        return schema

    def _path_param(self, name: str) -> dict[str, str]:
        self.parameters.setdefault(name, {
            "name": name, "in": "path", "required": True,
            "description": PATH_PARAMETER_DESCRIPTIONS.get(name, PATH_PARAMETER_DESCRIPTION),
            "schema": {"type": "string"}})
        return {"$ref": f"#/components/parameters/{name}"}

    def _query_params(self, type_: Any, schemas: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        schema = schemas[type_.__name__]
        self.query_types.add(type_.__name__)
        required = set(schema.get("required", ()))
        for name, prop in schema["properties"].items():
            prop = _not_null(prop)
            key = f"{name}Query" if name not in ("limit", "cursor") else name
            existing = self.parameters.get(key)
            param = {"name": name, "in": "query", "required": name in required,
                     "schema": {k: v for k, v in prop.items() if k != "description"}}
            if prop.get("description"):
                param["description"] = prop["description"]
            if existing is not None and existing != param:
                key = f"{type_.__name__}_{name}"
            self.parameters[key] = param
            out.append({"$ref": f"#/components/parameters/{key}"})
        return out

    def _problem_response(self, description: str, headers: tuple[str, ...]) -> dict[str, Any]:
        return {"description": description,
                "headers": {h: {"$ref": f"#/components/headers/{h}"}
                            for h in (*headers, *ALWAYS)},
                "content": {PROBLEM: {"schema": _ref("Problem")}}}

    def _operation(self, meta: Operation, params: list[str], schemas: dict[str, Any],
                   ) -> dict[str, Any]:
        self.used_tags.update(meta.tags)
        out: dict[str, Any] = {"operationId": meta.operation_id, "summary": meta.summary,
                               "description": meta.description or meta.summary + ".",
                               "tags": list(meta.tags)}
        parameters: list[dict[str, Any]] = []
        if meta.query is not None:
            parameters.extend(self._query_params(meta.query, schemas))
        parameters.extend({"$ref": f"#/components/parameters/{h}"} for h in meta.headers)
        if parameters:
            out["parameters"] = parameters
        if meta.body is not None:
            media: dict[str, Any] = {"schema": _ref(meta.body.__name__)}
            example = getattr(meta.body, "__example__", None)
            if example is not None:
                media["example"] = example
            out["requestBody"] = {"required": True, "content": {JSON: media}}
        elif meta.raw_body is not None:
            media_type, raw_schema = meta.raw_body
            out["requestBody"] = {"required": True,
                                  "content": {media_type: {"schema": raw_schema}}}
        responses: dict[str, Any] = {}
        for status, answer in sorted(meta.responses.items()):
            responses[str(status)] = self._answer(status, answer)
        problems = set(meta.problems) | {400, 413}
        if meta.body is not None or meta.raw_body is not None:
            problems |= {415}
        if params:
            problems |= {404}
        if meta.auth in ("required", "optional"):
            # a user (or checked credentials), a token's scope, cookie writes' origin;
            # the database answers who the caller is
            problems |= {401, 403, 503}
        if meta.auth == "metrics":
            problems |= {401}
        if "Idempotency-Key" in meta.headers:
            problems |= {429}  # quota_exceeded (wharf.operations.quotas)
        for status in sorted(problems):
            if str(status) in responses:
                continue
            name = PROBLEM_RESPONSES[status][0]
            responses[str(status)] = {"$ref": f"#/components/responses/{name}"}
        out["responses"] = dict(sorted(responses.items()))
        if meta.auth == "none":
            out["security"] = []
        elif meta.auth == "metrics":
            out["security"] = [{}, {"metricsToken": []}]
        elif meta.auth == "optional":
            out["security"] = [{}, {"bearer": []}, {"session": []}]
        else:
            out["security"] = [{"bearer": []}, {"session": []}]
        return out

    def _answer(self, status: int, answer: Answer) -> dict[str, Any]:
        out: dict[str, Any] = {"description": answer.description
                               or http.HTTPStatus(status).phrase}
        schema: dict[str, Any] | None = None
        if answer.type is not None and not isinstance(answer.type, type):
            schema = self.inline[id(answer.type)]  # a union: anyOf its members
        elif answer.type is not None:
            schema = _ref(answer.type.__name__)
        elif answer.schema is not None:
            schema = answer.schema
        if schema is not None:
            out["content"] = {media_type: {"schema": schema}
                              for media_type in (answer.content_type, *answer.also)}
        out["headers"] = {h: {"$ref": f"#/components/headers/{h}"}
                          for h in (*answer.headers, *ALWAYS)}
        return out


def _not_null(schema: dict[str, Any]) -> dict[str, Any]:
    """A query value is never JSON null: ``anyOf: [X, null]`` is ``X``."""
    variants = [v for v in schema.get("anyOf", ()) if v != {"type": "null"}]
    if len(variants) == 1 and len(schema["anyOf"]) == 2:
        rest = {k: v for k, v in schema.items() if k != "anyOf" and v is not None}
        return {**variants[0], **rest}
    return schema


def _component_parameters() -> dict[str, Any]:
    return dict(HEADER_PARAMETERS)


@functools.lru_cache(maxsize=8)
def _schema_components_cached(types: tuple[Any, ...]) -> tuple[Any, Any]:
    return msgspec.json.schema_components(types, ref_template=REF)


def _schema_components(types: tuple[Any, ...]) -> tuple[Any, Any]:
    """msgspec's schemas of ``types``, derived once per process for a given set of types
    (every app of a process has the same: the derivation is most of a document's cost), a
    copy each call since the builder edits them."""
    return copy.deepcopy(_schema_components_cached(types))


def document(app: App, server_url: str | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``app``: every mounted route and responder."""
    return _Builder(app, server_url).build()


__all__ = ["Answer", "App", "Auth", "MsgspecJSON", "Operation", "Route", "Undocumented",
           "auth_modes", "document", "install", "new_app", "op", "operation_of", "problem_codes",
           "read_body", "read_query", "routes", "validation_failed"]
