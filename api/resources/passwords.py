"""Changing a password, recovery codes and password resets (wharf.identity.passwords)."""
from __future__ import annotations

import falcon

from api import contract
from api.resources.identity import THROTTLED
from api.schemas.identity import (
    ChangePasswordRequest,
    PasswordResetRequest,
    RecoveryCodes,
    RecoveryCodesRequest,
)
from storage.db import Database
from wharf.identity import passwords
from wharf.identity.service import Identity


class MyPassword:
    def __init__(self, db: Database, identity: Identity):
        self.db, self.identity = db, identity

    @contract.op(operation_id="changePassword", summary="Change my password",
                 tags=["identity"],
                 description="Every other login session of the user ends (this API process "
                             "refuses their cookies at once, every other within "
                             "`WHARF_AUTH_CACHE_SECONDS`); the session making the request "
                             "stays. API tokens stay unless `revoke_tokens`. 401 "
                             "`invalid_credentials` for a wrong `current_password`; " +
                             THROTTLED,
                 body=ChangePasswordRequest,
                 responses={204: contract.Answer(None, "changed")}, problems=(429,))
    def on_put(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, ChangePasswordRequest)
        passwords.change_password(self.identity, self.db, req.context.ctx,
                                  body.current_password, body.new_password,
                                  revoke_api_tokens=body.revoke_tokens)
        resp.status = falcon.HTTP_204


class MyRecoveryCodes:
    def __init__(self, db: Database, identity: Identity):
        self.db, self.identity = db, identity

    @contract.op(operation_id="createRecoveryCodes", summary="New recovery codes",
                 tags=["identity"],
                 description="Ten one-time codes for `POST /api/password-resets`, shown in "
                             "this answer only (the server keeps their digests); any earlier "
                             "set stops working. A login session only (403 "
                             "`token_cannot_mint` for an API token), re-authenticated: "
                             "`current_password`, or a session younger than "
                             "`WHARF_ACCOUNT_REAUTH_SECONDS` (403 "
                             "`reauthentication_required`; " + THROTTLED + ")",
                 body=RecoveryCodesRequest, responses={201: RecoveryCodes},
                 problems=(403, 429))
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, RecoveryCodesRequest)
        resp.media = RecoveryCodes(codes=passwords.create_recovery_codes(
            self.identity, self.db, req.context.ctx, body.current_password))
        resp.status = falcon.HTTP_201


class PasswordResets:
    def __init__(self, db: Database, identity: Identity):
        self.db, self.identity = db, identity

    @contract.op(operation_id="resetPassword", summary="Reset a forgotten password",
                 tags=["identity"],
                 description="Spends one recovery code on a new password; every login "
                             "session of the user ends (API tokens stay unless "
                             "`revoke_tokens`). 401 `invalid_recovery_code` for a wrong "
                             "username, a wrong code or a spent one alike; 403 "
                             "`account_disabled` (the right code of a disabled account: not "
                             "spent); " + THROTTLED,
                 body=PasswordResetRequest,
                 responses={204: contract.Answer(None, "reset")},
                 problems=(401, 403, 429, 503), auth="none")
    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        body = contract.read_body(req, PasswordResetRequest)
        passwords.reset_password(self.identity, self.db, req.context.ctx, body.username,
                                 body.code, body.new_password,
                                 revoke_api_tokens=body.revoke_tokens)
        resp.status = falcon.HTTP_204
