"""Property-based hostile headers and query strings, through the HTTP API, on SQLite and
PostgreSQL: ``Idempotency-Key``, ``If-Match``/``If-None-Match``, ``Authorization``,
``Origin`` (with a session cookie), ``Content-Type``, ``Content-Length``,
``X-Forwarded-For`` (trusted proxies set), ``User-Agent``, ``X-Request-Id``, ``Cookie``,
``?wait=`` and ``?limit=``.

The property, whatever the bytes: never a 5xx; a 4xx is application/problem+json with a
``code``; and a refused request changed nothing (no operation recorded, no node created,
the content unchanged). Small, derandomized example counts keep it fast.
"""
from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from sqlalchemy import func, select

from storage.blobstore import FileBlobStore
from storage.models import AuditLog, Node, Operation
from tests.blobs.test_blobs import Env, upload
from tests.conftest import PASSWORD, make_settings
from tests.support.foundation import is_problem

EXAMPLES = 30
METRICS_TOKEN = "metrics-token-0123456789"


def fast(n: int = EXAMPLES):
    return hsettings(max_examples=n, deadline=None, database=None, derandomize=True,
                     suppress_health_check=list(HealthCheck))


# What a WSGI server can hand the application as a header value: latin-1 text (bytes
# 0x80-0xff arrive decoded as latin-1), control characters included; no CR/LF (no server
# passes them through). Plus unicode beyond latin-1 where the test client accepts it.
_latin1 = st.characters(min_codepoint=0, max_codepoint=255, exclude_characters="\r\n")
header_text = st.one_of(
    st.text(_latin1, max_size=60),
    st.text(st.characters(exclude_characters="\r\n", exclude_categories=("Cs",)),
            max_size=30),
    st.sampled_from(["", " ", "\t", "\x00", "\x7f", "\xff", "null", "*", ",", '""', "W/",
                     "\u00e9t\u00e9", "\ufeff", "\u202e", "%00", "\\", "'; DROP TABLE x;--"]),
    st.integers(1, 20_000).map(lambda n: "A" * n),  # huge
)


def usable(value: str) -> bool:
    """Header values the test client (and so a real server) can carry."""
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return "\r" not in value and "\n" not in value


def hv(strategy=header_text):
    return strategy.filter(usable)


def count(db, model, *where) -> int:
    with db.read() as s:
        return s.scalar(select(func.count()).select_from(model).where(*where))


def check(r, *ok: int) -> None:
    """Never a 5xx; a 4xx is a problem with a code; anything else is one of ``ok``."""
    assert r.status_code < 500, (r.status_code, r.text[:500])
    if 400 <= r.status_code < 500:
        assert is_problem(r), (r.status_code, r.headers.get("content-type"), r.text[:500])
    else:
        assert r.status_code in ok, (r.status_code, r.text[:500])


@pytest.fixture
def site(tmp_path, database_url, unitstore_url, db):
    """One user with an uploaded blob; one trusted proxy in front; a metrics token."""
    settings = make_settings(tmp_path, database_url, unitstore_url, trusted_proxy_count=1,
                             metrics_token=METRICS_TOKEN)
    env = Env(settings, db, FileBlobStore(tmp_path / "blobs"))  # db: the same database
    alice = env.world.user("alice")
    _, op = upload(alice, alice.personal_space_id, b"original content")
    assert op["status"] == "completed", op
    rid = op["result"]["resource_id"]
    env.alice = alice
    env.blob_url = f"/api/blob-resources/{rid}/content"
    env.etag = alice.get(env.blob_url).headers["etag"]
    yield env
    env.close()


def new_folder(client, space_id, headers=None):
    return client.post("/api/nodes", json={"space_id": space_id, "name": f"n-{uuid.uuid4().hex}"},
                       headers=headers)


# --- Idempotency-Key ------------------------------------------------------------------

