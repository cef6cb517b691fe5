"""Assemble the API process from settings: database, identity, readiness checks."""
from __future__ import annotations

import falcon

from api.app import create_app
from storage.db import Database
from wharf.config import Settings


def build_api(settings: Settings | None = None, db: Database | None = None,
              **kwargs) -> falcon.App:
    settings = settings or Settings.from_env()
    db = db or Database(settings.database_url, settings.sqlite_busy_timeout_ms)
    return create_app(settings, db, **kwargs)
