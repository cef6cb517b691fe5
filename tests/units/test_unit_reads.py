"""Reading a unit without paying for its whole document: the revision as the ETag (304
without reading the document), the changesets after a revision, a changeset answered
without the document (``Prefer: return=minimal``), and large answers gzipped when the
client accepts it."""
from __future__ import annotations

import gzip
import json

from tests.hostile.test_units import _post, _unit


def _edit(client, unit_id, base, key, value, **kw):
    return client.post(f"/api/units/{unit_id}/changesets",
                       json={"base_revision": base,
                             "changes": [{"op": "add", "path": f"/body/{key}", "value": value}]},
                       **kw)


def test_an_unchanged_unit_is_304_without_reading_its_document(world, worker, components,
                                                                monkeypatch):
    alice, unit_id = _unit(world, worker)
    r = alice.get(f"/api/units/{unit_id}")
    assert r.status_code == 200 and r.headers["etag"] == '"rev-0"'
    reads = []
    original = components.unitstore.document_json
    monkeypatch.setattr(components.unitstore, "document_json",
                        lambda uid: reads.append(uid) or original(uid))
    r = alice.get(f"/api/units/{unit_id}", headers={"If-None-Match": '"rev-0"'})
    assert r.status_code == 304 and r.headers["etag"] == '"rev-0"' and not r.content
    assert reads == []  # the document was not read
    assert _edit(alice, unit_id, 0, "a", 1).status_code == 200
    r = alice.get(f"/api/units/{unit_id}", headers={"If-None-Match": '"rev-0"'})
    assert r.status_code == 200 and r.headers["etag"] == '"rev-1"'
    assert r.json["snapshot"]["body"] == {"a": 1} and reads == [unit_id]
    # a stranger learns nothing from a validator
    stranger = world.user("mallory")
    assert stranger.get(f"/api/units/{unit_id}",
                        headers={"If-None-Match": '"rev-1"'}).status_code == 404


def test_a_client_catches_up_by_the_changesets_after_its_revision(world, worker):
    alice, unit_id = _unit(world, worker)
    for n in range(5):
        assert _edit(alice, unit_id, n, f"k{n}", n).status_code == 200
    page = alice.get(f"/api/units/{unit_id}/changesets", params={"after": "1", "limit": "2"})
    assert page.status_code == 200, page.text
    assert [i["revision"] for i in page.json["items"]] == [2, 3]
    assert page.json["items"][0]["changes"] == [{"op": "add", "path": "/body/k1", "value": 1}]
    assert page.json["items"][0]["author_id"] == alice.user_id
    assert page.json["next_after"] == 3
    last = alice.get(f"/api/units/{unit_id}/changesets",
                     params={"after": "3", "limit": "2"}).json
    assert [i["revision"] for i in last["items"]] == [4, 5] and last["next_after"] is None
    assert alice.get(f"/api/units/{unit_id}/changesets",
                     params={"after": "5"}).json == {"items": [], "next_after": None}
    # what a client holding revision 1 builds from them is the current document
    document = {"k0": 0}
    for item in alice.get(f"/api/units/{unit_id}/changesets",
                          params={"after": "1"}).json["items"]:
        for op in item["changes"]:
            document[op["path"].rsplit("/", 1)[1]] = op["value"]
    assert alice.get(f"/api/units/{unit_id}").json["snapshot"]["body"] == document
    assert world.user("mallory").get(f"/api/units/{unit_id}/changesets").status_code == 404
    bad = alice.get(f"/api/units/{unit_id}/changesets", params={"after": "-1"})
    assert bad.status_code == 400 and bad.headers["content-type"].startswith(
        "application/problem+json")


def test_a_minimal_changeset_answer_leaves_the_document_out(world, worker):
    alice, unit_id = _unit(world, worker)
    full = _edit(alice, unit_id, 0, "a", 1)
    assert full.json["snapshot"]["body"] == {"a": 1} and "preference-applied" not in full.headers
    minimal = _edit(alice, unit_id, 1, "b", 2, headers={"Prefer": "return=minimal"})
    assert minimal.status_code == 200
    assert minimal.json == {"unit_id": unit_id, "revision": 2, "snapshot": None}
    assert minimal.headers["preference-applied"] == "return=minimal"
    assert minimal.headers["etag"] == '"rev-2"'
    assert alice.get(f"/api/units/{unit_id}").json["snapshot"]["body"] == {"a": 1, "b": 2}


def test_large_answers_are_gzipped_for_clients_that_accept_it(world, worker):
    alice, unit_id = _unit(world, worker)
    assert _post(alice, unit_id, [{"op": "add", "path": "/body/text", "value": "word " * 2000}],
                 base=0).status_code == 200
    plain = alice.get(f"/api/units/{unit_id}")
    assert "content-encoding" not in plain.headers
    assert "Accept-Encoding" in plain.headers["vary"]
    for accept in ("gzip", "br, gzip;q=0.5", "*"):
        r = alice.get(f"/api/units/{unit_id}", headers={"Accept-Encoding": accept}, check=False)
        assert r.headers["content-encoding"] == "gzip", accept
        body = gzip.decompress(r.content)
        assert json.loads(body) == plain.json and len(r.content) < len(body) / 10
    for refuse in ("identity", "gzip;q=0", "br"):
        r = alice.get(f"/api/units/{unit_id}", headers={"Accept-Encoding": refuse})
        assert "content-encoding" not in r.headers and r.json == plain.json, refuse
    small = alice.get("/api/me", headers={"Accept-Encoding": "gzip"})
    assert "content-encoding" not in small.headers  # under a kilobyte: as it is
    zipped = alice.get(f"/api/units/{unit_id}", headers={"Accept-Encoding": "gzip"},
                       check=False)
    assert plain.headers["etag"] == '"rev-1"' and zipped.headers["etag"] == 'W/"rev-1"'
    assert alice.get(f"/api/units/{unit_id}", headers={"If-None-Match": 'W/"rev-1"',
                                                       "Accept-Encoding": "gzip"},
                     check=False).status_code == 304


def test_a_large_problem_answer_is_gzipped_whole():
    """Problem answers are written as ``resp.text``: compressed, that text must not go out
    instead of the compressed bytes."""
    import falcon
    import falcon.testing

    from api.compression import CompressionMiddleware

    class Refuse:
        def on_get(self, req, resp):
            resp.status = falcon.HTTP_400
            resp.content_type = "application/problem+json"
            resp.text = json.dumps({"code": "invalid", "detail": "x" * 3000})

    app = falcon.App(middleware=[CompressionMiddleware()])
    app.add_route("/", Refuse())
    r = falcon.testing.TestClient(app).simulate_get("/", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 400 and r.headers["content-encoding"] == "gzip"
    assert json.loads(gzip.decompress(r.content))["detail"] == "x" * 3000