def test_hostile_idempotency_keys(site):
    """Every endpoint that takes an Idempotency-Key: create a resource, open an upload
    session, complete one, replace content, purge a trashed node."""
    alice = site.alice
    space = alice.personal_space_id
    body = {"space_id": space, "name": "Doc", "unit_type": "doc"}
    sess = alice.post("/api/blob-upload-sessions", json={"space_id": space, "filename": "s.bin",
                                                          "size": 0},
                      headers={"Idempotency-Key": uuid.uuid4().hex}).json
    gone = new_folder(alice, space).json["id"]
    assert alice.post(f"/api/nodes/{gone}/trash").status_code == 200

    @fast()
    @given(k=hv(header_text | st.text(st.sampled_from("Aa0_-.~ é\x00"), max_size=250)))
    def run(k):
        before = count(site.db, Operation)
        r = alice.post("/api/resources", json=body, headers={"Idempotency-Key": k})
        check(r, 200, 202)
        refused = r.status_code >= 400
        r = alice.post("/api/blob-upload-sessions",
                       json={"space_id": space, "filename": "x.bin", "size": 1},
                       headers={"Idempotency-Key": k})
        check(r, 200, 201)
        if refused:
            assert r.status_code >= 400
            r = alice.post(f"/api/blob-upload-sessions/{sess['id']}/complete",
                           headers={"Idempotency-Key": k})
            check(r)
            r = alice.request("PUT", site.blob_url, body=b"replacement",
                              headers={"Content-Type": "application/octet-stream",
                                       "Idempotency-Key": k, "If-Match": site.etag})
            check(r)
            r = alice.delete(f"/api/nodes/{gone}", headers={"Idempotency-Key": k})
            check(r)
            assert count(site.db, Operation) == before
            assert alice.get(site.blob_url).content == b"original content"

    run()


# --- If-Match / If-None-Match ---------------------------------------------------------

etags = st.one_of(
    header_text,
    st.lists(st.sampled_from(['"abc"', 'W/"abc"', "*", '""', 'W/""', '"', "W/", ",", " "]),
             max_size=8).map(", ".join),
    st.integers(1, 3000).map(lambda n: '"' + "f" * n + '"'),
    st.integers(1, 2000).map(lambda n: ", ".join(['W/"x"'] * n)),
)


def test_hostile_if_match_on_replace(site):
    alice = site.alice

    @fast()
    @given(tag=hv(etags))
    def run(tag):
        before = count(site.db, Operation)
        r = alice.request("PUT", site.blob_url, body=b"replacement",
                          headers={"Content-Type": "application/octet-stream",
                                   "Idempotency-Key": uuid.uuid4().hex, "If-Match": tag})
        check(r)  # the current ETag is random: any drawn tag is refused
        assert count(site.db, Operation) == before
        got = alice.get(site.blob_url)
        assert got.content == b"original content" and got.headers["etag"] == site.etag

    run()


def test_hostile_if_none_match_and_if_range_on_read(site):
    alice = site.alice

    @fast()
    @given(tag=hv(etags), rng=hv(etags))
    def run(tag, rng):
        r = alice.get(site.blob_url, headers={"If-None-Match": tag})
        check(r, 200, 304)
        if r.status_code == 200:
            assert r.content == b"original content"
        r = alice.get(site.blob_url, headers={"If-Range": rng, "Range": "bytes=0-3"})
        check(r, 200, 206)

    run()


# --- Authorization ----------------------------------------------------------------------

authorizations = st.one_of(
    header_text,
    st.tuples(st.sampled_from(["Bearer", "bearer", "BEARER", "Basic", "Token", "Digest", "",
                               "Bearer\t", "Bearer\x00"]), header_text)
    .map(lambda t: f"{t[0]} {t[1]}"),
    st.integers(1, 20_000).map(lambda n: "Bearer " + "x" * n),
    st.sampled_from(["Bearer wharf_", "Bearer wharf_" + "0" * 64, "Bearer .", "Bearer  ",
                     "Bearer a b c"]),
)


def test_hostile_authorization(site):
    anon = site.world.anonymous()
    space = site.alice.personal_space_id

    @fast()
    @given(auth=hv(authorizations))
    def run(auth):
        before = count(site.db, Node)
        r = anon.get("/api/me", headers={"Authorization": auth})
        check(r)
        r = new_folder(anon, space, headers={"Authorization": auth})
        check(r)
        assert count(site.db, Node) == before
        check(anon.get("/metrics", headers={"Authorization": auth}), 200)
        check(anon.get("/healthz/details", headers={"Authorization": auth}), 200)

    run()


# --- Origin with a session cookie -------------------------------------------------------

origins = st.one_of(
    header_text,
    st.builds(lambda scheme, host, port: f"{scheme}://{host}{port}",
              st.sampled_from(["http", "https", "HTTP", "ftp", "javascript", "", "file"]),
              st.sampled_from(["falconframework.org", "FalconFramework.org", "evil.example",
                               "[::1]", "[", "127.0.0.1", "", "xn--e1afmkfd", "a@b"]),
              st.sampled_from(["", ":80", ":443", ":8080", ":0", ":65536", ":-1", ":abc",
                               ":99999999999999999999", ":"])),
    st.sampled_from(["null", "NULL", "http://falconframework.org/", "http://falconframework.org",
                     "http://falconframework.org:80"]),
)


