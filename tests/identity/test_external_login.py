"""Issue 40 item 4: sign in with an external provider.

OpenID Connect end to end against a real OpenID provider (node-oidc-provider on localhost,
started here: tests/support/oidc_provider.py), driven like a browser with a
``requests.Session``: Wharf's start, the provider's authorization endpoint, its login and
consent interactions, Wharf's callback. GitHub against a local stand-in of its authorize,
token and user endpoints (an ``http.server`` in a thread) that checks the client secret
and PKCE like GitHub does.
"""
from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import pytest
import requests
from sqlalchemy import select, text

from api.app import create_app
from storage.models import ExternalIdentity, Space, User
from tests.conftest import PASSWORD
from tests.support import oidc_provider, services
from tests.support.foundation import audit_rows
from tests.support.threaded_server import serving_in_thread
from wharf.accounts.disabling import set_disabled
from wharf.identity.external import safe_next, username_candidates


@pytest.fixture(scope="module")
def idp() -> Iterator[oidc_provider.OpenIDProvider]:
    services.need(oidc_provider.missing())
    with oidc_provider.running() as provider:
        yield provider


def _serve(settings, db, **changes):
    return serving_in_thread(create_app(settings.replace(**changes), db))


@pytest.fixture
def wharf(settings, db, idp) -> Iterator[str]:
    with _serve(settings, db, oidc_issuer=idp.issuer, oidc_client_id=idp.client_id,
                oidc_client_secret=idp.client_secret) as base:
        yield base


def _walk(http: requests.Session, url: str, stop: str) -> tuple[requests.Response, str | None]:
    """Follow redirects from ``url`` until one points under ``stop`` (answered: the
    last response and that URL) or a response is not a redirect (that response, None)."""
    for _ in range(20):
        r = http.get(url, allow_redirects=False, timeout=10)
        if r.status_code not in (302, 303):
            return r, None
        url = urljoin(url, r.headers["Location"])
        if url.startswith(stop):
            return r, url
    raise AssertionError("too many redirects")


def _interact(http: requests.Session, page: requests.Response, action: str,
              data: dict | None = None) -> str:
    """POST an interaction action at the provider; the URL it redirects to."""
    assert page.status_code == 200, page.text
    uid = page.json()["uid"]
    base = page.url.split("/interaction/")[0]
    r = http.post(f"{base}/interaction/{uid}/{action}", data=data or {},
                  allow_redirects=False, timeout=10)
    assert r.status_code == 303, r.text
    return urljoin(page.url, r.headers["Location"])


def start(http: requests.Session, base: str, provider: str = "oidc",
          next_path: str | None = None) -> str:
    """Wharf's start: the provider's authorization URL it redirects to."""
    query = f"?{urlencode({'next': next_path})}" if next_path else ""
    r = http.get(f"{base}/api/auth/{provider}/start{query}", allow_redirects=False,
                 timeout=10)
    assert r.status_code == 302, r.text
    return r.headers["Location"]


def oidc_to_callback(http: requests.Session, base: str, login: str,
                     next_path: str | None = None, *, before=None, abort: bool = False) -> str:
    """Start at Wharf, log in as ``login`` at the provider and consent: the callback URL
    the provider sends the browser to (not fetched yet). ``before()`` runs after the start."""
    stop = f"{base}/api/auth/oidc/callback"
    url = start(http, base, next_path=next_path)
    if before is not None:
        before()
    page, done = _walk(http, url, stop)
    if done is not None:  # still signed in at the provider: straight back
        return done
    assert page.json()["prompt"] == "login", page.text
    if abort:
        _, done = _walk(http, _interact(http, page, "abort"), stop)
        assert done is not None
        return done
    page, done = _walk(http, _interact(http, page, "login", {"login": login}), stop)
    if done is None:  # the first time: consent
        assert page.json()["prompt"] == "consent", page.text
        _, done = _walk(http, _interact(http, page, "confirm"), stop)
    assert done is not None
    return done


def sign_in(base: str, login: str, http: requests.Session | None = None,
            next_path: str | None = None) -> tuple[requests.Session, requests.Response]:
    http = http or requests.Session()
    callback = oidc_to_callback(http, base, login, next_path)
    return http, http.get(callback, allow_redirects=False, timeout=10)


def problem(r: requests.Response, status: int, code: str) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["Content-Type"].startswith("application/problem+json")
    body = r.json()
    assert body["code"] == code, body
    return body


