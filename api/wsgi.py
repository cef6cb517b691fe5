"""WSGI entry point for gunicorn (``wharf api``): a composition root that builds the app
and its collaborators (database, dispatcher to the broker, notifier) from settings."""
from __future__ import annotations

from tasks.runtime import build_api_app

application = build_api_app()
