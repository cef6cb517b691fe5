"""WSGI entry point for gunicorn (``wharf api``): a composition root that builds the app
and its collaborators (database, dispatcher to the broker, notifier) from settings."""
from __future__ import annotations

from api.expect_continue import ExpectContinue
from tasks.runtime import build_api_app

# ``100 Continue`` on the first body read (with the pre_request hook ``wharf api`` installs).
application = ExpectContinue(build_api_app())
