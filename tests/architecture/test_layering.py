"""The layer rules (docs/architecture.md, "Layers"), checked by import-linter's contracts in
pyproject.toml ``[tool.importlinter]``: the real tree keeps every contract, and each rule
breaks its contract when one forbidden import is added to a copy of the tree.

    wharfd -> (api | tasks) -> wharf -> storage;  migrations: from wharfd only, on storage only
    inside wharf: capabilities (layered, siblings independent) -> operations -> observability
    -> infra
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("wharfd", "api", "tasks", "wharf", "storage", "migrations", "wharfclient")
CONTRACTS = {  # id -> name, as in pyproject.toml
    "layers": "Layers: wharfd -> (api | tasks) -> wharf -> storage; nothing imports wharfd",
    "core-layers": "Core: capabilities -> operations engine -> observability -> infrastructure",
    "migrations-from-composition": "Only the composition root (wharfd) runs the migrations",
    "migrations-on-storage": "Migrations build on storage alone",
    "client-http-only": "The client talks HTTP only: no server package",
}
LINT = ("import sys; from importlinter.cli import lint_imports_command; "
        "sys.exit(lint_imports_command())")


def lint_imports(root: Path, *contracts: str) -> tuple[int, dict[str, str], str]:
    """Run ``lint-imports`` on the tree at ``root`` (its packages first on the path), on
    the given contracts (ids; default all); returns the exit status, each contract's
    verdict by name (KEPT/BROKEN) and the report."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    only = [arg for cid in contracts for arg in ("--contract", cid)]
    proc = subprocess.run([sys.executable, "-c", LINT, "--no-cache", "--no-logo", *only],
                          cwd=root, env=env, capture_output=True, text=True, timeout=120)
    report = proc.stdout + proc.stderr
    verdicts = dict(re.findall(r"^(.+?) (KEPT|BROKEN)$", report, re.M))
    return proc.returncode, verdicts, report


def test_the_tree_keeps_every_layer_contract():
    status, verdicts, report = lint_imports(REPO)
    assert status == 0, report
    assert verdicts == {name: "KEPT" for name in CONTRACTS.values()}, report


# (rule, module the import is added to, imported module, the contract that must break)
FORBIDDEN = [
    ("storage imports nothing of the core", "storage/db.py", "wharf.infra.errors", "layers"),
    ("storage imports nothing of api", "storage/blobstore/interface.py", "api.errors", "layers"),
    ("storage imports nothing of tasks", "storage/models/base.py", "tasks.loops", "layers"),
    ("the core imports nothing of api", "wharf/spaces/access.py", "api.app", "layers"),
    ("the core imports nothing of tasks", "wharf/deletion/service.py", "tasks.dispatch", "layers"),
    ("the core imports nothing of the composition root", "wharf/spaces/nodes.py", "wharfd.runtime",
     "layers"),
    ("api does not import tasks", "api/app.py", "tasks.actors", "layers"),
    ("tasks does not import api", "tasks/dispatch.py", "api.errors", "layers"),
    ("nothing imports the composition root", "tasks/worker.py", "wharfd.runtime", "layers"),
    ("the operations engine knows no capability", "wharf/operations/finish.py",
     "wharf.webhooks.service", "core-layers"),
    ("infrastructure knows no capability", "wharf/infra/audit.py", "wharf.spaces.access",
     "core-layers"),
    ("the engine's registry is filled, not filling", "wharf/operations/registry.py",
     "wharf.capabilities", "core-layers"),
    ("a capability imports not the list of every capability", "wharf/blobs/kinds.py",
     "wharf.capabilities", "core-layers"),
    ("observability knows not the engine", "wharf/observability/metrics.py",
     "wharf.operations.kinds", "core-layers"),
    ("a purge names no capability that reacts to it", "wharf/trash/service.py",
     "wharf.issues.labels", "core-layers"),
    ("a worktree's drop names not assets", "wharf/worktrees/handlers.py",
     "wharf.assets.lifecycle", "core-layers"),
    ("sibling capabilities are independent", "wharf/blobs/ingest.py", "wharf.worktrees.access",
     "core-layers"),
    ("api does not run migrations", "api/app.py", "migrations.prepare",
     "migrations-from-composition"),
    ("tasks does not run migrations", "tasks/scheduler.py", "migrations.prepare",
     "migrations-from-composition"),
    ("the core does not run migrations", "wharf/infra/settings.py", "migrations.prepare",
     "migrations-from-composition"),
    ("storage does not run migrations", "storage/unitstore.py", "migrations.prepare",
     "migrations-from-composition"),
    ("migrations do not import the core", "migrations/prepare.py", "wharf.infra.clock",
     "migrations-on-storage"),
    ("migrations do not import the composition root", "migrations/env.py", "wharfd.cli",
     "migrations-on-storage"),
    ("the client imports nothing of the core", "wharfclient/http.py", "wharf.infra.errors",
     "client-http-only"),
    ("the client imports nothing of api", "wharfclient/cli.py", "api.app",
     "client-http-only"),
    ("the client imports nothing of storage", "wharfclient/transfer.py", "storage.enums",
     "client-http-only"),
]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the packages and the contracts."""
    for package in PACKAGES:
        shutil.copytree(REPO / package, tmp_path / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize("rule, module, imported, contract", FORBIDDEN,
                         ids=[rule for rule, *_ in FORBIDDEN])
@pytest.mark.parametrize("where", ["module", "function"])
def test_a_forbidden_import_breaks_its_contract(tree, rule, module, imported, contract, where):
    """One import added (at module level, or inside a function: import-linter sees those
    too) breaks the contract of that rule, and the report names it. (Checked contract by
    contract: the same import may break another rule too, through an indirect chain.)"""
    injected = (f"\nimport {imported}  # added by tests/architecture/test_layering.py\n"
                if where == "module" else
                f"\n\ndef _added_by_test_layering() -> None:\n    import {imported}\n")
    with open(tree / module, "a", encoding="utf-8") as fh:
        fh.write(injected)
    status, verdicts, report = lint_imports(tree, contract)
    assert status == 1, report
    assert verdicts == {CONTRACTS[contract]: "BROKEN"}, report
    importer = module.removesuffix(".py").replace("/", ".")
    assert f"{importer} -> {imported}" in report, report


def test_the_command_line_imports_the_layers_inside_the_commands():
    """``wharf --help`` and a configuration error answer without a second of imports:
    wharfd.cli imports SQLAlchemy, Falcon, Dramatiq, Alembic, boto3 (and the packages built
    on them) inside the command that needs them."""
    heavy = ("sqlalchemy", "falcon", "dramatiq", "alembic", "boto3", "prometheus_client",
             "api", "tasks", "migrations", "storage", "wharfd.runtime")
    probe = (f"import sys, wharfd.cli; "
             f"print(','.join(m for m in {heavy!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=REPO, capture_output=True,
                         text=True, timeout=60, check=True).stdout.strip()
    assert out == ""
