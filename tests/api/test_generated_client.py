"""A client generated from the OpenAPI document (openapi-python-client) works as a
consumer would use it.

The document is read from a running server's ``/api/openapi.json``; the client is
generated with no warnings (a warning means a part of the API the generator dropped or
could not type), type-checks with mypy (strict), and runs a short submitter flow against
a real HTTP server (waitress in a thread, the embedded wiring with in-process workers):
log in and mint a token; create a unit resource and read its typed result; upload a blob
and download it, a ranged read included; problem responses parsed into ``Problem``.

The generator runs without its default ruff post-hooks (``post_hooks: []``): formatting is
not under test, and ``ruff check --fix`` rewrites the generated ``__exit__(*args: Any)``
into ``*args: object``, which mypy then rejects in the generator's own ``client.py``.
"""
from __future__ import annotations

import hashlib
import importlib
import io
import json
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.support.threaded_server import serving_in_thread

PASSWORD = "correct horse battery staple"
BIN = Path(sys.executable).parent
GENERATOR = shutil.which("openapi-python-client", path=str(BIN))
PACKAGE = "wharf_generated_client"

# One generation (and one mypy run) per distinct document in this run.
_GENERATED: dict[str, tuple[Path, str]] = {}


def _generate(document: dict[str, Any], tmp: Path) -> tuple[Path, str]:
    """Generate the client for ``document`` into ``tmp``; (its parent dir, the output)."""
    digest = hashlib.sha256(json.dumps(document, sort_keys=True).encode()).hexdigest()
    if digest in _GENERATED:
        return _GENERATED[digest]
    root = tmp / f"gen-{digest[:12]}"
    root.mkdir()
    spec = root / "openapi.json"
    spec.write_text(json.dumps(document))
    config = root / "config.yaml"
    config.write_text("post_hooks: []\n")
    assert GENERATOR is not None, "openapi-python-client is not installed (dev extra)"
    done = subprocess.run(
        [GENERATOR, "generate", "--path", str(spec), "--output-path", str(root / PACKAGE),
         "--meta", "none", "--config", str(config)],
        capture_output=True, text=True, timeout=300, cwd=root)
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    _GENERATED[digest] = (root, output)
    return root, output


class Generated:
    """The generated package, imported; endpoint modules found by operationId (whatever
    tag directory the generator put them in)."""

    def __init__(self, root: Path):
        sys.path.insert(0, str(root))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(PACKAGE + ".")]:
            del sys.modules[name]
        self.package = importlib.import_module(PACKAGE)
        self.models = importlib.import_module(f"{PACKAGE}.models")
        self.types = importlib.import_module(f"{PACKAGE}.types")
        self.errors = importlib.import_module(f"{PACKAGE}.errors")
        self._root = root
        self._modules: dict[str, ModuleType] = {}

    def endpoint(self, operation_id: str) -> ModuleType:
        snake = "".join("_" + c.lower() if c.isupper() else c for c in operation_id)
        if snake not in self._modules:
            found = sorted((self._root / PACKAGE / "api").glob(f"*/{snake}.py"))
            assert len(found) == 1, f"{operation_id}: {found}"
            tag = found[0].parent.name
            self._modules[snake] = importlib.import_module(f"{PACKAGE}.api.{tag}.{snake}")
        return self._modules[snake]

    def client(self, base_url: str, token: str | None = None) -> Any:
        if token is None:
            return self.package.Client(base_url=base_url, raise_on_unexpected_status=True)
        return self.package.AuthenticatedClient(base_url=base_url, token=token,
                                                raise_on_unexpected_status=True)

    def close(self) -> None:
        sys.path.remove(str(self._root))


@pytest.fixture
def http_server(components, worker) -> Iterator[str]:
    """The app over real HTTP on a free port (waitress in a thread); its base URL."""
    with serving_in_thread(components.api_app()) as base:
        yield base


@pytest.fixture
def generated(http_server, tmp_path_factory) -> Iterator[tuple[Generated, str]]:
    import httpx
    document = httpx.get(f"{http_server}/api/openapi.json").json()
    root, output = _generate(document, tmp_path_factory.mktemp("client"))
    client = Generated(root)
    yield client, output
    client.close()


def _wait(gen: Generated, client: Any, op: Any) -> Any:
    get_operation = gen.endpoint("getOperation")
    deadline = time.monotonic() + 30
    while not op.done:
        assert time.monotonic() < deadline, f"operation {op.id} not done within 30 s"
        r = get_operation.sync_detailed(op.id, client=client, wait=5)
        assert r.status_code == 200, r.content
        op = r.parsed
    return op


