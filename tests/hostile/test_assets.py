"""A hostile client of the unit asset endpoints (spec §6.3, §9, §13), on SQLite and
PostgreSQL, with the filesystem and S3 (moto over HTTP) stores where the bytes matter.

Every refusal is a 4xx problem+json with a stable ``code`` and changes nothing: no
operation, upload row, asset row, deletion job or object is left that should not be.
Refusals that happen after the bytes started to arrive (short body, wrong digest) leave a
failed operation and a deletion job, and no object once deletions ran.
"""
from __future__ import annotations

import copy
import hashlib
import time
import uuid

import dramatiq
import pytest
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
from sqlalchemy import func, select

from api.contract import document
from storage.errors import BlobStoreUnavailable
from storage.models import (
    AuditLog,
    ObjectDeletionJob,
    Operation,
    UnitAsset,
    UnitAssetUpload,
)
from tests.conftest import World, make_settings
from tests.support.foundation import REFUSAL_ACTIONS, add_member, bearer, make_token, team_space
from wharf.deletion import service as deletion
from wharfd.runtime import Components

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")
HTML = b"<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>"
SVG = (b'<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="1" '
       b'height="1"><script>alert(1)</script></svg>')


def key() -> str:
    return uuid.uuid4().hex


class Env:
    """One app, its worker, and the store, with a team space: alice owns it, bob edits,
    carol views, dave is not a member; ``unit`` is a doc unit in it."""

    def __init__(self, settings, db, store=None):
        self.db = db
        self.components = Components(settings, db=db, blob_store=store)
        self.store = self.components.blob_store
        self.settings = settings
        self.world = World(self.components.api_app())
        self.worker = dramatiq.Worker(self.components.broker, worker_threads=2,
                                      worker_timeout=50)
        self.worker.start()
        w = self.world
        self.alice, self.bob = w.user("alice"), w.user("bob")
        self.carol, self.dave = w.user("carol"), w.user("dave")
        self.team = team_space(self.alice)
        add_member(self.alice, self.team["id"], self.bob.user_id, "editor")
        add_member(self.alice, self.team["id"], self.carol.user_id, "viewer")
        self.nodes: dict[str, str] = {}
        self.unit = self.new_unit()

    def new_unit(self, name: str = "Doc") -> str:
        r = self.alice.post("/api/resources", json={"space_id": self.team["id"], "name": name,
                                                    "unit_type": "doc"},
                            headers={"Idempotency-Key": key()})
        assert r.status_code == 202, r.text
        op = wait(self.alice, r.json["id"])
        assert op["status"] == "completed", op
        self.nodes[op["result"]["unit_id"]] = op["result"]["node_id"]
        return op["result"]["unit_id"]

    def close(self):
        self.worker.stop(timeout=5000)
        self.components.close()

    def state(self) -> dict:
        """What an upload leaves behind: rows by table, and the objects in the store."""
        with self.db.read() as s:
            counts = {m.__tablename__: s.scalar(select(func.count()).select_from(m))
                      for m in (Operation, UnitAssetUpload, UnitAsset, ObjectDeletionJob)}
            # the refusal's own audit row (wharf.audittrail.refusals) is not a change
            counts["audit_logs"] = s.scalar(select(func.count()).select_from(AuditLog).where(
                AuditLog.action.not_in(REFUSAL_ACTIONS)))
        return {**counts, "objects": sorted(self.store.list_keys())}

    def run_deletions(self):
        self.components.broker.join("maintenance", timeout=10_000)
        deletion.run_due(self.db, self.store)


@pytest.fixture
def env(settings, db):
    """The default (filesystem) store: for refusals whose bytes do not matter."""
    e = Env(settings, db)
    yield e
    e.close()


@pytest.fixture
def store_env(settings, db, blob_store):
    """Filesystem and S3 stores: for answers whose bytes (or objects) matter."""
    e = Env(settings, db, blob_store)
    yield e
    e.close()


def wait(client, op_id):
    r = client.get(f"/api/operations/{op_id}", params={"wait": "30"})
    assert r.status_code == 200, r.text
    return r.json


def post(client, unit_id, data: bytes | None, *, filename: str | None = "f.bin",
         ctype: str | None = "application/octet-stream", idem: str | None = "new",
         headers: dict | None = None, params: dict | None = None):
    """A raw upload. ``idem="new"``: a fresh key; None: no header. ``Content-Length`` is
    the body's unless ``headers`` names one (None removes it)."""
    h: dict[str, str] = {}
    if ctype is not None:
        h["Content-Type"] = ctype
    if idem is not None:
        h["Idempotency-Key"] = key() if idem == "new" else idem
    if data is not None:
        h["Content-Length"] = str(len(data))
    h.update(headers or {})
    h = {k: v for k, v in h.items() if v is not None}
    q = dict(params or {})
    if filename is not None:
        q["filename"] = filename
    return client.request("POST", f"/api/units/{unit_id}/assets", body=data, headers=h,
                          params=q or None)