def register(base: str, username: str) -> requests.Session:
    http = requests.Session()
    r = http.post(f"{base}/api/users", json={"username": username, "password": PASSWORD})
    assert r.status_code == 201, r.text
    r = http.post(f"{base}/api/login-sessions",
                  json={"username": username, "password": PASSWORD})
    assert r.status_code == 201, r.text
    return http


# -- OpenID Connect -----------------------------------------------------------------------
@pytest.mark.both_databases
def test_first_sign_in_creates_a_user_and_the_next_signs_them_in(wharf, db, idp):
    http, r = sign_in(wharf, "alice", next_path="/spaces?tab=mine")
    assert r.status_code == 302, r.text
    assert r.headers["Location"] == "/spaces?tab=mine"
    assert "wharf_session" in http.cookies
    me = http.get(f"{wharf}/api/me").json()
    assert me["username"] == "alice" and me["auth"] == "session"
    with db.read() as s:
        space = s.get(Space, me["personal_space_id"])
        assert space is not None and space.owner_id == me["id"] and space.type == "personal"
    listed = http.get(f"{wharf}/api/me/external-identities").json()
    assert listed["providers"] == ["oidc"]
    assert [(i["provider"], i["subject"], i["display_name"]) for i in listed["items"]] == \
        [("oidc", "alice", "User alice")]
    # the provider still has its session: a new Wharf browser signs in as the same user
    _, again = sign_in(wharf, "alice", http=_fresh_wharf_cookies(http))
    assert again.status_code == 302 and again.headers["Location"] == "/"
    with db.read() as s:
        assert s.scalar(select(text("count(*)")).select_from(User)) == 1
    actions = [(a.action, (a.details or {}).get("provider")) for a in audit_rows(db)
               if a.action != "external_login.start"]
    assert actions == [("user.register", "oidc"), ("external_identity.link", "oidc"),
                       ("session.login", "oidc"), ("session.login", "oidc")]
    assert len(audit_rows(db, action="external_login.start")) == 2


def _fresh_wharf_cookies(http: requests.Session) -> requests.Session:
    """The same browser at the provider, without its Wharf cookies."""
    fresh = requests.Session()
    for cookie in http.cookies:
        if cookie.name not in ("wharf_session", "wharf_external_login"):
            fresh.cookies.set_cookie(cookie)
    return fresh


@pytest.mark.both_databases
def test_a_logged_in_user_links_then_signs_in_and_unlinks(wharf, db):
    bob = register(wharf, "bob")
    bob_id = bob.get(f"{wharf}/api/me").json()["id"]
    _, r = sign_in(wharf, "bob-at-idp", http=bob, next_path="/settings")
    assert r.status_code == 302 and r.headers["Location"] == "/settings"
    items = bob.get(f"{wharf}/api/me/external-identities").json()["items"]
    assert [(i["provider"], i["subject"]) for i in items] == [("oidc", "bob-at-idp")]
    # a new browser signing in with that account is bob (no new user)
    http, r = sign_in(wharf, "bob-at-idp")
    assert r.status_code == 302
    assert http.get(f"{wharf}/api/me").json()["id"] == bob_id
    with db.read() as s:
        assert s.scalar(select(text("count(*)")).select_from(User)) == 1
    # linking it to someone else is refused
    carol = register(wharf, "carol")
    _, r = sign_in(wharf, "bob-at-idp", http=carol)
    problem(r, 409, "external_identity_taken")
    # bob has a password: unlinking is allowed; then that account signs in as a new user
    assert bob.delete(f"{wharf}/api/me/external-identities/oidc").status_code == 204
    assert bob.get(f"{wharf}/api/me/external-identities").json()["items"] == []
    problem(bob.delete(f"{wharf}/api/me/external-identities/oidc"), 404, "not_found")
    assert [a.actor_id for a in audit_rows(db, action="external_identity.unlink")] == [bob_id]
    assert [a.details["reason"] for a in audit_rows(db, action="external_login.fail")] == \
        ["external_identity_taken"]


def test_the_only_way_in_cannot_be_unlinked(wharf):
    http, r = sign_in(wharf, "dora")
    assert r.status_code == 302
    body = problem(http.delete(f"{wharf}/api/me/external-identities/oidc"), 409,
                   "last_login_method")
    assert "password" in body["detail"]
    assert len(http.get(f"{wharf}/api/me/external-identities").json()["items"]) == 1


