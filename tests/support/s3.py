"""A real S3-compatible HTTP server for the tests: moto's server mode in a subprocess."""
from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.waiting import free_port


class MotoServer:
    def __init__(self):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> MotoServer:
        env = {**os.environ, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
            start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(self.endpoint + "/moto-api/", timeout=1)
                return self
            except Exception:
                if self.proc.poll() is not None:
                    raise RuntimeError("moto server exited at start") from None
                time.sleep(0.1)
        raise RuntimeError("moto server did not start")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def moto_fixture() -> Any:
    """A module-scoped ``moto`` fixture: a :class:`MotoServer` of the module's own, stopped
    afterwards (``moto = moto_fixture()``)."""
    @pytest.fixture(scope="module", name="moto")
    def moto() -> Iterator[MotoServer]:
        server = MotoServer().start()
        try:
            yield server
        finally:
            server.stop()
    return moto


def s3_client(endpoint: str) -> Any:
    """A boto3 S3 client on ``endpoint`` (path-style, the ``test`` credentials of moto)."""
    import boto3
    from botocore.config import Config
    return boto3.client(
        "s3", endpoint_url=endpoint, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test",
        config=Config(s3={"addressing_style": "path"}))
