"""A test client that checks every response against the OpenAPI document.

Each response's status must be documented for its path and method, its content type must
match, and its JSON body must validate against the documented schema. So every API test
is also a contract test.
"""
from __future__ import annotations

import json
import re
from typing import Any

import falcon.testing
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from api.openapi import SPEC

_REGISTRY = Registry().with_resource("urn:wharf", Resource.from_contents(
    {**SPEC, "$schema": "https://json-schema.org/draft/2020-12/schema"}))


def _template_regex(template: str) -> re.Pattern:
    return re.compile("^" + re.sub(r"\{[^}]+\}", r"[^/]+", template) + "$")


_ROUTES = [(_template_regex(t), t) for t in SPEC["paths"]]


class ContractError(AssertionError):
    pass


def check_response(method: str, path: str, status: int, content_type: str | None,
                   body: bytes) -> None:
    matches = [t for rx, t in _ROUTES if rx.match(path)]
    if not matches:
        if status in (404, 405):
            return
        raise ContractError(f"{method} {path}: path not in the OpenAPI document")
    # prefer the most literal template
    template = min(matches, key=lambda t: t.count("{"))
    ops = SPEC["paths"][template]
    op = ops.get(method.lower())
    if op is None:
        if status == 405:
            return
        raise ContractError(f"{method} {template}: method not in the OpenAPI document")
    responses = op["responses"]
    spec = responses.get(str(status))
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
    if schema is None or ctype not in ("application/json", "application/problem+json"):
        return
    data = json.loads(body)
    validator = Draft202012Validator({"$ref": "urn:wharf" + schema["$ref"]}
                                     if "$ref" in schema else schema, registry=_REGISTRY)
    errors = list(validator.iter_errors(data))
    if errors:
        raise ContractError(f"{method} {template} {status}: body does not match the schema: "
                            f"{errors[0].message} at {list(errors[0].path)}\n{data}")


class ApiClient:
    """Wraps ``falcon.testing.TestClient``; keeps cookies; validates every response."""

    def __init__(self, app, headers: dict[str, str] | None = None):
        self.client = falcon.testing.TestClient(app)
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
                           result.content)
        return result

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, json=None, **kw):
        return self.request("POST", path, json_body=json, **kw)

    def put(self, path, json=None, **kw):
        return self.request("PUT", path, json_body=json, **kw)

    def patch(self, path, json=None, **kw):
        return self.request("PATCH", path, json_body=json, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)

    def as_anonymous(self) -> "ApiClient":
        return ApiClient(self.client.app)
