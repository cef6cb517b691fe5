"""The OpenAPI 3.1 document generated from the mounted app (:func:`document`); a responder
without metadata makes building fail (:class:`Undocumented`)."""
from __future__ import annotations

import functools
import http
import re
from collections.abc import Iterator
from typing import Any

import msgspec

from api.contract.metadata import JSON, Answer, Operation, operation_of
from api.contract.routing import App, is_implicit_head
from api.contract.vocabulary import (
    ALWAYS,
    HEADER_PARAMETERS,
    HEADERS,
    PATH_PARAMETER_DESCRIPTION,
    PATH_PARAMETER_DESCRIPTIONS,
    PROBLEM_RESPONSES,
    REF,
    SECURITY_SCHEMES,
    TAGS,
)
from api.errors import PROBLEM
from api.schemas.problem import Problem
from wharf.infra.errors import ProblemCode


class Undocumented(RuntimeError):
    """A mounted responder has no contract metadata."""


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
        rules: dict[str, dict[str, Any]] = {}  # class-level rules (e.g. minProperties of
        for type_ in self.types:               # PATCH bodies), by schema name
            rule = getattr(type_, "__contract_schema__", None)
            name = _schema_name(type_)
            if rule and name is not None:
                rules.setdefault(name, {}).update(rule)
        schemas = {name: self._polish(schema, rules.get(name)) for name, schema in
                   schemas.items() if name not in self.query_types}  # query Structs became
        #                                                              parameters
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

    @staticmethod
    def _polish(schema: dict[str, Any], rule: dict[str, Any] | None) -> dict[str, Any]:
        schema = dict(schema)
        schema.pop("title", None)
        if "enum" in schema and "type" not in schema:
            schema = {"type": "string", **schema}
        schema.update(rule or {})
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
    copy each call since the builder edits them. They are JSON, so the copy is a JSON
    round trip by msgspec (a tenth of ``copy.deepcopy``'s time)."""
    inline, schemas = _schema_components_cached(types)
    return _JSON.decode(msgspec.json.encode(inline)), _JSON.decode(msgspec.json.encode(schemas))


_JSON = msgspec.json.Decoder()


def document(app: App, server_url: str | None = None) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``app``: every mounted route and responder."""
    return _Builder(app, server_url).build()
