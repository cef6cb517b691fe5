"""``api/headers.py``: the conditional-request and download headers of blob reads, on
requests built directly (the HTTP round trips are in test_blobs and test_hostile_*); and
HEAD answered wherever GET is (``api.contract.with_head``), through the API."""
from __future__ import annotations

import re

import falcon.testing
import pytest

from api.headers import RangeNotSatisfiable, attachment, byte_range, not_modified

ETAG = '"0123456789abcdef0123456789abcdef"'


def req(**headers: str) -> falcon.Request:
    return falcon.testing.create_req(headers=headers)


@pytest.mark.parametrize(("header", "expected"), [
    (ETAG, True),
    ("W/" + ETAG, True),  # If-None-Match compares weakly (RFC 9110 13.1.2)
    ("*", True),
    (f'"other", {ETAG}', True),
    (f'"other", W/{ETAG}', True),
    ('"other"', False),
    ('"*"', False),  # a quoted star is an entity-tag, not the wildcard
    ("", False),
    ("  ", False),
    (",,", False),
    ('"other", *', True),  # the wildcard in a list still matches (as before Falcon's parser)
    (ETAG.strip('"'), False),  # an unquoted token is not the entity-tag
])
def test_if_none_match(header, expected):
    assert not_modified(req(**{"If-None-Match": header}), ETAG) is expected


def test_no_if_none_match():
    assert not_modified(req(), ETAG) is False


def test_if_range_names_the_current_etag_or_the_whole_content_is_served():
    assert byte_range(req(Range="bytes=0-3"), ETAG, 10) == (0, 3)
    assert byte_range(req(Range="bytes=0-3", **{"If-Range": ETAG}), ETAG, 10) == (0, 3)
    assert byte_range(req(Range="bytes=0-3", **{"If-Range": '"old"'}), ETAG, 10) is None
    assert byte_range(req(Range="bytes=-4"), ETAG, 10) == (6, 9)
    assert byte_range(req(Range="bytes=5-2"), ETAG, 10) is None
    with pytest.raises(RangeNotSatisfiable):
        byte_range(req(Range="bytes=10-"), ETAG, 10)


@pytest.mark.parametrize(("filename", "expected"), [
    ("plain.txt", "attachment; filename=\"plain.txt\"; filename*=UTF-8''plain.txt"),
    ('a"b\\c.txt', "attachment; filename=\"a_b_c.txt\"; filename*=UTF-8''a%22b%5Cc.txt"),
    ("Résumé 2026.txt",
     "attachment; filename=\"R_sum_ 2026.txt\"; filename*=UTF-8''R%C3%A9sum%C3%A9%202026.txt"),
])
def test_attachment(filename, expected):
    assert attachment(filename) == expected


# --- HEAD wherever GET (api.contract.with_head) -----------------------------------------
FAKE_ID = "0" * 32


def _get_paths(client, ids: dict[str, str]) -> list[str]:
    """Every GET path of the document, its parameters filled from ``ids`` (else an id
    nobody has, or #1)."""
    paths = []
    for template, item in client.contract.spec["paths"].items():
        if "get" in item:
            paths.append(re.sub(r"\{([^}]+)\}", lambda m: ids.get(
                m.group(1), "1" if m.group(1) == "number" else FAKE_ID), template))
    return paths


def test_head_answers_what_get_answers_on_every_get_route_without_a_body(world, worker):
    """Load balancers and uptime checks send HEAD: every GET route answers it with the
    same status and headers (Content-Length included) and no body, for a visitor and for
    a user."""
    from tests.engine.test_operations import wait_done
    alice = world.user("alice")
    folder = alice.post("/api/nodes", json={"space_id": alice.personal_space_id,
                                            "parent_id": None, "name": "f"})
    assert folder.status_code == 201, folder.text
    submitted = alice.post("/api/resources", json={
        "space_id": alice.personal_space_id, "name": "Doc", "unit_type": "doc"},
        headers={"Idempotency-Key": "head-check-key-0001"})
    assert submitted.status_code == 202, submitted.text
    unit = wait_done(alice, submitted.json["id"])["result"]
    ids = {"space_id": alice.personal_space_id, "user_id": alice.user_id,
           "node_id": folder.json["id"], "operation_id": submitted.json["id"],
           "resource_id": unit["resource_id"], "unit_id": unit["unit_id"]}
    statuses = set()
    for client in (world.anonymous(), alice):
        for path in _get_paths(client, ids):
            rid = {"X-Request-Id": "head-check"}
            got = client.get(path, headers=rid)
            head = client.head(path, headers=rid)
            assert head.status_code == got.status_code, path
            assert head.headers == got.headers, path
            assert head.content == b"", path
            statuses.add((path, got.status_code))
    for probe in ("/healthz", "/readyz", "/api/openapi.json"):
        assert (probe, 200) in statuses
    assert ("/api/me", 200) in statuses and (f"/api/nodes/{folder.json['id']}", 200) in statuses
    assert (f"/api/units/{unit['unit_id']}", 200) in statuses
    assert (f"/api/operations/{submitted.json['id']}", 200) in statuses


def test_head_is_allowed_and_not_listed_as_its_own_operation(client):
    answer = client.client.simulate_request("OPTIONS", "/healthz")
    assert "HEAD" in answer.headers["allow"]
    spec = client.contract.spec
    assert "head" not in spec["paths"]["/healthz"]
    assert "HEAD" in spec["info"]["description"]
    # content downloads keep their own HEAD operation (Range, If-None-Match)
    assert "head" in spec["paths"]["/api/assets/{asset_id}/content"]