def publish(client, unit_id, data: bytes, **kw) -> dict:
    r = post(client, unit_id, data, **kw)
    assert r.status_code == 202, r.text
    op = wait(client, r.json["id"])
    assert op["status"] == "completed", op
    return client.get(f"/api/assets/{op['result']['asset_id']}").json


def problem(r, status: int, code: str | None = None) -> dict:
    assert r.status_code == status, (r.status_code, r.text[:500])
    assert r.headers["content-type"].startswith("application/problem+json"), r.headers
    body = r.json
    assert isinstance(body.get("code"), str) and body["code"], body
    assert body.get("status") == status, body
    if code is not None:
        assert body["code"] == code, body
    return body


# --- upload: refused before anything is recorded ------------------------------------------

def test_idempotency_key_missing_or_malformed_changes_nothing(env):
    before = env.state()
    problem(post(env.bob, env.unit, b"abc", idem=None), 400, "idempotency_key_required")
    problem(post(env.bob, env.unit, b"abc", idem=""), 400, "idempotency_key_required")
    for bad in ("short", "x" * 201, "has space in it 12345", "üñíçødé-key-0123456789"):
        problem(post(env.bob, env.unit, b"abc", idem=bad), 400, "invalid_idempotency_key")
    assert env.state() == before


def test_length_required_and_too_large_are_refused_unread(env):
    before = env.state()
    # no Content-Length at all (a chunked body)
    problem(post(env.bob, env.unit, None, headers={"Transfer-Encoding": "chunked"}), 411,
            "length_required")
    problem(post(env.bob, env.unit, None), 411, "length_required")
    limit = env.settings.max_asset_size
    body = problem(post(env.bob, env.unit, b"x", headers={"Content-Length": str(limit + 1)}),
                   413, "asset_too_large")
    assert body["details"]["limit"] == limit
    # a length no client could send
    problem(post(env.bob, env.unit, b"x", headers={"Content-Length": "9" * 40}), 413,
            "asset_too_large")
    # the Idempotency-Key is checked first (spec §9 step 1), as on every 202 endpoint
    problem(post(env.bob, env.unit, None, idem=None), 400, "idempotency_key_required")
    problem(post(env.bob, env.unit, b"x", idem="bad",
                 headers={"Content-Length": str(limit + 1)}), 400, "invalid_idempotency_key")
    assert env.state() == before


@pytest.mark.parametrize("filename", [
    " ", "   ", "a/b.png", "a\\b.png", "x" * 256, "a\x00b", "line\nbreak", "tab\there",
    "del\x7f", "c1\x85control", "\x1b[31mred"])
def test_bad_filename_is_refused(env, filename):
    before = env.state()
    problem(post(env.bob, env.unit, b"abc", filename=filename), 400)
    assert env.state() == before


def test_blank_filename_parameter_means_the_default(store_env):
    """A blank query parameter is an absent one across the API (``?cursor=`` too): the
    default name, not a refusal. Only a name that is blank after trimming is refused."""
    asset = publish(store_env.bob, store_env.unit, b"abc", filename="")
    assert asset["filename"] == "asset"


@pytest.mark.parametrize("ctype", [
    "foo", "a/b/c", "/", "text/", "/plain", "text /plain", "te xt/plain",
    "image/" + "p" * 200, "a" * 300 + "/b", "image/png\x00", "ïmage/png", "text/plain,text/html"])
def test_bad_content_type_is_refused(env, ctype):
    before = env.state()
    problem(post(env.bob, env.unit, b"abc", ctype=ctype), 400)
    assert env.state() == before


@pytest.mark.parametrize("digest", [
    "abc", "g" * 64, "0" * 63, "0" * 65, "sha256=" + "0" * 64,
    "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="])
def test_malformed_content_sha256_is_refused(env, digest):
    before = env.state()
    problem(post(env.bob, env.unit, b"abc", headers={"Content-SHA256": digest}), 400)
    assert env.state() == before


def test_who_may_upload(env):
    before = env.state()
    problem(post(env.world.anonymous(), env.unit, b"abc"), 401)
    problem(post(env.carol, env.unit, b"abc"), 403)
    problem(post(env.dave, env.unit, b"abc"), 404)
    for unit in (uuid.uuid4().hex, "not-an-id", "0" * 32, "x" * 300, env.team["id"]):
        problem(post(env.bob, unit, b"abc"), 404)
    assert env.state() == before
    # the refused key was not consumed: once carol may edit, the same key works
    k = key()
    problem(post(env.carol, env.unit, b"abc", idem=k), 403)
    add_member(env.alice, env.team["id"], env.carol.user_id, "editor")
    r = post(env.carol, env.unit, b"abc", idem=k)
    assert r.status_code == 202, r.text


