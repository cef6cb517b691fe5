"""The OpenAPI document is generated from the mounted app: it validates, it covers every
route and method ``create_app`` mounts in every configuration (and nothing else), and a
responder without contract metadata makes building it fail."""
from __future__ import annotations

import json
from pathlib import Path

import falcon
import pytest
from openapi_spec_validator import validate

from api import contract
from api.app import create_app
from storage.db import Database
from tests.conftest import make_settings

METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
CONFIGURATIONS = {
    "foundation": {},
    "operations+unitstore": {"operations": object(), "unitstore": object(), "notifier": None},
    "blob store": {"operations": object(), "unitstore": object(), "blob_store": object()},
    "metrics": {"metrics": True},
}


@pytest.fixture
def make_app(tmp_path: Path):
    settings = make_settings(tmp_path, f"sqlite:///{tmp_path / 'wharf.db'}")
    db = Database(settings.database_url)

    def make(**kw) -> falcon.App:
        return create_app(settings, db, **kw)
    yield make
    db.dispose()


def _mounted(app: falcon.App) -> set[tuple[str, str]]:
    """(METHOD, template) of every responder, from Falcon's compiled router."""
    out = set()
    stack = list(app._router._roots)
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.resource is None:
            continue
        for method in node.method_map:
            if hasattr(node.resource, f"on_{method.lower()}"):
                out.add((method, node.uri_template))
    return out


def _documented(doc: dict) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, item in doc["paths"].items()
            for method in item if method in METHODS}


@pytest.mark.parametrize("config", CONFIGURATIONS)
def test_document_validates_and_covers_every_route(make_app, config):
    app = make_app(**CONFIGURATIONS[config])
    doc = contract.document(app)
    validate(doc)
    assert _documented(doc) == _mounted(app)
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                assert operation.get("tags"), (method, path)
    tags = {t["name"]: t for t in doc["tags"]}
    assert all(t["description"] for t in tags.values())
    assert doc["servers"]


def test_openapi_json_serves_the_document_of_its_app(make_app):
    for config in CONFIGURATIONS.values():
        app = make_app(**config)
        r = falcon.testing.TestClient(app).simulate_get("/api/openapi.json")
        assert r.status_code == 200
        assert r.json == json.loads(json.dumps(contract.document(app)))


def test_an_undocumented_responder_fails_the_build(make_app):
    class Undocumented:
        def on_get(self, req, resp):
            resp.media = {}

    app = make_app(extra_routes=lambda a: a.add_route("/api/undocumented", Undocumented()))
    with pytest.raises(contract.Undocumented, match="GET /api/undocumented"):
        contract.document(app)


def test_problem_codes_are_an_enum_derived_from_the_errors(make_app):
    doc = contract.document(make_app())
    schemas = doc["components"]["schemas"]
    assert schemas["Problem"]["properties"]["code"]["$ref"].endswith("/ProblemCode")
    codes = set(schemas["ProblemCode"]["enum"])
    # classes, codes passed with code="...", Falcon's own errors
    assert {"validation_failed", "malformed_json", "invalid_cursor", "username_taken",
            "insufficient_scope", "invalid_token", "rate_limited", "not_found",
            "method_not_allowed", "unsupported_media_type", "internal_error"} <= codes
    # and the codes storage errors are answered with (wharf.errors.from_storage)
    assert {"database_busy", "unit_too_large", "invalid_changeset", "blob_not_found",
            "unitstore_unavailable"} <= codes


def test_credentials_are_only_documented_where_they_are_read(make_app):
    doc = contract.document(make_app(metrics=True))
    paths = doc["paths"]
    for path, method in [("/healthz", "get"), ("/readyz", "get"), ("/api/users", "post"),
                         ("/api/login-sessions", "post"), ("/api/openapi.json", "get")]:
        operation = paths[path][method]
        assert operation["security"] == []
        assert "403" not in operation["responses"], path
    assert "401" not in paths["/api/users"]["post"]["responses"]
    assert "401" in paths["/api/login-sessions"]["post"]["responses"]  # wrong password
    assert "401" in paths["/metrics"]["get"]["responses"]  # the metrics token
    for path, method in [("/api/me", "get"), ("/api/spaces", "post")]:
        responses = paths[path][method]["responses"]
        assert {"401", "403"} <= set(responses), path
        assert responses["401"] == {"$ref": "#/components/responses/Unauthenticated"}
    # visitors may read a space: credentials optional
    assert {} in paths["/api/spaces/{space_id}"]["get"]["security"]


def test_nullable_enums_reference_one_component(make_app):
    doc = contract.document(make_app())
    schemas = doc["components"]["schemas"]
    assert schemas["Space"]["properties"]["role"]["anyOf"] == [
        {"$ref": "#/components/schemas/Role"}, {"type": "null"}]
    assert schemas["Role"]["type"] == "string"
    assert set(schemas["Role"]["enum"]) == {"admin", "editor", "owner", "viewer"}

    def walk(node):
        if isinstance(node, dict):
            assert not (isinstance(node.get("type"), list) and "enum" in node), node
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk({k: v for k, v in schemas.items() if k in
          ("Space", "Node", "Member", "ApiToken", "Me", "Grant", "LinkSharingState")})


def test_request_bodies_have_examples_that_validate(make_app):
    """Each example decodes into its request type (the example is the documentation)."""
    import msgspec

    from api.schemas import blobs, identity, lifecycle, operations, tree
    doc = contract.document(make_app(operations=object(), unitstore=object(),
                                     blob_store=object()))
    seen = 0
    for item in doc["paths"].values():
        for method, operation in item.items():
            body = operation.get("requestBody") if method in METHODS else None
            if not body or "example" not in body["content"].get("application/json", {}):
                continue
            media = body["content"]["application/json"]
            name = media["schema"]["$ref"].rsplit("/", 1)[1]
            type_ = next(getattr(m, name) for m in (identity, tree, lifecycle, operations,
                                                    blobs) if hasattr(m, name))
            msgspec.convert(media["example"], type_)
            seen += 1
    assert seen >= 10


def test_headers_the_server_sends_are_declared(make_app):
    doc = contract.document(make_app())
    paths = doc["paths"]
    assert "Location" in paths["/api/spaces"]["post"]["responses"]["201"]["headers"]
    assert "Set-Cookie" in paths["/api/login-sessions"]["post"]["responses"]["201"]["headers"]
    assert "Retry-After" in paths["/readyz"]["get"]["responses"]["503"]["headers"]
    retry = doc["components"]["responses"]["TooManyRequests"]["headers"]
    assert "Retry-After" in retry
