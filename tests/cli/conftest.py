"""The ``wharf serve`` the client tests talk to (one per module): a registered, logged-in
user and an API token with the read and write scopes."""
from __future__ import annotations

import pytest

from tests.processes.test_serving import Server, User


@pytest.fixture(scope="module")
def wharf(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("exchange-client")
    server = Server(tmp)
    try:
        user = User(server)
        status, _, token = user.call("POST", "/api/api-tokens",
                                     {"name": "cli", "scopes": ["read", "write"]})
        assert status == 201, token
        yield server, user, token["token"]
    finally:
        server.stop()