def test_hostile_origin_with_a_session_cookie(site):
    alice = site.alice
    space = alice.personal_space_id

    @fast(40)
    @given(origin=hv(origins), host=st.none() | hv(st.sampled_from(
        ["falconframework.org", "falconframework.org:80", "[", "[::1]:x", "a:99999999", ":",
         "", " ", "evil.example"]) | header_text), proto=st.none() | hv())
    def run(origin, host, proto):
        before = count(site.db, Node)
        headers = {"Origin": origin}
        if host is not None:
            headers["Host"] = host
        if proto is not None:
            headers["X-Forwarded-Proto"] = proto
        r = new_folder(alice, space, headers=headers)
        check(r, 201)
        assert count(site.db, Node) == before + (r.status_code == 201)
        if r.status_code == 403:
            assert r.json["code"] == "cross_origin"

    run()


# --- Content-Type and Content-Length on JSON writes --------------------------------------

content_types = st.one_of(
    header_text,
    st.builds(lambda t, p: t + p,
              st.sampled_from(["application/json", "APPLICATION/JSON", "application/problem+json",
                               "text/plain", "application/x-www-form-urlencoded",
                               "multipart/form-data", "application/", "/", "json", ""]),
              st.sampled_from(["", ";", "; charset=utf-8", "; charset=latin-1",
                               "; charset=\x00", "; boundary=", ";;;;", "; charset=\"utf-8",
                               "; a=" + "b" * 5000])),
)


def test_hostile_content_type_on_json_posts(site):
    alice = site.alice
    space = alice.personal_space_id

    @fast(40)
    @given(ctype=hv(content_types))
    def run(ctype):
        before = count(site.db, Node)
        body = (f'{{"space_id": "{space}", "name": "{uuid.uuid4().hex}"}}').encode()
        r = alice.request("POST", "/api/nodes", body=body, headers={"Content-Type": ctype})
        check(r, 201)
        assert count(site.db, Node) == before + (r.status_code == 201)

    run()


def _client_allows(length: str) -> bool:
    """The test client (wsgiref's validator) takes only a non-negative int()."""
    try:
        return int(length) >= 0
    except ValueError:
        return False


# Shorter and longer than the body (the body is ~90 bytes), zero, huge, odd spellings.
lengths = st.one_of(st.integers(0, 200).map(str), st.sampled_from(
    ["+5", "-0", " 7", "0090", "9" * 19, "9" * 40, "9" * 4000, "1" + "0" * 30])
).filter(_client_allows)


def test_content_length_mismatches_on_json_posts(site):
    alice = site.alice
    space = alice.personal_space_id

    @fast(40)
    @given(length=hv(lengths))
    def run(length):
        before = count(site.db, Node)
        body = (f'{{"space_id": "{space}", "name": "{uuid.uuid4().hex}"}}').encode()
        r = alice.request("POST", "/api/nodes", body=body,
                          headers={"Content-Type": "application/json", "Content-Length": length})
        check(r, 201)
        assert count(site.db, Node) == before + (r.status_code == 201)

    run()


def test_content_length_mismatches_on_uploads(site):
    """An upload whose Content-Length disagrees with the bytes sent (fewer, more) or with
    the declared size: refused, the session keeps no content, the replaced content stays."""
    alice = site.alice
    space = alice.personal_space_id

    @fast(20)
    @given(declared=st.integers(0, 64), sent=st.integers(0, 80), length=st.integers(0, 100))
    def run(declared, sent, length):
        sess = alice.post("/api/blob-upload-sessions",
                          json={"space_id": space, "filename": "u.bin", "size": declared},
                          headers={"Idempotency-Key": uuid.uuid4().hex}).json
        r = alice.request("PUT", f"/api/blob-upload-sessions/{sess['id']}/content",
                          body=b"x" * sent, headers={"Content-Type": "application/octet-stream",
                                                     "Content-Length": str(length)})
        check(r, 200)
        state = alice.get(f"/api/blob-upload-sessions/{sess['id']}").json
        if r.status_code == 200:
            assert declared == length <= sent and state["state"] == "uploaded"
        else:
            assert state["state"] == "waiting_for_upload"
        before = count(site.db, Operation)
        r = alice.request("PUT", site.blob_url, body=b"y" * sent,
                          headers={"Content-Type": "application/octet-stream",
                                   "Content-Length": str(length), "If-Match": site.etag,
                                   "Idempotency-Key": uuid.uuid4().hex})
        check(r, 202)
        if r.status_code == 202:  # accepted: the bytes read were exactly Content-Length
            assert length <= sent
            done = alice.get(f"/api/operations/{r.json['id']}", params={"wait": "30"}).json
            assert done["status"] == "completed", done
            site.etag = alice.get(site.blob_url).headers["etag"]
            assert alice.get(site.blob_url).content == b"y" * length
        else:
            assert count(site.db, Operation) == before

    run()


# --- X-Forwarded-For, User-Agent, X-Request-Id (recorded in the audit log) ---------------

