"""The OpenAPI document is generated from the mounted app: it validates, it covers every
route and method ``create_app`` mounts in every configuration (and nothing else), and a
responder without contract metadata makes building it fail."""
from __future__ import annotations

import json
from pathlib import Path

import falcon
import msgspec
import pytest
from openapi_spec_validator import validate

from api import contract
from api.app import create_app
from api.schemas.common import InvalidField
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
    """(METHOD, template) of every responder, from Falcon's compiled router (private: this
    is the independent check of what ``contract.App`` records). A method counts when its
    responder is the resource's own (``on_<method>[_<suffix>]``), not Falcon's default."""
    out = set()
    stack = list(app._router._roots)
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.resource is None:
            continue
        for method, responder in node.method_map.items():
            if getattr(responder, "__self__", None) is node.resource:
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
    # and the codes storage errors are answered with (wharf.infra.errors.from_storage)
    assert {"database_busy", "unit_too_large", "invalid_changeset", "blob_not_found",
            "unitstore_unavailable"} <= codes


def test_credentials_are_only_documented_where_they_are_read(make_app):
    doc = contract.document(make_app(metrics=True))
    paths = doc["paths"]
    for path, method in [("/healthz", "get"), ("/readyz", "get"), ("/api/users", "post"),
                         ("/api/login-sessions", "post"), ("/api/openapi.json", "get")]:
        operation = paths[path][method]
        assert operation["security"] == []
        if path != "/api/login-sessions":
            assert "403" not in operation["responses"], path
    assert "401" not in paths["/api/users"]["post"]["responses"]
    assert "401" in paths["/api/login-sessions"]["post"]["responses"]  # wrong password
    assert "403" in paths["/api/login-sessions"]["post"]["responses"]  # a disabled account
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
    from api.schemas import (
        blobs,
        comments,
        identity,
        imports,
        issues,
        operations,
        protection,
        recent,
        sharing,
        spaces,
        trash,
        webhooks,
        worktree_merge,
        worktrees,
    )
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
            type_ = next(getattr(m, name) for m in (identity, spaces, sharing, trash, recent,
                                                    operations, blobs, worktrees,
                                                    worktree_merge, webhooks, issues,
                                                    comments, imports, protection)
                         if hasattr(m, name))
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


# --- validation_failed: the message and the field, wherever msgspec says it ----------------
def _validation_problem(r, field):
    assert r.status_code == 400, r.text
    body = r.json
    assert body["code"] == "validation_failed"
    errors = body["details"]["errors"]
    assert errors and all(e["message"] for e in errors), body
    assert body["details"]["field"] == field, body
    assert errors[0]["pointer"] == (f"/{field}" if field else "")
    assert body["detail"].endswith(errors[0]["message"]), body
    return body


def test_validation_failed_names_the_field_at_the_top_of_the_body(world):
    """msgspec reports no location for the top of the body (a missing or unknown member,
    a rule of the whole object): the problem still carries the message, and the field
    where one is named."""
    from tests.support.foundation import make_node, team_space

    alice = world.user("alice")
    space = team_space(alice)
    node = make_node(alice, space["id"], "n")
    body = _validation_problem(alice.post("/api/nodes", json={"name": "x"}), "space_id")
    assert "space_id" in body["detail"] and "missing" in body["detail"]
    body = _validation_problem(alice.post("/api/spaces", json={"name": "x", "bogus": 1}),
                               "bogus")
    assert "unknown" in body["detail"]
    body = _validation_problem(alice.patch(f"/api/nodes/{node['id']}", json={}), None)
    assert body["detail"] == "the body must set at least one field"
    # rules a Struct checks itself (__post_init__) about one field name it
    body = _validation_problem(alice.post("/api/api-tokens",
                                          json={"name": "ci", "scopes": ["read", "read"]}),
                               "scopes")
    assert "unique" in body["detail"]
    _validation_problem(alice.post("/api/spaces", json={"name": "x", "type": "personal"}),
                        "type")
    # with a location, as before
    _validation_problem(alice.post("/api/spaces", json={"name": 5}), "name")


class _Inner(msgspec.Struct, forbid_unknown_fields=True):
    tags: list[str]

    def __post_init__(self):
        if not self.tags:
            raise InvalidField("tags", "must not be empty")


class _Outer(msgspec.Struct, forbid_unknown_fields=True):
    inner: _Inner


