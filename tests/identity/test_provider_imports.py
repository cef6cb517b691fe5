"""External sign-in's libraries (Authlib, joserfc, requests, cryptography's X.509) are
loaded only by a process that has a provider configured: an API process without one
starts without them (they were about 6 % of an API process's start-up imports)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
from wharf.infra.settings import Settings
from wharf.identity import providers
import api.app, wharfd.runtime  # everything an API process imports
def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in ("authlib", "joserfc", "requests")
                  or m == "cryptography.x509")
before = loaded()
env = json.loads(sys.argv[1])
found = providers.configured(Settings.from_env(env))
after = loaded()
print(json.dumps({"before": before, "providers": sorted(found), "after": bool(after)}))
"""


def probe(env: dict[str, str]) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(env)], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_no_provider_no_authlib_and_a_provider_loads_it(tmp_path):
    base = {"WHARF_DATA_DIR": str(tmp_path)}
    none = probe(base)
    assert none == {"before": [], "providers": [], "after": False}
    github = probe({**base, "WHARF_GITHUB_CLIENT_ID": "id",
                    "WHARF_GITHUB_CLIENT_SECRET": "secret"})
    assert github == {"before": [], "providers": ["github"], "after": True}
