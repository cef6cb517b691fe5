"""One unit-of-work convention (docs/architecture.md, "Life of a request"): the core's
service functions own the transaction of a synchronous request (they take the
``Database`` and open ``db.read()`` / ``db.write()`` themselves); the API translates HTTP to
a service call and back. So a converted API module imports no ORM model
(``storage.models``), no SQLAlchemy, and opens no transaction.

``CONVERTED`` lists the modules held to it; a module joins the list once its endpoints
call services that own their transactions (when every module of ``api/`` is on it, the
list can become "every module")."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

API = Path(__file__).resolve().parents[2] / "api"

CONVERTED = (
    "app.py",
    "serialize.py",
    "resources/assets.py",
    "resources/blobs.py",
    "resources/dashboard.py",
    "resources/identity.py",
    "resources/imports.py",
    "resources/issues.py",
    "resources/operations.py",
    "resources/recent.py",
    "resources/search.py",
    "resources/sharing.py",
    "resources/space_lifecycle.py",
    "resources/spaces.py",
    "resources/system.py",
    "resources/trash.py",
    "resources/units.py",
    "resources/webhooks.py",
    "resources/worktrees.py",
    "schemas/assets.py",
    "schemas/blobs.py",
    "schemas/dashboard.py",
    "schemas/identity.py",
    "schemas/imports.py",
    "schemas/issues.py",
    "schemas/recent.py",
    "schemas/search.py",
    "schemas/sharing.py",
    "schemas/spaces.py",
    "schemas/system.py",
    "schemas/trash.py",
    "schemas/webhooks.py",
)
FORBIDDEN_MODULES = ("storage.models", "sqlalchemy")
TRANSACTIONS = ("read", "write", "unbundled")


def _forbidden(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in FORBIDDEN_MODULES)


def violations(source: str) -> list[str]:
    """What ``source`` does that a converted API module must not: import an ORM model or
    SQLAlchemy, or open a transaction (``<...>db.read()``, ``.write()``, ``.unbundled()``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names
                      if _forbidden(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            if any(_forbidden(n) for n in names):
                found.append(f"line {node.lineno}: from {node.module} import ...")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in TRANSACTIONS):
            owner = node.func.value
            name = owner.attr if isinstance(owner, ast.Attribute) else \
                owner.id if isinstance(owner, ast.Name) else ""
            if name == "db" or name.endswith("_db"):
                found.append(f"line {node.lineno}: {name}.{node.func.attr}()")
    return found


@pytest.mark.parametrize("path", CONVERTED)
def test_a_converted_api_module_imports_no_model_and_opens_no_transaction(path):
    assert violations((API / path).read_text()) == []


def test_the_check_finds_each_violation():
    """The check can fail: each forbidden form is reported."""
    source = ("from storage.models import User\n"
              "from storage import models\n"
              "import sqlalchemy.orm\n"
              "def f(self):\n"
              "    with self.db.write() as s:\n"
              "        pass\n"
              "    with db.read() as s:\n"
              "        pass\n")
    assert violations(source) == ["line 1: from storage.models import ...",
                                  "line 2: from storage import ...",
                                  "line 3: import sqlalchemy.orm",
                                  "line 5: db.write()", "line 7: db.read()"]
    assert violations("from storage.db import Database\nx = self.cache.read()\n") == []