def test_upload_to_a_trashed_unit_is_404(env):
    asset = publish(env.bob, env.unit, b"abc")
    r = env.alice.post(f"/api/nodes/{env.nodes[env.unit]}/trash")
    assert r.status_code in (200, 201, 202), r.text
    before = env.state()
    problem(post(env.bob, env.unit, b"abc"), 404)
    problem(env.bob.get(f"/api/units/{env.unit}/assets"), 404)
    problem(env.bob.get(asset["content_url"]), 404)
    problem(env.bob.get(f"/api/assets/{asset['id']}"), 404)
    problem(env.bob.delete(f"/api/assets/{asset['id']}"), 404)
    assert env.state() == before


# --- upload: refused while or after the bytes arrive --------------------------------------

def _burnt(env, r, code: str, before: dict) -> None:
    """A refusal after the reservation: the operation failed with ``code``, no upload or
    asset row is left, the object is queued for deletion and gone once deletions ran."""
    problem(r, 400, code)
    with env.db.read() as s:
        ops = list(s.scalars(select(Operation).where(Operation.kind == "publish_asset")))
        assert [(o.status, o.error["code"]) for o in ops] == [("failed", code)]
        assert s.scalar(select(func.count()).select_from(UnitAssetUpload)) == 0
        assert s.scalar(select(func.count()).select_from(UnitAsset)) == before["unit_assets"]
        # queued now (the maintenance worker may have run it already)
        jobs = list(s.scalars(select(ObjectDeletionJob)))
        assert [j.reason for j in jobs] in ([], ["asset_upload_abandoned"])
    env.run_deletions()
    after = env.state()
    assert after["objects"] == before["objects"]
    assert after["object_deletion_jobs"] == before["object_deletion_jobs"]


def test_short_body_fails_the_operation_and_leaves_no_object(store_env):
    env = store_env
    before = env.state()
    k = key()
    r = post(env.bob, env.unit, b"only ten b", idem=k, headers={"Content-Length": "1000"})
    _burnt(env, r, "incomplete_body", before)
    # the key is burnt: a replay answers the failed operation, unread
    again = post(env.bob, env.unit, b"only ten b", idem=k, headers={"Content-Length": "1000"})
    assert again.status_code == 200 and again.json["status"] == "failed", again.text
    assert again.json["error"]["code"] == "incomplete_body"


def test_checksum_mismatch_fails_the_operation_and_leaves_no_object(store_env):
    env = store_env
    before = env.state()
    r = post(env.bob, env.unit, b"hello", headers={"Content-SHA256": "0" * 64})
    _burnt(env, r, "checksum_mismatch", before)


def test_matching_checksum_in_any_case_is_accepted(store_env):
    env = store_env
    data = b"hello assets"
    digest = hashlib.sha256(data).hexdigest().upper()
    asset = publish(env.bob, env.unit, data, headers={"Content-SHA256": digest})
    assert asset["sha256"] == digest.lower() and asset["size"] == len(data)
    assert env.bob.get(asset["content_url"]).content == data


# --- idempotency --------------------------------------------------------------------------

def test_replay_answers_the_same_operation_and_reuse_is_refused(store_env):
    env = store_env
    k = key()
    first = post(env.bob, env.unit, b"abcd", idem=k)
    assert first.status_code == 202, first.text
    done = wait(env.bob, first.json["id"])
    assert done["status"] == "completed"
    state = env.state()
    # replays (same key, same request): the same operation, nothing new
    again = post(env.bob, env.unit, b"abcd", idem=k)
    assert again.status_code == 200 and again.json["id"] == first.json["id"], again.text
    # other bytes of the same length: hashed (not stored) and refused
    problem(post(env.bob, env.unit, b"wxyz", idem=k), 409, "idempotency_key_reused")
    # a short replay body is refused as such
    problem(post(env.bob, env.unit, b"ab", idem=k, headers={"Content-Length": "4"}), 400,
            "incomplete_body")
    # with the right digest too
    again = post(env.bob, env.unit, b"abcd", idem=k,
                 headers={"Content-SHA256": hashlib.sha256(b"abcd").hexdigest()})
    assert again.status_code == 200 and again.json["id"] == first.json["id"]
    # a different request under the same key
    problem(post(env.bob, env.unit, b"abcde", idem=k), 409, "idempotency_key_reused")
    problem(post(env.bob, env.unit, b"abcd", idem=k, filename="other.bin"), 409,
            "idempotency_key_reused")
    problem(post(env.bob, env.unit, b"abcd", idem=k, ctype="image/png"), 409,
            "idempotency_key_reused")
    other_unit = env.new_unit("Other")
    state = env.state()
    problem(post(env.bob, other_unit, b"abcd", idem=k), 409, "idempotency_key_reused")
    problem(post(env.bob, env.unit, b"wxyz", idem=k,
                 headers={"Content-SHA256": hashlib.sha256(b"wxyz").hexdigest()}), 409,
            "idempotency_key_reused")
    assert env.state() == state
    # another user's key space is their own
    r = post(env.alice, env.unit, b"abcd", idem=k)
    assert r.status_code == 202 and r.json["id"] != first.json["id"]