def test_a_replayed_state_is_refused(wharf, db):
    http = requests.Session()
    callback = oidc_to_callback(http, wharf, "erin")
    assert http.get(callback, allow_redirects=False).status_code == 302
    again = requests.Session()
    again.cookies.update(http.cookies)
    body = problem(again.get(callback, allow_redirects=False), 400, "external_login_failed")
    assert body["details"]["reason"] == "state_invalid"
    # junk and missing state alike
    for query in ("", "?state=" + "x" * 600, "?state=nope&code=abc"):
        body = problem(http.get(f"{wharf}/api/auth/oidc/callback{query}"), 400,
                       "external_login_failed")
        assert body["details"]["reason"] == "state_invalid"


def test_a_wrong_nonce_is_refused(wharf, db):
    def tamper() -> None:
        with db.write() as s:
            s.execute(text("UPDATE external_authorizations SET nonce = 'not-the-nonce-sent'"))

    http = requests.Session()
    callback = oidc_to_callback(http, wharf, "frank", before=tamper)
    body = problem(http.get(callback, allow_redirects=False), 400, "external_login_failed")
    assert body["details"]["reason"] == "nonce_mismatch"
    assert "wharf_session" not in http.cookies
    with db.read() as s:
        assert s.scalar(select(text("count(*)")).select_from(User)) == 0
    fails = audit_rows(db, action="external_login.fail")
    assert [(a.details["reason"], a.actor_id) for a in fails] == [("nonce_mismatch", None)]


def test_an_issuer_not_allowed_is_refused(settings, db, idp):
    with _serve(settings, db, oidc_issuer=idp.issuer, oidc_client_id=idp.client_id,
                oidc_client_secret=idp.client_secret,
                oidc_allowed_issuers=("https://accounts.example.com",)) as base:
        http = requests.Session()
        body = problem(http.get(oidc_to_callback(http, base, "gina"), allow_redirects=False),
                       400, "external_login_failed")
    assert body["details"] == {"reason": "issuer_not_allowed", "issuer": idp.issuer}
    with db.read() as s:
        assert s.scalar(select(text("count(*)")).select_from(ExternalIdentity)) == 0


def test_provider_errors_and_other_browsers_are_refused(wharf, db):
    http = requests.Session()
    body = problem(http.get(oidc_to_callback(http, wharf, "hal", abort=True)), 400,
                   "external_login_failed")
    assert body["details"] == {"reason": "provider_error", "error": "access_denied"}
    # a callback URL opened in another browser (no binding cookie) signs nobody in
    http = requests.Session()
    callback = oidc_to_callback(http, wharf, "hal")
    body = problem(requests.get(callback, allow_redirects=False), 400, "external_login_failed")
    assert body["details"]["reason"] == "browser_mismatch"
    # and the request is used up: the right browser cannot finish it either
    body = problem(http.get(callback, allow_redirects=False), 400, "external_login_failed")
    assert body["details"]["reason"] == "state_invalid"
    # an unknown provider, or one not configured
    problem(http.get(f"{wharf}/api/auth/github/start", allow_redirects=False), 404,
            "not_found")
    problem(http.get(f"{wharf}/api/auth/oidc/callback?state=x"), 400, "external_login_failed")


def test_an_expired_request_is_refused(wharf, db):
    def expire() -> None:
        with db.write() as s:
            s.execute(text("UPDATE external_authorizations SET expires_at = created_at"))

    http = requests.Session()
    callback = oidc_to_callback(http, wharf, "ivan", before=expire)
    body = problem(http.get(callback, allow_redirects=False), 400, "external_login_failed")
    assert body["details"]["reason"] == "state_expired"


def test_a_disabled_user_is_refused_and_a_taken_name_made_unique(wharf, db):
    register(wharf, "judy")
    http, r = sign_in(wharf, "judy")
    assert r.status_code == 302
    me = http.get(f"{wharf}/api/me").json()
    assert me["username"] == "judy-2"
    assert set_disabled(db, "judy-2", True)
    _, r = sign_in(wharf, "judy", http=_fresh_wharf_cookies(http))
    problem(r, 403, "account_disabled")


def test_next_is_only_a_path_of_this_origin():
    assert safe_next("/a/b?c=d#e") == "/a/b?c=d#e"
    for bad in (None, "", "//evil.example/", "/\\evil.example", "https://evil.example/",
                "evil", "/a b", "/\u00e9", "/" + "a" * 3000):
        assert safe_next(bad) == "/"


