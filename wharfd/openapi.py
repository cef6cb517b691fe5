"""``python -m wharfd.openapi [FILE]``: write the OpenAPI 3.1 document that ``wharf serve``
serves at ``/api/openapi.json``, without starting a server (stdout without ``FILE``).

The app is wired as ``wharf serve`` wires it (every capability mounted), from the default
settings in a throw-away data directory: the ``WHARF_*`` variables of the caller's
environment are ignored, so the document is the same on every machine. Generated clients
are built from it (``clients/typescript``: ``npm run generate``).
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any


def build() -> dict[str, Any]:
    """The document of an embedded server with default settings."""
    from api import contract
    from wharf.infra.settings import Settings
    from wharfd.runtime import Components

    with tempfile.TemporaryDirectory(prefix="wharf-openapi-") as data_dir:
        components = Components(Settings.from_env({"WHARF_DATA_DIR": data_dir}))
        try:
            return contract.document(components.api_app())
        finally:
            components.close()


def render(document: dict[str, Any]) -> str:
    """The document as written: indented JSON, key order kept, one final newline."""
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0].startswith("-")):
        print("usage: python -m wharfd.openapi [FILE]", file=sys.stderr)
        return 2
    text = render(build())
    if args:
        Path(args[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