def test_replay_with_a_different_digest_before_publish_is_refused(env):
    env.worker.stop(timeout=5000)  # the operation stays pending, its upload stored
    k = key()
    digest = hashlib.sha256(b"abcd").hexdigest()
    first = post(env.bob, env.unit, b"abcd", idem=k, headers={"Content-SHA256": digest})
    assert first.status_code == 202, first.text
    state = env.state()
    again = post(env.bob, env.unit, b"abcd", idem=k, headers={"Content-SHA256": digest})
    assert again.status_code == 202 and again.json["id"] == first.json["id"]
    problem(post(env.bob, env.unit, b"abce", idem=k,
                 headers={"Content-SHA256": hashlib.sha256(b"abce").hexdigest()}), 409,
            "idempotency_key_reused")
    assert env.state() == state
    env.worker = dramatiq.Worker(env.components.broker, worker_threads=2, worker_timeout=50)
    env.worker.start()
    assert wait(env.bob, first.json["id"])["status"] == "completed"


# --- content gateway ----------------------------------------------------------------------

def test_content_of_unknown_or_malformed_ids_is_404(env):
    for aid in (uuid.uuid4().hex, "nope", "0" * 32, "x" * 300, env.unit):
        problem(env.bob.get(f"/api/assets/{aid}/content"), 404)
        problem(env.bob.get(f"/api/assets/{aid}"), 404)
        # (check=False: the contract check would parse the absent problem body)
        r = env.bob.request("HEAD", f"/api/assets/{aid}/content", check=False)
        assert r.status_code == 404 and r.content == b""


def test_ranges_conditionals_and_head(store_env):
    env = store_env
    data = bytes(range(256)) * 4
    asset = publish(env.bob, env.unit, data, filename="data.bin")
    url, size = asset["content_url"], len(data)
    r = env.carol.get(url, headers={"Range": "bytes=999999-"})
    assert r.status_code == 416, r.text
    assert r.headers["content-range"] == f"bytes */{size}"
    for bad in ("bytes=abc", "bytes=5-2", "items=0-1", "bytes=", "bytes=--1", "bytes 0-1",
                "bytes=0-1,4-5", "bytes=0-0,-1", "bytes=" + "9" * 5000 + "-"):
        r = env.carol.get(url, headers={"Range": bad})
        if r.status_code == 416:  # a syntactically valid but unsatisfiable range
            assert r.headers["content-range"] == f"bytes */{size}", bad
            continue
        assert r.status_code == 200, (bad, r.status_code)
        assert r.content == data, bad
    r = env.carol.get(url, headers={"Range": "bytes=10-19"})
    assert r.status_code == 206 and r.content == data[10:20]
    assert r.headers["content-range"] == f"bytes 10-19/{size}"
    r = env.carol.get(url, headers={"Range": "bytes=-5"})
    assert r.status_code == 206 and r.content == data[-5:]
    # If-Range with a stale tag: the whole content
    r = env.carol.get(url, headers={"Range": "bytes=0-0", "If-Range": '"stale"'})
    assert r.status_code == 200 and r.content == data
    etag = env.carol.get(url).headers["etag"]
    assert etag == asset["etag"] == f'"{asset["sha256"]}"'
    for inm in (etag, f"W/{etag}", "*", f'"other", {etag}'):
        r = env.carol.get(url, headers={"If-None-Match": inm})
        assert r.status_code == 304 and r.content == b"", inm
        assert r.headers["etag"] == etag
    assert env.carol.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
    r = env.carol.request("HEAD", url)
    assert r.status_code == 200 and r.content == b""
    assert int(r.headers["content-length"]) == size and r.headers["etag"] == etag
    assert r.headers["accept-ranges"] == "bytes"
    r = env.carol.request("HEAD", url, headers={"Range": "bytes=0-9"})
    assert r.status_code == 206 and r.content == b""
    assert r.headers["content-range"] == f"bytes 0-9/{size}"


