"""Accounts: account deletion (requested, carried out by an operation) and what it reaches;
a team space's deletion, carried out by the same purge (``wharf.accounts.tree``).
"""
from __future__ import annotations

from wharf.accounts import kinds  # noqa: F401  (registers its operation kinds)