def test_usernames_from_providers_are_valid():
    assert username_candidates("alice")[:2] == ["alice", "alice-2"]
    assert username_candidates("Jo")[0] == "Jo-user"
    assert username_candidates("")[0] == "user"
    assert username_candidates("__x y@z!__")[0] == "x-y-z"
    assert username_candidates("é" * 100)[0] == "user"
    assert all(len(c) <= 64 for c in username_candidates("a" * 200))


# -- GitHub -------------------------------------------------------------------------------
class GitHubStandIn:
    """GitHub's authorize, token and user endpoints, as far as an OAuth app sees them: the
    authorize step remembers the PKCE challenge and redirects back with a code; the token
    endpoint checks the client's secret, the code and the verifier (GitHub answers errors
    with 200 and an ``error`` field); ``/user`` needs the token."""

    def __init__(self, client_id: str, client_secret: str, user: dict):
        self.client_id, self.client_secret, self.user = client_id, client_secret, user
        self.codes: dict[str, str] = {}
        self.tokens: set[str] = set()
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _json(self, status: int, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urlsplit(self.path)
                q = {k: v[0] for k, v in parse_qs(url.query).items()}
                if url.path == "/login/oauth/authorize":
                    assert q["client_id"] == stand_in.client_id
                    assert q["code_challenge_method"] == "S256"
                    code = secrets.token_hex(10)
                    stand_in.codes[code] = q["code_challenge"]
                    self.send_response(302)
                    self.send_header("Location", q["redirect_uri"] + "?" + urlencode(
                        {"code": code, "state": q["state"]}))
                    self.end_headers()
                elif url.path == "/api/user":
                    token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    if token not in stand_in.tokens:
                        return self._json(401, {"message": "Bad credentials"})
                    self._json(200, stand_in.user)
                else:
                    self._json(404, {"message": "Not Found"})

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                if self.path != "/login/oauth/access_token":
                    return self._json(404, {"message": "Not Found"})
                challenge = stand_in.codes.pop(form.get("code", ""), None)
                verifier = form.get("code_verifier", "")
                computed = base64.urlsafe_b64encode(
                    hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                if (form.get("client_id") != stand_in.client_id
                        or form.get("client_secret") != stand_in.client_secret):
                    return self._json(200, {"error": "incorrect_client_credentials"})
                if challenge is None or computed != challenge:
                    return self._json(200, {"error": "bad_verification_code"})
                token = "gho_" + secrets.token_hex(16)
                stand_in.tokens.add(token)
                self._json(200, {"access_token": token, "token_type": "bearer",
                                 "scope": "read:user"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> GitHubStandIn:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def github(settings, db) -> Iterator[tuple[str, GitHubStandIn]]:
    octocat = {"id": 583231, "login": "octocat", "name": "The Octocat"}
    with GitHubStandIn("gh-client", "gh-secret", octocat) as gh, \
            _serve(settings, db, github_client_id="gh-client", github_client_secret="gh-secret",
                   github_authorize_url=gh.url + "/login/oauth/authorize",
                   github_token_url=gh.url + "/login/oauth/access_token",
                   github_api_url=gh.url + "/api") as base:
        yield base, gh


def github_sign_in(base: str, http: requests.Session | None = None) -> tuple[
        requests.Session, requests.Response]:
    http = http or requests.Session()
    _, callback = _walk(http, start(http, base, "github"), f"{base}/api/auth/github/callback")
    assert callback is not None
    return http, http.get(callback, allow_redirects=False)


@pytest.mark.both_databases
def test_github_sign_in_with_a_taken_username(github, db):
    base, _ = github
    register(base, "octocat")  # someone else has that name here
    http, r = github_sign_in(base)
    assert r.status_code == 302 and r.headers["Location"] == "/"
    me = http.get(f"{base}/api/me").json()
    assert me["username"] == "octocat-2"
    items = http.get(f"{base}/api/me/external-identities").json()
    assert items["providers"] == ["github"]
    assert [(i["provider"], i["subject"], i["display_name"]) for i in items["items"]] == \
        [("github", "583231", "The Octocat")]
    # again, in a new browser: the same user
    http2, r = github_sign_in(base)
    assert r.status_code == 302
    assert http2.get(f"{base}/api/me").json()["id"] == me["id"]
    logins = audit_rows(db, action="session.login")
    assert [(a.actor_id, a.details) for a in logins[-2:]] == \
        [(me["id"], {"provider": "github"})] * 2


def test_github_refusing_the_code_is_a_problem_not_a_500(github):
    base, gh = github
    http = requests.Session()
    _, callback = _walk(http, start(http, base, "github"), f"{base}/api/auth/github/callback")
    assert callback is not None
    gh.codes.clear()  # the code is unknown to GitHub now
    body = problem(http.get(callback, allow_redirects=False), 400, "external_login_failed")
    assert body["details"] == {"reason": "token_exchange_failed",
                               "error": "bad_verification_code"}


def test_github_unreachable_is_503(settings, db):
    with _serve(settings, db, github_client_id="gh", github_client_secret="s",
                github_authorize_url="http://127.0.0.1:9/login/oauth/authorize",
                github_token_url="http://127.0.0.1:9/login/oauth/access_token",
                github_api_url="http://127.0.0.1:9") as base:
        http = requests.Session()
        url = start(http, base, "github")
        state = parse_qs(urlsplit(url).query)["state"][0]
        r = http.get(f"{base}/api/auth/github/callback?code=abc&state={state}")
        problem(r, 503, "service_unavailable")
        assert r.headers["Retry-After"] == "5"


def test_a_deleted_accounts_identity_may_sign_up_afresh(github, db):
    from wharf.accounts.purge import revoke_credentials
    base, _ = github
    http, r = github_sign_in(base)
    first = http.get(f"{base}/api/me").json()
    assert first["username"] == "octocat"
    with db.write() as s:  # what requesting the account's deletion does at once
        user = s.get(User, first["id"])
        user.status = "deleting"
        s.flush()
        revoke_credentials(s, first["id"])
    assert http.get(f"{base}/api/me").status_code == 401
    http, r = github_sign_in(base, requests.Session())
    assert r.status_code == 302
    again = http.get(f"{base}/api/me").json()
    assert again["id"] != first["id"] and again["username"] == "octocat-2"


@pytest.mark.both_databases
def test_concurrent_callbacks_with_one_state_sign_in_once(wharf, db):
    from concurrent.futures import ThreadPoolExecutor
    http = requests.Session()
    callback = oidc_to_callback(http, wharf, "kim")
    cookies = {"wharf_external_login": http.cookies.get("wharf_external_login",
                                                        path="/api/auth/")}

    def hit(_: int) -> requests.Response:
        return requests.get(callback, cookies=cookies, allow_redirects=False, timeout=20)

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(hit, range(4)))
    assert sorted(r.status_code for r in answers) == [302, 400, 400, 400]
    for r in answers:
        if r.status_code == 400:
            assert problem(r, 400, "external_login_failed")["details"]["reason"] == \
                "state_invalid"
    with db.read() as s:
        assert s.scalar(select(text("count(*)")).select_from(User)) == 1
        assert s.scalar(select(text("count(*)")).select_from(ExternalIdentity)) == 1


def test_an_api_token_cannot_start_a_link(wharf):
    alice = register(wharf, "alice")
    r = alice.post(f"{wharf}/api/api-tokens", json={"name": "ro", "scopes": ["read"]})
    assert r.status_code == 201, r.text
    token = r.json()["token"]
    r = requests.get(f"{wharf}/api/auth/oidc/start", allow_redirects=False,
                     headers={"Authorization": f"Bearer {token}"})
    problem(r, 403, "forbidden")


@pytest.mark.parametrize(("env", "message"), [
    ({"WHARF_OIDC_ISSUER": "https://id.example.com"}, "^WHARF_OIDC_CLIENT_ID: required"),
    ({"WHARF_OIDC_CLIENT_ID": "w", "WHARF_OIDC_CLIENT_SECRET": "s"},
     "^WHARF_OIDC_ISSUER: required when WHARF_OIDC_CLIENT_ID"),
    ({"WHARF_GITHUB_CLIENT_SECRET": "s"}, "^WHARF_GITHUB_CLIENT_ID: required"),
    ({"WHARF_OIDC_ALLOWED_ISSUERS": "https://id.example.com"}, "^WHARF_OIDC_ALLOWED_ISSUERS"),
    ({"WHARF_OIDC_ALLOWED_ISSUERS": "ftp://id.example.com"}, "^WHARF_OIDC_ALLOWED_ISSUERS"),
    ({"WHARF_GITHUB_API_URL": "api.github.com"}, "^WHARF_GITHUB_API_URL"),
])
def test_half_a_provider_is_a_configuration_error(env, message):
    from wharf.infra.settings import ConfigError, Settings
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env)


def test_a_whole_provider_is_configured():
    from wharf.infra.settings import Settings
    s = Settings.from_env({"WHARF_OIDC_ISSUER": "https://id.example.com",
                           "WHARF_OIDC_CLIENT_ID": "w", "WHARF_OIDC_CLIENT_SECRET": "s",
                           "WHARF_OIDC_ALLOWED_ISSUERS": " https://id.example.com ,"
                                                         "https://id2.example.com"})
    assert s.oidc_allowed_issuers == ("https://id.example.com", "https://id2.example.com")
    assert "oidc_client_secret" not in repr(s) and "github_client_secret" not in repr(s)


def test_starts_are_throttled_per_address(wharf, db):
    from wharf.identity.external import STARTS_PER_ADDRESS
    http = requests.Session()
    for _ in range(STARTS_PER_ADDRESS):
        start(http, wharf)
    r = http.get(f"{wharf}/api/auth/oidc/start", allow_redirects=False)
    problem(r, 429, "rate_limited")
    assert int(r.headers["Retry-After"]) > 0
    with db.read() as s:
        assert s.scalar(select(text("count(*)")).select_from(
            text("external_authorizations"))) == STARTS_PER_ADDRESS


@pytest.mark.both_databases
def test_concurrent_links_of_one_user_link_one_account(wharf, db):
    """Two link requests of one user finishing at once, with two accounts of the provider:
    one links, the other is 409 ``provider_already_linked`` (never a 500)."""
    from concurrent.futures import ThreadPoolExecutor
    lee = register(wharf, "lee")
    browsers, callbacks = [], []
    for login in ("lee-one", "lee-two"):
        http = requests.Session()
        http.cookies.set("wharf_session", lee.cookies["wharf_session"])
        callbacks.append(oidc_to_callback(http, wharf, login))
        browsers.append({"wharf_external_login": http.cookies.get(
            "wharf_external_login", path="/api/auth/")})

    def hit(i: int) -> requests.Response:
        return requests.get(callbacks[i], cookies=browsers[i], allow_redirects=False,
                            timeout=20)

    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(hit, range(2)))
    assert sorted(r.status_code for r in answers) == [302, 409], [r.text for r in answers]
    problem(next(r for r in answers if r.status_code == 409), 409, "provider_already_linked")
    items = lee.get(f"{wharf}/api/me/external-identities").json()["items"]
    assert len(items) == 1


def test_id_tokens_are_checked(settings, idp):
    """Tokens the provider did not sign, or signed for another client, or expired, are
    ``id_token_invalid``; an unknown key id fetches the provider's keys again first."""
    import time

    from joserfc import jwt as jose_jwt
    from joserfc.jwk import KeySet, RSAKey

    from wharf.identity.oauth import OpenIDProvider
    from wharf.identity.providers import LoginFailed
    provider = OpenIDProvider(settings.replace(
        oidc_issuer=idp.issuer, oidc_client_id=idp.client_id,
        oidc_client_secret=idp.client_secret))
    meta = provider.metadata()
    ours = RSAKey.generate_key(2048, parameters={"kid": "ours", "alg": "RS256", "use": "sig"})
    now = int(time.time())
    good = {"iss": idp.issuer, "sub": "x", "aud": idp.client_id, "iat": now,
            "exp": now + 300, "nonce": "n"}

    def token(**claims) -> str:
        return jose_jwt.encode({"alg": "RS256", "kid": "ours"}, {**good, **claims}, ours)

    def reason(raw: str) -> str:
        with pytest.raises(LoginFailed) as failed:
            provider._validate(raw, meta, "n", "at")
        return failed.value.reason

    # not signed by the provider: its keys are fetched again (rotation), still unknown
    fetched = provider._key_set()
    assert reason(token()) == "id_token_invalid"
    assert provider._keys is not None and provider._keys[1] is not fetched
    # signed by a key the provider publishes (here: ours, planted in the cache)
    provider._keys = (time.monotonic(), KeySet([ours]))
    assert provider._validate(token(), meta, "n", "at")["sub"] == "x"
    assert reason(token(aud="someone-else")) == "id_token_invalid"
    assert reason(token(exp=now - 600, iat=now - 900)) == "id_token_invalid"
    assert reason(token(nonce="m")) == "nonce_mismatch"
    assert reason(token(iss="https://evil.example")) == "issuer_not_allowed"
    assert reason("not.a.jwt") == "id_token_invalid"
