"""Test hooks (only with WHARF_TEST_HOOKS=1): pause an operation before it commits while a
file exists, so a test can kill -9 the worker mid-operation."""
from __future__ import annotations

import os
import time

from storage.models import Operation
from wharf.infra.settings import Settings
from wharf.operations.executor import Hooks


class PauseFileHooks(Hooks):
    def __init__(self, path: str):
        self.path = path

    def before_commit(self, op: Operation) -> None:
        while os.path.exists(self.path):
            time.sleep(0.05)


def from_env(settings: Settings) -> Hooks | None:
    if settings.test_hooks and os.environ.get("WHARF_TEST_PAUSE_FILE"):
        return PauseFileHooks(os.environ["WHARF_TEST_PAUSE_FILE"])
    return None
