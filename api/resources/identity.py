"""Users, login sessions, the current principal and API tokens."""
from __future__ import annotations

import falcon
from sqlalchemy import select

from api import serialize
from api.body import read_json
from api.middleware import SESSION_COOKIE
from storage.db import Database
from storage.models import Space, User
from wharf.clock import iso
from wharf.config import Settings
from wharf.identity import Identity


class Users:
    anonymous_ok = True

    def __init__(self, db: Database, identity: Identity):
        self.db, self.identity = db, identity

    def on_post(self, req, resp):
        body = read_json(req, "RegisterRequest")
        user, space = self.identity.register(self.db, req.context.ctx, body.get("username"),
                                             body.get("password"))
        resp.media = {**serialize.user(user), "personal_space_id": space.id}
        resp.status = falcon.HTTP_201
        resp.location = "/api/me"


class LoginSessions:
    anonymous_ok = True

    def __init__(self, db: Database, identity: Identity, settings: Settings):
        self.db, self.identity, self.settings = db, identity, settings

    def on_post(self, req, resp):
        body = read_json(req, "LoginRequest")
        login, cookie, user = self.identity.login(self.db, req.context.ctx,
                                                  body.get("username"), body.get("password"))
        resp.media = {"session_id": login.id, "expires_at": iso(login.expires_at),
                      "user": serialize.user(user)}
        resp.set_cookie(SESSION_COOKIE, cookie, max_age=self.settings.session_ttl, path="/",
                        secure=self.settings.secure_cookies, http_only=True, same_site="Lax")
        resp.status = falcon.HTTP_201


class CurrentLoginSession:
    def __init__(self, db: Database, identity: Identity, settings: Settings):
        self.db, self.identity, self.settings = db, identity, settings

    def on_delete(self, req, resp):
        with self.db.write() as s:
            self.identity.logout(s, req.context.ctx)
        resp.unset_cookie(SESSION_COOKIE, path="/")
        resp.status = falcon.HTTP_204


class Me:
    def __init__(self, db: Database):
        self.db = db

    def on_get(self, req, resp):
        p = req.context.principal
        with self.db.read() as s:
            user = s.get(User, p.user_id)
            personal = s.scalar(select(Space.id).where(Space.owner_id == user.id,
                                                       Space.type == "personal"))
            resp.media = {**serialize.user(user), "personal_space_id": personal,
                          "auth": "token" if p.token_id else "session",
                          "scopes": sorted(p.scopes) if p.scopes is not None
                          else ["read", "write"]}


class ApiTokens:
    def __init__(self, db: Database, identity: Identity):
        self.db, self.identity = db, identity

    def on_post(self, req, resp):
        body = read_json(req, "CreateTokenRequest")
        with self.db.write() as s:
            token, raw = self.identity.create_token(s, req.context.ctx, body.get("name"),
                                                    body.get("scopes"),
                                                    body.get("expires_in_days"))
            resp.media = {**serialize.token(token), "token": raw}
        resp.status = falcon.HTTP_201

    def on_get(self, req, resp):
        with self.db.read() as s:
            resp.media = {"items": [serialize.token(t)
                                    for t in self.identity.list_tokens(s, req.context.ctx)]}


class ApiToken:
    def __init__(self, db: Database, identity: Identity):
        self.db, self.identity = db, identity

    def on_delete(self, req, resp, token_id):
        with self.db.write() as s:
            self.identity.revoke_token(s, req.context.ctx, token_id)
        resp.status = falcon.HTTP_204
