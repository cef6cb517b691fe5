"""Device login for the CLI (RFC 8628): the request, the token poll and the approval page's
routes (wharf.identity.device)."""
from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from api.schemas.common import Request, Response, Timestamp
from api.schemas.identity import User

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"

Name100 = Annotated[str, msgspec.Meta(max_length=100)]
Text200 = Annotated[str, msgspec.Meta(max_length=200)]
UserCode = Annotated[str, msgspec.Meta(description="As shown: `XXXX-XXXX`, letters of "
                                                   "BCDFGHJKLMNPQRSTVWXZ.",
                                       examples=["WDJB-MJHT"])]


class DeviceAuthorizationRequest(Request):
    """JSON, or form-encoded as RFC 8628 section 3.1 sends it."""

    client_id: Annotated[Name100 | None, msgspec.Meta(
        description="The client's name, shown on the approval page (no registration: "
                    "any name).")] = None
    scope: Annotated[Text200 | None, msgspec.Meta(
        description="Accepted and ignored: the session has every scope.")] = None


class DeviceAuthorizationStarted(Response):
    """RFC 8628 section 3.2, plus the token endpoint to poll."""

    device_code: Annotated[str, msgspec.Meta(description="The client's secret; poll with it.")]
    user_code: UserCode
    verification_uri: Annotated[str, msgspec.Meta(
        description="Wharf's approval page (`/device`), absolute.")]
    verification_uri_complete: Annotated[str, msgspec.Meta(
        description="The page with the user code filled in.")]
    expires_in: Annotated[int, msgspec.Meta(description="Seconds the request lives (600).")]
    interval: Annotated[int, msgspec.Meta(description="Seconds between polls (5).")]
    token_endpoint: Annotated[str, msgspec.Meta(
        description="Where to poll: `POST` with `grant_type` and `device_code`.")]


class DeviceTokenRequest(Request):
    """JSON, or form-encoded as RFC 8628 section 3.4 sends it."""

    grant_type: Annotated[Text200 | None, msgspec.Meta(
        examples=[DEVICE_GRANT],
        description=f"`{DEVICE_GRANT}` (else `unsupported_grant_type`).")] = None
    device_code: Text200 | None = None
    client_id: Name100 | None = None


class DeviceTokenIssued(Response):
    """RFC 6749 section 5.1: a new login session of the approving user."""

    access_token: Annotated[str, msgspec.Meta(
        description="The session's credential: send `Authorization: Bearer <it>` (or it "
                    "is the `wharf_session` cookie's value). Shown only in this answer.")]
    token_type: Literal["Bearer"]
    expires_in: Annotated[int, msgspec.Meta(description="Seconds the session lives.")]
    scope: Annotated[str, msgspec.Meta(description="`read write`: a session's.")]
    session_id: Annotated[str, msgspec.Meta(
        description="The login session (GET/DELETE /api/login-sessions).")]
    user: User


class DeviceAuthorization(Response):
    """What a device login request asks, for the page that approves it."""

    user_code: UserCode
    status: Literal["pending", "approved", "denied", "issued", "expired"]
    created_at: Timestamp
    expires_at: Timestamp
    client_name: Annotated[str | None, msgspec.Meta(
        description="The name the client gave (`client_id`): not verified.")]
    user_agent: Annotated[str | None, msgspec.Meta(
        description="The requesting client's User-Agent.")]
    address: Annotated[str | None, msgspec.Meta(
        description="The requesting client's address, as the API saw it.")]