def test_content_headers_are_hardened(env):
    asset = publish(env.bob, env.unit, PNG, filename="dot.png", ctype="image/png")
    r = env.carol.get(asset["content_url"])
    assert r.status_code == 200 and r.content == PNG
    assert r.headers["content-type"] == "image/png"
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["cache-control"] == "private, no-store"
    assert r.headers["content-security-policy"] == "sandbox; default-src 'none'"
    assert r.headers["cross-origin-resource-policy"] == "same-origin"
    assert "content-disposition" not in r.headers


@pytest.mark.parametrize(("data", "ctype"), [
    (HTML, "text/html"), (HTML, "text/html; charset=utf-8"), (SVG, "image/svg+xml"),
    (HTML, "application/xhtml+xml"), (b"alert(1)", "text/javascript"),
    (b"<a/>", "application/xml"), (b"<a/>", "application/atom+xml"), (HTML, "TEXT/HTML"),
    # declared harmless, detected as something that could run
    (HTML, "image/png"), (SVG, "image/png"), (HTML, "application/octet-stream"),
    (HTML, None)])
def test_risky_content_is_served_as_an_attachment(env, data, ctype):
    asset = publish(env.bob, env.unit, data, filename='evil "x".html', ctype=ctype)
    r = env.carol.get(asset["content_url"])
    assert r.status_code == 200 and r.content == data
    assert r.headers["content-disposition"].startswith("attachment;"), r.headers
    assert "filename*=UTF-8''evil%20%22x%22.html" in r.headers["content-disposition"]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["content-security-policy"] == "sandbox; default-src 'none'"
    assert r.headers["content-type"] == (ctype.split(";")[0].lower() if ctype
                                         else "application/octet-stream")
    h = env.carol.request("HEAD", asset["content_url"])
    assert h.headers["content-disposition"] == r.headers["content-disposition"]


def test_unicode_filename_survives_the_attachment_header(env):
    name = "résumé \u2013 履歴書.html"
    asset = publish(env.bob, env.unit, HTML, filename=name, ctype="text/html")
    assert asset["filename"] == name
    cd = env.carol.get(asset["content_url"]).headers["content-disposition"]
    cd.encode("latin-1")  # a header value a server can send
    assert cd.startswith('attachment; filename="r_sum_ _ ___.html"; filename*=UTF-8\'\'')


# --- listing ------------------------------------------------------------------------------

def test_listing_refuses_forged_cursors_and_bad_limits(env):
    for i in range(3):
        publish(env.bob, env.unit, f"asset {i}".encode())
    url = f"/api/units/{env.unit}/assets"
    page = env.carol.get(url, params={"limit": "2"})
    assert page.status_code == 200 and len(page.json["items"]) == 2
    nxt = page.json["next_cursor"]
    rest = env.carol.get(url, params={"limit": "2", "cursor": nxt}).json
    assert len(rest["items"]) == 1 and rest["next_cursor"] is None
    forged = [nxt[:-2] + ("AA" if not nxt.endswith("AA") else "BB"), "x", "!!!!", "e30",
              "a" * 2000, nxt + "x"]
    for cursor in forged:
        problem(env.carol.get(url, params={"cursor": cursor}), 400, "invalid_cursor")
    for limit in ("0", "-1", "1001", "100000000000000000000", "abc", "1.5"):
        problem(env.carol.get(url, params={"limit": limit}), 400)
    problem(env.dave.get(url), 404)
    problem(env.bob.get(f"/api/units/{uuid.uuid4().hex}/assets"), 404)
    problem(env.bob.get("/api/units/bad id/assets"), 404)


def test_a_cursor_of_another_listing_is_refused(env):
    """A cursor is bound to the listing that issued it (nodes' cursors are not assets')."""
    for i in range(2):
        publish(env.bob, env.unit, f"asset {i}".encode())
        env.alice.post("/api/nodes", json={"space_id": env.team["id"], "name": f"n{i}"})
    nodes = env.alice.get(f"/api/spaces/{env.team['id']}/nodes", params={"limit": "1"}).json
    if not nodes.get("next_cursor"):
        pytest.skip("the node listing issued no cursor")
    problem(env.carol.get(f"/api/units/{env.unit}/assets",
                          params={"cursor": nodes["next_cursor"]}), 400, "invalid_cursor")


# --- worktree-scoped routes ---------------------------------------------------------------

