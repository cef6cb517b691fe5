"""Accounts: account deletion (requested, carried out by an operation) and what it reaches.
"""
from __future__ import annotations

from wharf.accounts import kinds  # noqa: F401  (registers its operation kind)
