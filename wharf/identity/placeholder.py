"""The deleted-account placeholder: the user row that owns what others keep of a deleted
account's rows (``wharf.accounts.purge`` creates and fills it); readers that find an
author whose account is gone show it instead."""
from __future__ import annotations

PLACEHOLDER_ID = "0" * 32
PLACEHOLDER_NAME = "~deleted"  # outside USERNAME_PATTERN: nobody registers or logs in as it
