"""WSGI entry point for gunicorn (``wharf api``): builds the app from ``WHARF_*`` settings."""
from __future__ import annotations

from api.runtime import build_api

application = build_api()
