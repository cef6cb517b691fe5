"""A test client that checks every response against the OpenAPI document.

The document is the one the app under test generates (``api.contract.document``, what it
serves at ``/api/openapi.json``). Each response's status must be documented for its path
and method, its content type must match, and its JSON body must validate against the
documented schema. So every API test is also a contract test.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import falcon.testing
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from api.contract import document as build_document
from api.contract import routes


def _template_regex(template: str) -> re.Pattern:
    return re.compile("^" + re.sub(r"\{[^}]+\}", r"[^/]+", template) + "$")


@dataclass
class Contract:
    """A document with what checking against it needs."""

    spec: dict
    registry: Registry
    routes: list[tuple[re.Pattern, str]]

    @classmethod
    def of(cls, spec: dict) -> Contract:
        registry = Registry().with_resource("urn:wharf", Resource.from_contents(
            {**spec, "$schema": "https://json-schema.org/draft/2020-12/schema"}))
        return cls(spec, registry, [(_template_regex(t), t) for t in spec["paths"]])


def contract_of(app) -> Contract:
    """The contract of a Falcon app: the document it generates for itself (and serves at
    ``/api/openapi.json``), kept on that resource."""
    resource = routes(app).get("/api/openapi.json", (None, []))[0]
    if resource is None:
        return Contract.of(build_document(app))
    found = getattr(resource, "_test_contract", None)
    if found is None:
        found = resource._test_contract = Contract.of(resource.document())
    return found


class ContractError(AssertionError):
    pass


def _resolve(spec: dict, item: dict) -> dict:
    """A ``$ref`` to ``components`` (responses, parameters) followed."""
    while "$ref" in item:
        node: Any = spec
        for part in item["$ref"].removeprefix("#/").split("/"):
            node = node[part]
        item = node
    return item


def check_response(method: str, path: str, status: int, content_type: str | None,
                   body: bytes, contract: Contract) -> None:
    SPEC = contract.spec
    matches = [t for rx, t in contract.routes if rx.match(path)]
    if not matches:
        if status in (404, 405):
            return
        raise ContractError(f"{method} {path}: path not in the OpenAPI document")
    # prefer the most literal template
    template = min(matches, key=lambda t: t.count("{"))
    ops = SPEC["paths"][template]
    op = ops.get(method.lower())
    if op is None and method == "HEAD" and "get" in ops:
        # HEAD wherever GET (api.contract.with_head): GET's answers, without a body
        assert not body, f"HEAD {path} answered a body"
        op, body = ops["get"], b""
    if op is None:
        if status == 405:
            return
        raise ContractError(f"{method} {template}: method not in the OpenAPI document")
    responses = op["responses"]
    spec = responses.get(str(status))
    if spec is not None:
        spec = _resolve(SPEC, spec)
    if spec is None:
        raise ContractError(f"{method} {template}: status {status} not documented "
                            f"(documented: {sorted(responses)}) body={body[:300]!r}")
    content = spec.get("content")
    if not content:
        return
    ctype = (content_type or "").split(";")[0].strip()
    if "*/*" in content and ctype not in content:
        return  # any media type (blob content)
    if ctype not in content:
        raise ContractError(f"{method} {template} {status}: content type {ctype!r} "
                            f"not in {sorted(content)}")
    schema = content[ctype].get("schema")
    if schema is None or (not body and method == "HEAD") or ctype not in ("application/json", "application/problem+json"):
        return
    data = json.loads(body)
    # An inline schema (a union's anyOf) refers to components of the document.
    inline = json.loads(json.dumps(schema).replace('"#/components/', '"urn:wharf#/components/'))
    validator = Draft202012Validator(inline, registry=contract.registry)
    errors = list(validator.iter_errors(data))
    if errors:
        raise ContractError(f"{method} {template} {status}: body does not match the schema: "
                            f"{errors[0].message} at {list(errors[0].path)}\n{data}")


class ApiClient:
    """Wraps ``falcon.testing.TestClient``; keeps cookies; validates every response."""

    def __init__(self, app, headers: dict[str, str] | None = None):
        self.client = falcon.testing.TestClient(app)
        self.contract = contract_of(app)
        self.headers = dict(headers or {})
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, *, json_body: Any = None, body: bytes | str | None = None,
                headers: dict[str, str] | None = None, params: dict | None = None,
                check: bool = True) -> falcon.testing.Result:
        hdrs = {**self.headers, **(headers or {})}
        if json_body is not None:
            body = json.dumps(json_body)
            hdrs.setdefault("Content-Type", "application/json")
        if self.cookies and "Cookie" not in hdrs:
            hdrs["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        result = self.client.simulate_request(method, path, body=body, headers=hdrs,
                                              params=params)
        for name, cookie in result.cookies.items():
            if cookie.value and (cookie.max_age is None or cookie.max_age > 0):
                self.cookies[name] = cookie.value
            else:
                self.cookies.pop(name, None)
        if check:
            check_response(method, path, result.status_code, result.headers.get("content-type"),
                           result.content, self.contract)
        return result

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def head(self, path, **kw):
        return self.request("HEAD", path, **kw)

    def post(self, path, json=None, **kw):
        return self.request("POST", path, json_body=json, **kw)

    def put(self, path, json=None, **kw):
        return self.request("PUT", path, json_body=json, **kw)

    def patch(self, path, json=None, **kw):
        return self.request("PATCH", path, json_body=json, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def as_anonymous(self) -> ApiClient:
        return ApiClient(self.client.app)
