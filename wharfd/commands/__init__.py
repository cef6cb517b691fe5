"""The ``wharf`` command's subcommands (:mod:`wharfd.cli` parses the command line): the checks
every command makes before it starts (:mod:`.preflight`), the long-running processes
(:mod:`.processes`, :mod:`.api`), the status listings (:mod:`.status`) and the maintenance
commands (:mod:`.maintenance`). Each imports the heavy packages inside the command that
needs them, so ``wharf --help`` and a configuration error answer at once."""