forwarded = st.one_of(
    header_text,
    st.lists(hv(), max_size=6).map(", ".join),
    st.integers(1, 5000).map(lambda n: ", ".join(["10.0.0.1"] * n)),
    st.sampled_from(["1.2.3.4", "::1", "[::1]:80", "unknown", "_hidden", "1.2.3.4\x00",
                     "\x00, 1.2.3.4", "300.1.1.1", "fe80::1%eth0"]),
)


def test_hostile_forwarded_for_user_agent_and_request_id(site):
    alice = site.alice
    space = alice.personal_space_id

    @fast(40)
    @given(xff=hv(forwarded), ua=hv(), rid=hv())
    def run(xff, ua, rid):
        before = count(site.db, AuditLog)
        r = new_folder(alice, space, headers={"X-Forwarded-For": xff, "User-Agent": ua,
                                              "X-Request-Id": rid})
        check(r, 201)
        assert r.status_code == 201  # none of these headers is a reason to refuse
        assert count(site.db, AuditLog) == before + 1
        r = site.world.anonymous().post(
            "/api/login-sessions", json={"username": "alice", "password": "wrong"},
            headers={"X-Forwarded-For": xff, "User-Agent": ua})
        check(r)

    run()


# --- Cookie -------------------------------------------------------------------------------

cookies = st.one_of(
    header_text,
    hv().map(lambda v: f"wharf_session={v}"),
    st.lists(st.tuples(st.sampled_from(["wharf_session", "a", "", "=", "wharf_session "]),
                       hv()), max_size=5)
    .map(lambda kv: "; ".join(f"{k}={v}" for k, v in kv)),
    st.integers(1, 10_000).map(lambda n: "wharf_session=" + "z" * n),
)


def test_hostile_cookies(site):
    anon = site.world.anonymous()
    space = site.alice.personal_space_id

    @fast()
    @given(cookie=hv(cookies))
    def run(cookie):
        before = count(site.db, Node)
        check(anon.get("/api/me", headers={"Cookie": cookie}))
        check(new_folder(anon, space, headers={"Cookie": cookie}))
        assert count(site.db, Node) == before

    run()


# --- ?wait= and ?limit= ----------------------------------------------------------------------

numbers = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.integers(1, 6000).map(lambda n: "9" * n),
    st.text(max_size=20),
    st.sampled_from(["", " ", "-0", "+1", "1.5", "1e3", "nan", "inf", "-inf", "0x10", "٣",
                     "1_000", " 5 ", "\x00", "true", "[]"]),
)


def test_hostile_wait_and_limit(site):
    alice = site.alice
    op = alice.get("/api/operations", params={"limit": "1"}).json["items"][0]
    lists = ["/api/operations", "/api/spaces", f"/api/spaces/{alice.personal_space_id}/nodes",
             "/api/me/recent", f"/api/spaces/{alice.personal_space_id}/trash"]

    @fast(40)
    @given(wait=numbers, limit=numbers, which=st.sampled_from(lists))
    def run(wait, limit, which):
        r = alice.get(f"/api/operations/{op['id']}", params={"wait": wait})
        check(r, 200)
        r = alice.get(which, params={"limit": limit})
        check(r, 200)

    run()


# --- regressions found by the properties above -------------------------------------------

def test_control_characters_in_forwarded_for_and_user_agent_are_recorded_safely(site):
    """A NUL (or any control character) in X-Forwarded-For or User-Agent reached the audit
    row and the login throttle as is: PostgreSQL refuses NUL in text, so the request was a
    500. They are stored with each control character replaced by U+FFFD, cut to the
    column's length, and the request is served."""
    alice = site.alice
    r = new_folder(alice, alice.personal_space_id,
                   headers={"X-Forwarded-For": "1.2.3.4\x00\x1b", "User-Agent": "ua\x00\x7f\x85!"})
    assert r.status_code == 201, r.text
    with site.db.read() as s:
        row = s.scalars(select(AuditLog).where(AuditLog.action == "node.create")
                        .order_by(AuditLog.at.desc())).first()
    assert row.client_ip == "1.2.3.4\ufffd\ufffd"
    assert row.user_agent == "ua\ufffd\ufffd\ufffd!"
    r = site.world.anonymous().post(
        "/api/login-sessions", json={"username": "alice", "password": "wrong"},
        headers={"X-Forwarded-For": "\x00" * 200, "User-Agent": "\x00" * 2000})
    assert r.status_code == 401 and is_problem(r, 401), r.text
    r = site.world.anonymous().post(
        "/api/login-sessions", json={"username": "alice", "password": PASSWORD},
        headers={"X-Forwarded-For": "\x00", "User-Agent": "\x00"})
    assert r.status_code == 201, r.text