def test_worktree_routes_are_404(env):
    asset = publish(env.bob, env.unit, b"abc")
    wt = uuid.uuid4().hex
    before = env.state()
    problem(env.bob.request(
        "POST", f"/api/worktrees/{wt}/units/{env.unit}/assets", body=b"abc",
        headers={"Idempotency-Key": key(), "Content-Type": "text/plain"},
        params={"filename": "a.txt"}), 404)
    problem(env.bob.get(f"/api/worktrees/{wt}/units/{env.unit}/assets"), 404)
    problem(env.bob.get(f"/api/worktrees/{wt}/assets/{asset['id']}/content"), 404)
    problem(env.bob.get(f"/api/worktrees/bad/assets/{asset['id']}/content"), 404)
    assert env.state() == before


# --- deletion -----------------------------------------------------------------------------

def test_delete_asset_permissions_and_afterwards(store_env):
    env = store_env
    asset = publish(env.bob, env.unit, b"to be deleted")
    url = f"/api/assets/{asset['id']}"
    before = env.state()
    problem(env.world.anonymous().delete(url), 401)
    problem(env.carol.delete(url), 403)
    problem(env.dave.delete(url), 404)
    problem(env.bob.delete(f"/api/assets/{uuid.uuid4().hex}"), 404)
    problem(env.bob.delete("/api/assets/bad"), 404)
    assert env.state() == before
    assert env.bob.delete(url).status_code == 204
    problem(env.carol.get(asset["content_url"]), 404)
    problem(env.carol.get(url), 404)
    problem(env.bob.delete(url), 404)
    assert env.carol.get(f"/api/units/{env.unit}/assets").json["items"] == []
    env.run_deletions()
    after = env.state()
    assert after["unit_assets"] == 0 and after["objects"] == [] \
        and after["object_deletion_jobs"] == 0


# --- schemathesis over the asset endpoints ------------------------------------------------

ASSET_ROUTES = {
    ("POST", "/api/units/{unit_id}/assets"), ("GET", "/api/units/{unit_id}/assets"),
    ("GET", "/api/assets/{asset_id}"), ("DELETE", "/api/assets/{asset_id}"),
    ("GET", "/api/assets/{asset_id}/content"), ("HEAD", "/api/assets/{asset_id}/content"),
    ("POST", "/api/worktrees/{worktree_id}/units/{unit_id}/assets"),
    ("GET", "/api/worktrees/{worktree_id}/units/{unit_id}/assets"),
    ("GET", "/api/worktrees/{worktree_id}/assets/{asset_id}/content"),
}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


def _fuzz(operation, app, headers, mode, examples, path_parameters=None, seen=None):
    headers = {**headers, "Accept-Encoding": "identity"}  # as test_schemathesis._run
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
        if seen is not None:
            seen.setdefault((operation.method.upper(), operation.path), set()).add(
                response.status_code)
        case.validate_response(response, checks=checks, headers=headers)

    try:
        check()
    except Unsatisfiable:
        assert mode is GenerationMode.NEGATIVE, operation.label


def test_schemathesis_assets(env):
    """test_schemathesis.py fuzzes the foundation only; this runs the asset endpoints
    (with the ids of a real unit and asset, then generated ids): no 5xx, every answer
    documented."""
    asset = publish(env.bob, env.unit, b"fuzz me")
    # the asset DELETE may remove: a second one
    decoy = publish(env.bob, env.unit, b"decoy")
    token = make_token(env.bob)["token"]
    headers = bearer(token)
    app = env.world.app
    real = {"unit_id": env.unit, "asset_id": decoy["id"], "worktree_id": uuid.uuid4().hex}
    schema = schemathesis.openapi.from_dict(copy.deepcopy(document(app)))
    ran: set = set()
    seen: dict = {}
    for result in schema.get_all_operations():
        operation = result.ok()
        k = (operation.method.upper(), operation.path)
        if k not in ASSET_ROUTES:
            continue
        ran.add(k)
        names = [p.name for p in operation.path_parameters]
        known = {n: real[n] for n in names} or None
        if k[0] != "DELETE":
            known = {**(known or {}), **({"asset_id": asset["id"]} if "asset_id" in names
                                         else {})} or None
        _fuzz(operation, app, headers, GenerationMode.POSITIVE, 15, known, seen)
        _fuzz(operation, app, headers, GenerationMode.NEGATIVE, 10, known, seen)
        _fuzz(operation, app, headers, GenerationMode.POSITIVE, 5, None, seen)
    assert ran == ASSET_ROUTES
    # the fuzzer got past the checks into the handlers, not only refusals
    assert 202 in seen[("POST", "/api/units/{unit_id}/assets")], seen
    assert {200, 206} <= seen[("GET", "/api/assets/{asset_id}/content")], seen


# --- more attacks -------------------------------------------------------------------------

