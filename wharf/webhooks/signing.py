"""Standard Webhooks signatures (https://www.standardwebhooks.com/).

The secret is ``whsec_`` + base64 of 24 random bytes; the HMAC key is those bytes. The
signed content is ``{webhook-id}.{webhook-timestamp}.{body}``; ``webhook-signature`` is
``v1,`` + base64(HMAC-SHA256(key, content)). Receivers recompute it, compare in constant
time, and refuse a timestamp more than ``REPLAY_WINDOW_SECONDS`` from their clock.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

PREFIX = "whsec_"


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()


def key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(PREFIX))


def sign(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    content = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(key(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(secret: str, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {"webhook-id": msg_id, "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(secret, msg_id, timestamp, body)}