def test_validation_failed_below_the_top_and_with_hostile_names():
    def problem(data):
        with pytest.raises(msgspec.ValidationError) as caught:
            msgspec.convert(data, _Outer)
        return contract.validation_failed(caught.value)

    missing = problem({"inner": {}})
    assert missing.details["field"] == "inner/tags"
    assert missing.details["errors"] == [
        {"pointer": "/inner/tags", "message": "Object missing required field `tags`"}]
    assert problem({"inner": {"tags": []}}).details["field"] == "inner/tags"
    assert problem({"inner": {"tags": []}}).message == "inner/tags: must not be empty"
    # an unknown member's name comes from the client: escaped as a JSON pointer, bounded
    odd = problem({"inner": {"tags": ["a"], "a/b~c": 1}})
    assert odd.details["errors"][0]["pointer"] == "/inner/a~1b~0c"
    long = problem({"inner": {"tags": ["a"], "x" * 100_000: 1}})
    assert len(long.details["field"]) <= 250
    assert len(long.message) <= 500 and long.details["errors"][0]["message"]


# --- routes: recorded as Falcon maps them, not read from Falcon's router -----------------
def test_suffixed_responders_are_documented_and_authorised_by_their_contract(make_app):
    class Probe:
        @contract.op(operation_id="probeSuffixed", summary="A suffixed responder",
                     tags=["system"], responses={200: None}, auth="none")
        def on_get_probe(self, req, resp):
            resp.media = {"ok": True}

    app = make_app(extra_routes=lambda a: a.add_route("/api/probe", Probe(), suffix="probe"))
    doc = contract.document(app)
    assert doc["paths"]["/api/probe"]["get"]["operationId"] == "probeSuffixed"
    assert _documented(doc) == _mounted(app)
    client = falcon.testing.TestClient(app)
    # auth "none": credentials are not read at all (a bad token is no 401)
    r = client.simulate_get("/api/probe", headers={"Authorization": "Bearer nonsense"})
    assert r.status_code == 200, r.text
    assert r.json == {"ok": True}


def test_the_auth_middleware_takes_the_routes_auth_modes_when_built(tmp_path):
    from api.middleware import AuthMiddleware
    from wharf.identity.service import Identity

    settings = make_settings(tmp_path, f"sqlite:///{tmp_path / 'wharf.db'}")
    db, identity = Database(settings.database_url), Identity(settings)
    try:
        with pytest.raises(TypeError):
            AuthMiddleware(db, identity)  # the modes are not set afterwards
        auth = AuthMiddleware(db, identity, auth_modes={
            "/a": {"GET": "none", "POST": "metrics"}, "/b/{id}": {"GET": "none"},
            "/c": {"GET": "none", "POST": "required"}, "/d": {"GET": None}, "/e": {}})
        assert auth.credential_free_paths == {"/a"}
    finally:
        db.dispose()


