"""Users, login sessions, the current principal and API tokens."""
from __future__ import annotations

from typing import Annotated, ClassVar

import msgspec

from api.schemas.common import Id, InvalidField, Request, Response, Timestamp
from storage.enums import AuthMethod, TokenScope
from wharf.identity.service import PASSWORD_MAX, PASSWORD_MIN

Username = Annotated[str, msgspec.Meta(max_length=64, examples=["alice"])]
Password = Annotated[str, msgspec.Meta(max_length=PASSWORD_MAX)]


class User(Response):
    id: Id
    username: str
    created_at: Timestamp


class RegisterResult(User):
    personal_space_id: Id


class Me(RegisterResult):
    auth: AuthMethod
    scopes: list[TokenScope]


class LoginResult(Response):
    session_id: Id
    expires_at: Timestamp
    user: User


class ApiToken(Response):
    id: Id
    name: str
    prefix: str
    scopes: list[TokenScope]
    created_at: Timestamp
    expires_at: Timestamp | None
    last_used_at: Timestamp | None
    quota_pending_operations: Annotated[int | None, msgspec.Meta(
        description="The token's own limit on operations pending at once (0: "
                    "unlimited); null: the server's.")]
    quota_submissions_per_minute: Annotated[int | None, msgspec.Meta(
        description="The token's own limit on submissions per minute (0: unlimited); "
                    "null: the server's.")]


class ApiTokenCreated(ApiToken):
    token: Annotated[str, msgspec.Meta(description="The secret; shown only in this answer.")]


class ApiTokenList(Response):
    items: list[ApiToken]


class RegisterRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"username": "alice",
                                                "password": "correct horse battery"}
    username: Annotated[str, msgspec.Meta(min_length=3, max_length=64, examples=["alice"])]
    password: Annotated[str, msgspec.Meta(min_length=PASSWORD_MIN, max_length=PASSWORD_MAX)]


class LoginRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"username": "alice",
                                                "password": "correct horse battery"}
    username: Username
    password: Password


def _unique(field: str, values: list[TokenScope]) -> None:
    if len(set(values)) != len(values):
        raise InvalidField(field, "array items must be unique")


class CreateTokenRequest(Request):
    __example__: ClassVar[dict[str, object]] = {"name": "ci", "scopes": ["read"],
                                                "expires_in_days": 30}
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=100, examples=["ci"])]
    scopes: Annotated[list[TokenScope], msgspec.Meta(min_length=1,
                                                     extra_json_schema={"uniqueItems": True})]
    expires_in_days: Annotated[int, msgspec.Meta(ge=1, le=3650)] | None = None
    quota_pending_operations: Annotated[int, msgspec.Meta(
        ge=0, le=10_000_000,
        description="This token's limit on the user's operations pending at once (0: "
                    "unlimited). Above the server's limit: operators only.")] | None = None
    quota_submissions_per_minute: Annotated[int, msgspec.Meta(
        ge=0, le=10_000_000,
        description="This token's limit on the user's submissions per minute (0: "
                    "unlimited). Above the server's limit: operators only.")] | None = None

    def __post_init__(self) -> None:
        _unique("scopes", self.scopes)


class DeleteAccountRequest(Request):
    """``DELETE /api/me``: the password re-authenticates; without it, only a login session
    younger than ``WHARF_ACCOUNT_REAUTH_SECONDS`` may delete the account."""

    __example__: ClassVar[dict[str, object]] = {"password": "correct horse battery"}
    password: Password | None = None


class LoginSessionItem(Response):
    id: Id
    created_at: Timestamp
    expires_at: Timestamp
    last_used_at: Annotated[Timestamp | None, msgspec.Meta(
        description="When it last authenticated a request (to within a minute or so).")]
    user_agent: str | None
    address: Annotated[str | None, msgspec.Meta(description="The client address at login.")]
    current: Annotated[bool, msgspec.Meta(description="Whether this request uses it.")]


class LoginSessionList(Response):
    items: list[LoginSessionItem]


class UserLookupQuery(msgspec.Struct, forbid_unknown_fields=False):
    """``?username=`` of a user lookup."""

    username: Annotated[str, msgspec.Meta(
        max_length=64, description="The exact username, any case.", examples=["bob"])] = ""


class UserRef(Response):
    id: Id
    username: str


class UserRefList(Response):
    items: Annotated[list[UserRef], msgspec.Meta(
        description="The one user with that name, or none.")]


NewPassword = Annotated[str, msgspec.Meta(min_length=PASSWORD_MIN, max_length=PASSWORD_MAX)]


class ChangePasswordRequest(Request):
    """``PUT /api/me/password``."""

    __example__: ClassVar[dict[str, object]] = {"current_password": "correct horse battery",
                                                "new_password": "a new one, long enough"}
    current_password: Password
    new_password: NewPassword
    revoke_tokens: Annotated[bool, msgspec.Meta(
        description="Also revoke every API token of the user (default: they stay).")] = False


class RecoveryCodesRequest(Request):
    """``POST /api/me/recovery-codes``: the password re-authenticates; without it, only a
    login session younger than ``WHARF_ACCOUNT_REAUTH_SECONDS`` may make codes."""

    __example__: ClassVar[dict[str, object]] = {"current_password": "correct horse battery"}
    current_password: Password | None = None


class RecoveryCodes(Response):
    codes: Annotated[list[str], msgspec.Meta(
        min_length=10, max_length=10,
        description="Ten one-time codes, shown only in this answer; any earlier set no "
                    "longer works.", examples=[["abcd-efgh-ijkl-mnop"] * 10])]


class PasswordResetRequest(Request):
    """``POST /api/password-resets``: a recovery code buys a new password."""

    __example__: ClassVar[dict[str, object]] = {"username": "alice",
                                                "code": "abcd-efgh-ijkl-mnop",
                                                "new_password": "a new one, long enough"}
    username: Username
    code: Annotated[str, msgspec.Meta(max_length=64, description=(
        "One unused recovery code (any case; hyphens and spaces ignored)."))]
    new_password: NewPassword
    revoke_tokens: Annotated[bool, msgspec.Meta(
        description="Also revoke every API token of the user (default: they stay).")] = False
