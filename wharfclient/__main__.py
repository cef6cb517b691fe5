"""``python -m wharfclient``: the same as ``wharf-client``."""
from wharfclient.cli import main

raise SystemExit(main())