def test_the_contract_uses_no_private_falcon_names():
    """``api`` reaches Falcon through its public API (tests may look inside): no private
    attribute of Falcon's app or router is read, no private hook of a handler overridden."""
    import ast

    private = {"_router", "_roots", "_middleware", "_unprepared_middleware",
               "_error_handlers", "_router_search", "_sinks", "_serialize_sync",
               "_deserialize_sync"}
    root = Path(__file__).resolve().parents[2]
    found = []
    for path in sorted((root / "api").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = []
            if isinstance(node, ast.Attribute):
                names = [node.attr]
            elif isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            elif isinstance(node, ast.FunctionDef):
                names = [node.name]
            found += [f"{path.relative_to(root)}:{node.lineno} {n}" for n in names
                      if n in private]
    assert not found, found


def test_json_is_written_by_falcons_own_handler_with_msgspec(make_app):
    app = make_app()
    handler = app.resp_options.media_handlers[falcon.MEDIA_JSON]
    assert isinstance(handler, falcon.media.JSONHandler)

    class Thing(msgspec.Struct):
        zeta: str
        alpha: list[int]

    # json.dumps' formatting (", " and ": ", non-ASCII as is); keys in declaration order
    assert handler.serialize(Thing("é", [1, 2]), falcon.MEDIA_JSON) == \
        '{"zeta": "é", "alpha": [1, 2]}'.encode()
    assert handler.serialize({"b": None, "a": 1}, falcon.MEDIA_JSON) == b'{"b": null, "a": 1}'


# --- problem codes: one declared enum, checked against the source ------------------------
def _codes_in_source() -> tuple[set[str], set[str]]:
    """(string codes, ``ProblemCode.X`` names) found in the server's packages: ``code =
    "..."`` on classes, ``code="..."`` arguments, ``ProblemCode.X`` references."""
    import ast

    root = Path(__file__).resolve().parents[2]
    literals: set[str] = set()
    members: set[str] = set()
    for package in ("api", "wharf", "storage", "tasks", "wharfd"):
        for path in sorted((root / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.Call):
                    for kw in node.keywords:
                        if kw.arg == "code" and isinstance(kw.value, ast.Constant):
                            literals.add(kw.value.value)
                elif isinstance(node, ast.ClassDef):
                    for stmt in node.body:
                        if (isinstance(stmt, ast.Assign | ast.AnnAssign)
                                and isinstance(getattr(stmt, "value", None), ast.Constant)
                                and any(isinstance(t, ast.Name) and t.id == "code"
                                        for t in (stmt.targets if isinstance(stmt, ast.Assign)
                                                  else [stmt.target]))):
                            literals.add(stmt.value.value)
                elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                      and node.value.id == "ProblemCode"):
                    members.add(node.attr)
    return literals, members


def test_every_problem_code_is_a_member_of_the_one_enum_and_every_member_is_used(make_app):
    from api.errors import FALCON_CODES
    from wharf.infra.errors import _FROM_STORAGE, ProblemCode

    declared = {code.value for code in ProblemCode}
    literals, members = _codes_in_source()
    storage = {code for _, code, _ in _FROM_STORAGE.values()}
    falcon_codes = set(FALCON_CODES.values())
    assert literals and storage and falcon_codes
    for where, codes in [("class code / code=", literals), ("wharf.infra.errors._FROM_STORAGE",
                         storage), ("api.errors.FALCON_CODES", falcon_codes)]:
        assert codes <= declared, (where, sorted(codes - declared))
    assert members <= set(ProblemCode.__members__), sorted(members - set(ProblemCode.__members__))
    used = literals | storage | falcon_codes | {ProblemCode[m].value for m in members}
    assert declared <= used, f"declared but never answered: {sorted(declared - used)}"
    # the document's enum is the declaration
    doc = contract.document(make_app())
    assert doc["components"]["schemas"]["ProblemCode"]["enum"] == sorted(declared)


def test_every_problem_code_has_one_status_declared_with_the_codes():
    """A code means one HTTP status (``wharf.infra.errors.STATUS``): every member has one (or is
    one of ``NO_STATUS``), each error class's status is its code's, and every
    ``SomeError(..., code=X)`` in the source is raised through a class of X's status (the
    status comes from the code whatever the class; the class must not say otherwise), as
    are the storage mapping's and Falcon's codes."""
    import ast
    import importlib

    from api.errors import FALCON_CODES
    from wharf.infra.errors import _FROM_STORAGE, NO_STATUS, STATUS, ProblemCode, WharfError

    assert set(STATUS) | set(NO_STATUS) == set(ProblemCode) and not set(STATUS) & NO_STATUS

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    root = Path(__file__).resolve().parents[2]
    for package in ("api", "wharf", "storage", "tasks", "wharfd"):
        for path in sorted((root / package).rglob("*.py")):
            importlib.import_module(".".join(path.relative_to(root).with_suffix("").parts)
                                    .removesuffix(".__init__"))
    wrong = [(cls.__name__, cls.code, cls.status) for cls in [WharfError, *subclasses(WharfError)]
             if cls.status != STATUS[cls.code]]
    for package in ("api", "wharf", "storage", "tasks", "wharfd"):
        for path in sorted((root / package).rglob("*.py")):
            module = importlib.import_module(".".join(path.relative_to(root).with_suffix("")
                                                      .parts).removesuffix(".__init__"))
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Call):
                    continue
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(
                    node.func, "attr", None)
                cls = getattr(module, name, None) if name else None
                if not (isinstance(cls, type) and issubclass(cls, WharfError)):
                    continue
                for kw in node.keywords:
                    if kw.arg != "code":
                        continue
                    if isinstance(kw.value, ast.Constant):
                        code = kw.value.value
                    elif isinstance(kw.value, ast.Attribute) and isinstance(
                            kw.value.value, ast.Name) and kw.value.value.id == "ProblemCode":
                        code = ProblemCode[kw.value.attr].value
                    else:
                        continue  # a code chosen at run time: its status is still STATUS's
                    if cls.status != STATUS[code]:
                        wrong.append((f"{path.relative_to(root)}:{node.lineno}", code,
                                      cls.status))
    for kind, code, _title in _FROM_STORAGE.values():
        if kind.status != STATUS[code]:
            wrong.append(("wharf.infra.errors._FROM_STORAGE", code, kind.status))
    wrong += [("api.errors.FALCON_CODES", code, status)
              for status, code in FALCON_CODES.items() if STATUS[code] != status]
    assert not wrong, wrong
