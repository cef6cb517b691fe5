"""Which external services the suite can use, and what happens when one is missing.

With ``WHARF_TEST_REQUIRE_SERVICES=1`` (CI) a missing PostgreSQL or Redis fails the test;
otherwise the test is skipped with a message saying what was not covered.
"""
from __future__ import annotations

import functools
import os

import pytest

POSTGRES_URL = os.environ.get("WHARF_TEST_POSTGRES_URL",
                              "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("WHARF_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
REQUIRE = os.environ.get("WHARF_TEST_REQUIRE_SERVICES", "") not in ("", "0", "false")


@functools.lru_cache(maxsize=None)
def postgres_error() -> str | None:
    try:
        import psycopg
        url = POSTGRES_URL.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(url, connect_timeout=3) as conn:
            conn.execute("SELECT 1")
        return None
    except Exception as exc:  # noqa: BLE001 - any failure means "not reachable"
        return f"PostgreSQL at {POSTGRES_URL} unreachable: {exc}"


@functools.lru_cache(maxsize=None)
def redis_error() -> str | None:
    try:
        import redis
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3).ping()
        return None
    except Exception as exc:  # noqa: BLE001
        return f"Redis at {REDIS_URL} unreachable: {exc}"


def need(error: str | None) -> None:
    if error is None:
        return
    if REQUIRE:
        pytest.fail(f"required service missing (WHARF_TEST_REQUIRE_SERVICES=1): {error}")
    pytest.skip(f"SKIPPED, service not available: {error}")