def test_empty_asset_and_a_body_longer_than_its_length(store_env):
    env = store_env
    empty = publish(env.bob, env.unit, b"", filename="empty.txt", ctype="text/plain")
    assert empty["size"] == 0 and empty["sha256"] == hashlib.sha256(b"").hexdigest()
    r = env.carol.get(empty["content_url"])
    assert r.status_code == 200 and r.content == b""
    r = env.carol.get(empty["content_url"], headers={"Range": "bytes=0-0"})
    assert r.status_code == 416 and r.headers["content-range"] == "bytes */0"
    # bytes past Content-Length are not part of the asset
    r = post(env.bob, env.unit, b"0123456789", headers={"Content-Length": "4"})
    assert r.status_code == 202, r.text
    op = wait(env.bob, r.json["id"])
    got = env.bob.get(f"/api/assets/{op['result']['asset_id']}/content")
    assert got.content == b"0123"


def test_read_only_token_cannot_upload_or_delete(env):
    asset = publish(env.bob, env.unit, b"abc")
    token = make_token(env.bob, scopes=("read",))["token"]
    anon = env.world.anonymous()
    before = env.state()
    problem(post(anon, env.unit, b"abc", headers=bearer(token)), 403)
    problem(anon.delete(f"/api/assets/{asset['id']}", headers=bearer(token)), 403)
    assert anon.get(asset["content_url"], headers=bearer(token)).content == b"abc"
    assert env.state() == before


def test_anonymous_reads_follow_the_unit(env):
    asset = publish(env.bob, env.unit, b"shared bytes")
    anon = env.world.anonymous()
    problem(anon.get(asset["content_url"]), 404)
    problem(anon.get(f"/api/assets/{asset['id']}"), 404)
    problem(anon.get(f"/api/units/{env.unit}/assets"), 404)
    r = env.alice.put(f"/api/nodes/{env.nodes[env.unit]}/link-sharing",
                      json={"enabled": True, "role": "editor"})
    assert r.status_code == 200, r.text
    assert anon.get(asset["content_url"]).content == b"shared bytes"
    assert [a["id"] for a in anon.get(f"/api/units/{env.unit}/assets").json["items"]] \
        == [asset["id"]]
    before = env.state()
    # a link editor who is not logged in writes nothing
    problem(post(anon, env.unit, b"abc"), 401)
    problem(anon.delete(f"/api/assets/{asset['id']}"), 401)
    assert env.state() == before


def test_replay_with_a_digest_is_checked_against_the_stored_bytes(env):
    """The first request sent no digest; a replay naming other bytes is refused even
    before the asset is published (the stored upload's digest is known)."""
    env.worker.stop(timeout=5000)
    k = key()
    first = post(env.bob, env.unit, b"abcd", idem=k)
    assert first.status_code == 202, first.text
    state = env.state()
    problem(post(env.bob, env.unit, b"abce", idem=k,
                 headers={"Content-SHA256": hashlib.sha256(b"abce").hexdigest()}), 409,
            "idempotency_key_reused")
    again = post(env.bob, env.unit, b"abcd", idem=k,
                 headers={"Content-SHA256": hashlib.sha256(b"abcd").hexdigest()})
    assert again.status_code == 202 and again.json["id"] == first.json["id"]
    assert env.state() == state


@pytest.mark.parametrize("lose", ["trash", "demote", "remove"])
def test_access_lost_before_publish_fails_and_leaves_nothing(store_env, lose):
    env = store_env
    env.worker.stop(timeout=5000)
    before = env.state()
    r = post(env.bob, env.unit, b"never published")
    assert r.status_code == 202, r.text
    if lose == "trash":
        assert env.alice.post(f"/api/nodes/{env.nodes[env.unit]}/trash").status_code in (
            200, 201, 202)
    elif lose == "demote":
        add_member(env.alice, env.team["id"], env.bob.user_id, "viewer")
    else:
        assert env.alice.delete(
            f"/api/spaces/{env.team['id']}/members/{env.bob.user_id}").status_code == 204
    env.worker = dramatiq.Worker(env.components.broker, worker_threads=2, worker_timeout=50)
    env.worker.start()
    op = wait(env.bob, r.json["id"])  # the actor sees their operation, access or not
    assert op["status"] == "failed", op
    assert op["error"]["code"] == "permission_revoked", op["error"]
    env.run_deletions()
    after = env.state()
    assert after["unit_asset_uploads"] == 0 and after["unit_assets"] == before["unit_assets"]
    assert after["objects"] == before["objects"]


class _SlowBody:
    """A request body whose every read after the first waits ``pause`` seconds (reads
    are full, as a server's buffered ``wsgi.input`` gives them)."""

    def __init__(self, data: bytes, pause: float):
        self.data, self.pause, self.pos = data, pause, 0

    def read(self, n: int = -1) -> bytes:
        if self.pos:
            time.sleep(self.pause)
        n = len(self.data) if n is None or n < 0 else n
        chunk = self.data[self.pos:self.pos + n]
        self.pos += len(chunk)
        return chunk

    def readline(self, *_a) -> bytes:
        return self.read()

    def readlines(self, *_a) -> list[bytes]:
        return [self.read()]

    def __iter__(self):
        return iter(self.readlines())


