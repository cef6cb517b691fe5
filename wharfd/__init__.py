"""The composition root: the ``wharf`` command (:mod:`wharfd.cli`, its subcommands in
:mod:`wharfd.commands`), the wiring of each process shape (:mod:`wharfd.runtime`) and
gunicorn's WSGI entry (:mod:`wharfd.wsgi`).

The only package that puts ``api``, ``tasks``, ``wharf``, ``storage`` and ``migrations``
together; nothing imports it (docs/architecture.md, "Layers"; checked by ``lint-imports``).
"""
