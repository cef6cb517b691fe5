"""The TypeScript client (``clients/typescript``, docs/client.md "From TypeScript") in CI.

- The committed generated file (``src/schema.ts``) is what the current OpenAPI document
  generates: ``npm run check`` (``scripts/generate.mjs --check``) passes; a document
  changed after generation (a new problem code, a new path) fails it, naming the stale
  file, and leaves the file alone.
- ``npm test``: the package type-checks (tsc, strict; the example in docs/client.md too)
  and its Node test (node:test) runs against a real ``wharf serve`` it starts on a free
  port with a temp data dir: the server serves the very document the stale check read;
  then the submitter flow: register, create a unit resource, upload (and resume) a file,
  replace it, long-poll, page listings, typed problems, a lost answer retried with the
  same Idempotency-Key.

Node and npm are needed (a skip, or a failure under WHARF_TEST_REQUIRE_SERVICES=1); the
packages come from the cache ``make test-deps`` fills (tests/support/ts_client.py).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support import services, ts_client

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _docs_example() -> str:
    """The TypeScript example of docs/client.md, importing the package's source."""
    text = (REPO / "docs" / "client.md").read_text()
    section = text.split("## From TypeScript", 1)[1]
    found = re.search(r"```ts\n(.*?)```", section, re.S)
    assert found, "docs/client.md: no ```ts example under \"From TypeScript\""
    return found.group(1).replace('from "@wharf/client"', 'from "../src/index.js"')


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=180)


def test_the_typescript_client_is_current_and_runs_the_submitter_flow(tmp_path):
    services.need(ts_client.missing())
    work = ts_client.workspace(tmp_path)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
               [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]),
           "WHARF_PYTHON": sys.executable, "WHARF_SOURCE": str(REPO),
           "WHARF_BIN": str(BIN / "wharf")}
    env.pop("WHARF_URL", None)
    schema = work / "src" / "schema.ts"
    committed = schema.read_text()
    (work / "test" / "docs-example.ts").write_text(_docs_example())

    # The document as `npm run generate` makes it; the flow checks that the server it
    # starts serves exactly this one.
    document = tmp_path / "openapi.json"
    made = _run([sys.executable, "-m", "wharfd.openapi", str(document)], REPO, env)
    assert made.returncode == 0, made.stderr
    # tsc and the flow run while the stale checks do (two cores)
    flow = subprocess.Popen(["npm", "test"], cwd=work, text=True,
                            env={**env, "WHARF_OPENAPI_DOCUMENT": str(document)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        check = _run(["node", "scripts/generate.mjs", "--check", "--document", str(document)],
                     work, env)
        assert check.returncode == 0, check.stdout + check.stderr
        assert "up to date" in check.stdout

        # A deliberately stale client: the document gained a problem code and a path.
        changed = json.loads(document.read_text())
        changed["components"]["schemas"]["ProblemCode"]["enum"].append("brand_new_code")
        changed["paths"]["/api/brand-new"] = {"get": {
            "operationId": "brandNew", "summary": "New", "tags": ["system"],
            "responses": {"204": {"description": "nothing"}}}}
        (tmp_path / "changed.json").write_text(json.dumps(changed))
        stale = _run(["node", "scripts/generate.mjs", "--check", "--document",
                      str(tmp_path / "changed.json")], work, env)
        assert stale.returncode == 1, stale.stdout + stale.stderr
        assert "src/schema.ts is stale" in stale.stderr and "npm run generate" in stale.stderr
        assert schema.read_text() == committed

        out, _ = flow.communicate(timeout=180)
    finally:
        if flow.poll() is None:
            flow.kill()
            flow.wait()
    assert flow.returncode == 0, out
    assert "# pass 3" in out and "# fail 0" in out and "# skipped 0" in out, out
