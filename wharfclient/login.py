"""``wharf-client login``: the device login of RFC 8628 (the server's
``POST /api/device-authorizations``), for a terminal without a browser.

1. Ask the server for a request; print its verification URL and user code (stderr: they
   are instructions, stdout keeps the result).
2. Poll the token endpoint the answer names every ``interval`` seconds; on ``slow_down``
   wait 5 s longer from then on (RFC 8628 section 3.5); ``authorization_pending``: go on;
   anything else (``access_denied``, ``expired_token``, ...) is an error (exit 3).
   The device code goes only to the configured server: a token endpoint on another
   origin is not followed (the server's own path under the configured URL is used).
3. Store the credential (a login session of the approving user, sent as
   ``Authorization: Bearer``) as the profile's ``token``, with its ``url``, in the profile
   file (``wharfclient.config.save_profile``, mode 0600).
"""
from __future__ import annotations

import argparse
import socket
import time
from collections.abc import Callable
from typing import Any

import httpx

from wharfclient.config import Config, ConfigError, load_config
from wharfclient.http import ApiError, WharfClient

GRANT = "urn:ietf:params:oauth:grant-type:device_code"
START_PATH = "/api/device-authorizations"
TOKEN_PATH = "/api/device-authorizations/token"
SLOW_DOWN_STEP = 5


def target(args: argparse.Namespace) -> Config:
    """The server to log in to, without any token (a profile named with ``--profile``
    need not exist yet when ``--url`` is given: login creates it)."""
    try:
        config = load_config(url=args.url, profile=args.profile)
    except ConfigError:
        if not args.url:
            raise
        return Config(url=args.url.rstrip("/"), token=None)
    return Config(url=config.url, token=None)


def _token_path(base: str, named: object) -> str:
    """``named`` when it is on the configured server's origin, else the server's own
    path under the configured URL."""
    if isinstance(named, str) and named:
        try:
            url = httpx.URL(named)
            own = httpx.URL(base)
        except (httpx.InvalidURL, TypeError):
            return TOKEN_PATH
        if not url.is_absolute_url:
            return named if named.startswith("/") else TOKEN_PATH
        if (url.scheme, url.host, url.port) == (own.scheme, own.host, own.port):
            return str(url)
    return TOKEN_PATH


def device_login(client: WharfClient, base: str, show: Callable[[dict[str, Any]], None], *,
                 client_name: str | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Run the flow; the token answer (``access_token``, ``user``, ...)."""
    name = client_name or f"wharf-client on {socket.gethostname()}"[:100]
    started = client.json("POST", START_PATH, json={"client_id": name})
    show(started)
    interval = max(int(started.get("interval") or 5), 1)
    endpoint = _token_path(base, started.get("token_endpoint"))
    deadline = time.monotonic() + int(started.get("expires_in") or 600)
    while True:
        sleep(interval)
        resp = client.request("POST", endpoint, ok=(400,),
                              json={"grant_type": GRANT,
                                    "device_code": started["device_code"]})
        body = resp.json()
        if resp.status_code < 400 and isinstance(body, dict) and body.get("access_token"):
            return body
        error = body.get("error") if isinstance(body, dict) else None
        if error == "slow_down":
            interval += SLOW_DOWN_STEP
        elif error != "authorization_pending" or time.monotonic() > deadline:
            raise ApiError.from_response(resp)
