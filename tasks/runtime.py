"""The embedded runtime of ``wharf serve``: API, in-process broker, workers, scheduler."""
from __future__ import annotations

from api.runtime import build_api
from storage.db import Database
from wharf.config import Settings


class EmbeddedRuntime:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.db = Database(settings.database_url, settings.sqlite_busy_timeout_ms)
        self.api_app = build_api(settings, self.db)

    def start(self) -> None:
        pass

    def stop(self) -> None:
        self.db.dispose()
