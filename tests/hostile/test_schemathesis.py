"""Property-based contract test: schemathesis generates requests from the OpenAPI document
(valid and invalid ones) and sends them to the Falcon WSGI app with a real API token.

Every response must be a non-5xx, with a status, content type and body the document
declares; invalid requests must be refused with a 4xx. Deterministic (derandomized) and
small (a couple of dozen examples per operation and mode), so it runs in seconds on each
backend; the deeper per-endpoint cases live in test_bad_input.py.

Scope: the foundation's operations (identity, spaces, members, nodes, system). Capabilities that
other modules add to the document are fuzzed by their own
suites, so a change there does not make this test slower or flakier.
"""
from __future__ import annotations

import copy

import schemathesis
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hsettings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from api.contract import document
from tests.support.foundation import add_member, bearer, make_node, make_token, team_space

FOUNDATION = {
    ("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/api/openapi.json"),
    ("POST", "/api/users"), ("POST", "/api/login-sessions"),
    ("DELETE", "/api/login-sessions/current"), ("GET", "/api/me"),
    ("POST", "/api/api-tokens"), ("GET", "/api/api-tokens"),
    ("DELETE", "/api/api-tokens/{token_id}"),
    ("GET", "/api/spaces"), ("POST", "/api/spaces"),
    ("GET", "/api/spaces/{space_id}"), ("PATCH", "/api/spaces/{space_id}"),
    ("GET", "/api/spaces/{space_id}/nodes"), ("GET", "/api/spaces/{space_id}/members"),
    ("PUT", "/api/spaces/{space_id}/members/{user_id}"),
    ("DELETE", "/api/spaces/{space_id}/members/{user_id}"),
    ("POST", "/api/nodes"), ("GET", "/api/nodes/{node_id}"), ("PATCH", "/api/nodes/{node_id}"),
    ("GET", "/api/nodes/{node_id}/children"),
}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]
EXAMPLES = 15
NEGATIVE_EXAMPLES = 10
RANDOM_ID_EXAMPLES = 5


def _run(operation, app, headers, mode, examples, path_parameters=None):
    # schemathesis's WSGI transport does not undo a Content-Encoding as an HTTP client
    # does: ask for the identity coding (gzip is tested in tests/units/test_unit_reads.py)
    headers = {**headers, "Accept-Encoding": "identity"}
    kwargs = {"generation_mode": mode}
    if path_parameters:
        kwargs["path_parameters"] = path_parameters
    strategy = operation.as_strategy(**kwargs)
    checks = CHECKS + ([negative_data_rejection] if mode is GenerationMode.NEGATIVE else [])

    @hsettings(max_examples=examples, derandomize=True, deadline=None, database=None,
               phases=[Phase.explicit, Phase.generate], print_blob=False,
               suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def check(case):
        response = case.call(app=app, headers=headers)
        case.validate_response(response, checks=checks, headers=headers)

    try:
        check()
    except Unsatisfiable:
        # Nothing to negate (no parameters, no body): only the positive run applies.
        assert mode is GenerationMode.NEGATIVE, operation.label


def test_schemathesis_foundation(world, app, backend):
    alice, bob = world.user("alice"), world.user("bob")
    token = make_token(alice)["token"]
    decoy = make_token(alice, name="decoy")  # the only token a DELETE may revoke
    space = team_space(alice, "Fuzz")
    add_member(alice, space["id"], bob.user_id, "viewer")
    node = make_node(alice, space["id"], "root")
    make_node(alice, space["id"], "child", node["id"])
    headers = bearer(token)
    real_ids = {"space_id": space["id"], "node_id": node["id"], "user_id": bob.user_id,
                "token_id": decoy["id"]}

    schema = schemathesis.openapi.from_dict(copy.deepcopy(document(app)))
    ran = set()
    for result in schema.get_all_operations():
        operation = result.ok()
        key = (operation.method.upper(), operation.path)
        if key not in FOUNDATION:
            continue
        ran.add(key)
        names = [p.name for p in operation.path_parameters]
        # With the ids of real objects the fuzzer reaches the handlers' logic ...
        known = {n: real_ids[n] for n in names} or None
        _run(operation, app, headers, GenerationMode.POSITIVE, EXAMPLES, known)
        _run(operation, app, headers, GenerationMode.NEGATIVE, NEGATIVE_EXAMPLES, known)
        if names:
            # ... with generated ids it probes lookups of unknown and malformed ids.
            _run(operation, app, headers, GenerationMode.POSITIVE, RANDOM_ID_EXAMPLES)
    assert ran == FOUNDATION
    # the token we fuzzed with still works: nothing the fuzzer sent broke authentication
    assert world.anonymous().get("/api/me", headers=headers).status_code == 200
