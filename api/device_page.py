"""The device login approval page (``GET /device``): server-rendered HTML, its behaviour in
``/device.js`` (no inline script: ``Content-Security-Policy: script-src 'self'``, the
dashboard's policy, api.dashboard_page.CSP).

Anonymous visitors get a login form; a logged-in user gets the user-code form (filled from
``?user_code=``, as ``verification_uri_complete`` links), and the script shows what the
code asks (``GET /api/device-authorizations/{user_code}``) with Approve and Deny buttons
(``POST .../approve|deny``). Every value is escaped. The ids below are the script's
contract (keep both in step).
"""
from __future__ import annotations

from html import escape

SCRIPT = "/device.js"
STYLE = "/ops/dashboard.css"


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def page(username: str | None, user_code: str) -> str:
    head = (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>Wharf: device login</title><link rel="icon" href="data:,">'
            f'<link rel="stylesheet" href="{STYLE}">'
            f'<script src="{SCRIPT}" defer></script></head>')
    if username is None:
        body = """<form id="login-form"><h2>Log in to approve a device</h2>
<label>Username <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password"
required></label><button type="submit">Log in</button><p id="login-error" role="alert"></p>
</form>"""
    else:
        body = (f'<p>Logged in as <strong>{_e(username)}</strong>. Enter the code your '
                f'device shows; approve only a login you started yourself.</p>'
                f'<form id="code-form"><label>Code <input name="user_code" '
                f'value="{_e(user_code[:32])}" autocomplete="off" autocapitalize="characters" '
                f'spellcheck="false" maxlength="32" required></label>'
                f'<button type="submit">Continue</button></form>'
                f'<section id="request" hidden><h2>This device asks to log in as you</h2>'
                f'<dl><dt>Client</dt><dd id="req-client"></dd><dt>Program</dt>'
                f'<dd id="req-agent"></dd><dt>From</dt><dd id="req-address"></dd>'
                f'<dt>Asked at</dt><dd id="req-created"></dd><dt>Status</dt>'
                f'<dd id="req-status"></dd></dl>'
                f'<button type="button" id="approve">Approve</button> '
                f'<button type="button" id="deny">Deny</button></section>'
                f'<p id="message" role="alert"></p>')
    return (head + '<body><main><h1>Device login</h1>'
            '<noscript><p>This page needs JavaScript.</p></noscript>'
            f'{body}</main></body></html>')
