"""WSGI entry point for gunicorn (``wharf api``): ``wharfd.wsgi:application``, the API
with its collaborators (database, dispatcher to the broker, notifier) built from settings
by :func:`wharfd.runtime.build_api_app`."""
from __future__ import annotations

from api.expect_continue import ExpectContinue
from wharfd.runtime import build_api_app

# ``100 Continue`` on the first body read (with the pre_request hook ``wharf api`` installs).
application = ExpectContinue(build_api_app())
