"""Every capability of the core, imported by each process's composition (``runtime``).

The list is ``wharf.capabilities`` (one list: the API's operation schemas import it too);
see there why every process imports every capability: their operation kinds
(``wharf.operations.registry.KINDS``) and their hook registrations.
``tests/architecture/test_hook_lists.py`` checks it in a fresh interpreter.
"""
from __future__ import annotations

import wharf.capabilities  # noqa: F401  (the import is the point: every capability registers)
