"""Office exchange (issue 38): the unit formats a front end opens (:mod:`.formats`), imports
of Office files into units and exports of units to Office files, as worker jobs."""

# ruff: noqa: F401  (each import is the point: it registers a kind)
import wharf.exchange.export_kinds
import wharf.exchange.import_kinds
import wharf.exchange.takeout_kinds