def test_upload_outliving_its_deadline_is_abandoned(settings, db, blob_store, tmp_path):
    short = make_settings(tmp_path, settings.database_url, settings.unitstore_url,
                          asset_upload_ttl=1)
    env = Env(short, db, blob_store)
    try:
        before = env.state()
        data = b"x" * (3 * 1024 * 1024)  # three of the stream's 1 MiB reads
        c = env.bob
        headers = {"Idempotency-Key": key(), "Content-Type": "text/plain",
                   "Content-Length": str(len(data)),
                   "Cookie": "; ".join(f"{k}={v}" for k, v in c.cookies.items())}
        r = c.client.simulate_request("POST", f"/api/units/{env.unit}/assets",
                                      headers=headers, params={"filename": "slow.txt"},
                                      extras={"wsgi.input": _SlowBody(data, 0.6)})
        problem(r, 409, "upload_expired")
        with env.db.read() as s:
            ops = list(s.scalars(select(Operation).where(Operation.kind == "publish_asset")))
            assert [(o.status, o.error["code"]) for o in ops] == [("failed", "upload_expired")]
        env.run_deletions()
        after = env.state()
        assert after["unit_asset_uploads"] == 0 and after["unit_assets"] == 0
        assert after["objects"] == before["objects"]
        assert after["object_deletion_jobs"] == before["object_deletion_jobs"]
    finally:
        env.close()


def test_a_key_of_another_kind_is_not_an_upload(env):
    k = key()
    r = env.bob.post("/api/resources", json={"space_id": env.team["id"], "name": "D2",
                                             "unit_type": "doc"}, headers={"Idempotency-Key": k})
    assert r.status_code == 202
    wait(env.bob, r.json["id"])
    before = env.state()
    problem(post(env.bob, env.unit, b"abc", idem=k), 409, "idempotency_key_reused")
    assert env.state() == before


def test_the_longest_valid_name_and_type_are_stored(store_env):
    """255 characters of filename (multi-byte ones too) and a 255-character media type fit
    the columns on both databases."""
    env = store_env
    ctype = "a" * 127 + "/" + "b" * 127
    for name in ("n" * 255, "\u00e9" * 255, "\U0001f600" * 255):
        asset = publish(env.bob, env.unit, b"abc", filename=name, ctype=ctype)
        assert (asset["filename"], asset["media_type"]) == (name, ctype)
        r = env.carol.get(asset["content_url"])
        assert r.status_code == 200 and r.headers["content-type"] == ctype


def test_anonymous_on_worktree_routes_is_401(env):
    anon, wt = env.world.anonymous(), uuid.uuid4().hex
    problem(anon.request("POST", f"/api/worktrees/{wt}/units/{env.unit}/assets", body=b"abc",
                         headers={"Idempotency-Key": key(), "Content-Type": "text/plain"}), 401)
    problem(anon.get(f"/api/worktrees/{wt}/units/{env.unit}/assets"), 401)
    problem(anon.get(f"/api/worktrees/{wt}/assets/{uuid.uuid4().hex}/content"), 401)


class _FailingStore:
    """A store whose writes fail midway (the store went away while the bytes streamed)."""

    def __init__(self, real):
        self.real = real

    def put_stream(self, key, chunks):
        def broken():
            for i, chunk in enumerate(chunks):
                if i:
                    raise BlobStoreUnavailable("the store went away")
                yield chunk
        return self.real.put_stream(key, broken())

    def __getattr__(self, name):
        return getattr(self.real, name)


def test_store_failure_mid_stream_is_503_and_leaves_nothing(settings, db, blob_store):
    env = Env(settings, db, _FailingStore(blob_store))
    try:
        before = env.state()
        data = b"y" * (3 * 1024 * 1024)
        r = post(env.bob, env.unit, data)
        body = problem(r, 503)
        assert body["code"] in ("storage_unavailable", "blob_store_unavailable"), body
        with env.db.read() as s:
            ops = list(s.scalars(select(Operation).where(Operation.kind == "publish_asset")))
            assert [o.status for o in ops] == ["failed"]
            assert s.scalar(select(func.count()).select_from(UnitAssetUpload)) == 0
        env.components.broker.join("maintenance", timeout=10_000)
        deletion.run_due(env.db, blob_store)
        after = env.state()
        assert after["objects"] == before["objects"] and after["unit_assets"] == 0
    finally:
        env.close()
