"""Office exchange (issue 38): the unit formats a front end opens (:mod:`.formats`), imports
of Office files into units and exports of units to Office files, as worker jobs.

Its operation kinds register when :mod:`wharf.capabilities` imports their modules
(``export_kinds``, ``import_kinds``, ``takeout_kinds``), not when this package is
imported: the workbook reader's child process (:mod:`.readers.isolated`) imports this
package, and the kinds would bring the engine and every SQLAlchemy model into it (1.7 s
of its start under load, per import)."""