def test_the_client_generates_without_warnings_and_passes_mypy(generated):
    gen, output = generated
    lowered = output.lower()
    assert "warning" not in lowered and "error" not in lowered, output
    done = subprocess.run([str(BIN / "mypy"), "--strict", "--no-incremental",
                           "--cache-dir", "/dev/null", PACKAGE],
                          capture_output=True, text=True, timeout=600,
                          cwd=gen.package.__path__[0] + "/..")
    assert done.returncode == 0 and "Success: no issues found" in done.stdout, \
        done.stdout + done.stderr


def test_a_submitter_flow_through_the_generated_client(http_server, generated):
    gen, _ = generated
    m = gen.models
    anon = gen.client(http_server)

    # Register, log in (the session cookie stays in the client), mint a token.
    r = gen.endpoint("registerUser").sync_detailed(
        client=anon, body=m.RegisterRequest(username="alice", password=PASSWORD))
    assert r.status_code == 201, r.content
    space_id = r.parsed.personal_space_id
    r = gen.endpoint("login").sync_detailed(
        client=anon, body=m.LoginRequest(username="alice", password=PASSWORD))
    assert r.status_code == 201 and isinstance(r.parsed, m.LoginResult), r.content
    r = gen.endpoint("createApiToken").sync_detailed(
        client=anon, body=m.CreateTokenRequest.from_dict({"name": "ci",
                                                          "scopes": ["read", "write"]}))
    assert r.status_code == 201, r.content
    alice = gen.client(http_server, token=r.parsed.token)

    # A unit resource: the operation's result is the create_resource result, typed.
    r = gen.endpoint("createResource").sync_detailed(
        client=alice, idempotency_key=uuid.uuid4().hex,
        body=m.CreateResourceRequest.from_dict({"space_id": space_id, "name": "Plan",
                                                "unit_type": "doc"}))
    assert r.status_code == 202, r.content
    op = _wait(gen, alice, r.parsed)
    assert str(op.kind) == "create_resource" and str(op.status) == "completed", op
    result = op.result
    assert isinstance(result, m.CreateResourceResult), type(result)
    r = gen.endpoint("getResource").sync_detailed(result.resource_id, client=alice)
    assert r.status_code == 200 and r.parsed.unit.unit_id == result.unit_id, r.content

    # A blob: session, content, complete, wait; then the bytes back, whole and ranged.
    data = bytes(range(256)) * 40
    r = gen.endpoint("createUploadSession").sync_detailed(
        client=alice, idempotency_key=uuid.uuid4().hex,
        body=m.CreateUploadSessionRequest(space_id=space_id, filename="data.bin",
                                          size=len(data)))
    assert r.status_code == 201, r.content
    session = r.parsed
    r = gen.endpoint("uploadContent").sync_detailed(
        session.id, client=alice, body=gen.types.File(payload=io.BytesIO(data)))
    assert r.status_code == 200 and r.parsed.size == len(data), r.content
    assert r.parsed.sha256 == hashlib.sha256(data).hexdigest()
    r = gen.endpoint("completeUpload").sync_detailed(session.id, client=alice,
                                                     idempotency_key=uuid.uuid4().hex)
    assert r.status_code == 202, r.content
    op = _wait(gen, alice, r.parsed)
    assert str(op.kind) == "create_blob_resource" and str(op.status) == "completed", op
    assert isinstance(op.result, m.CreateBlobResourceResult), type(op.result)
    resource_id = op.result.resource_id

    content = gen.endpoint("getBlobContent")
    r = content.sync_detailed(resource_id, client=alice)
    assert r.status_code == 200, r.content
    assert isinstance(r.parsed, gen.types.File) and r.parsed.payload.read() == data
    etag = r.headers["etag"]
    r = content.sync_detailed(resource_id, client=alice, range_="bytes=10-19")
    assert r.status_code == 206, r.content
    assert r.parsed.payload.read() == data[10:20]
    assert r.headers["content-range"] == f"bytes 10-19/{len(data)}"
    r = gen.endpoint("downloadBlob").sync_detailed(resource_id, client=alice,
                                                   range_="bytes=-5")
    assert r.status_code == 206 and r.parsed.payload.read() == data[-5:], r.content
    assert r.headers["content-disposition"].startswith("attachment;")
    r = gen.endpoint("getBlobResource").sync_detailed(resource_id, client=alice)
    assert r.status_code == 200 and r.parsed.etag == etag, r.content

    # Problems parse into the Problem model, with their stable code.
    r = gen.endpoint("getOperation").sync_detailed(uuid.uuid4().hex, client=alice)
    assert r.status_code == 404 and isinstance(r.parsed, m.Problem), r.content
    assert str(r.parsed.code) == "not_found" and r.parsed.status == 404
    r = gen.endpoint("createResource").sync_detailed(
        client=alice, idempotency_key="short",
        body=m.CreateResourceRequest.from_dict({"space_id": space_id, "name": "X",
                                                "unit_type": "doc"}))
    assert r.status_code == 400 and isinstance(r.parsed, m.Problem), r.content
    assert str(r.parsed.code) == "invalid_idempotency_key"
