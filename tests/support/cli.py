"""``wharf`` called in the test's own process: :func:`wharfd.cli.main` with an argv and an
environment, its exit status, stdout and stderr.

A ``wharf`` subprocess costs one to four seconds of interpreter start and imports; a test
that checks many runs of one command (its flags, outputs and exit statuses) calls
:func:`call_wharf` for them and keeps ONE real subprocess (``tests.cli.test_cli.run_wharf``)
for what only a process shows (``sys.exit(main())``, the console script, the logging set up
from nothing). What ``main`` changes in the process (the environment, the root logger's
handlers, structlog's configuration) is put back after each call.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import pytest
import structlog


@dataclass(frozen=True)
class Ran:
    """What :func:`call_wharf` saw; the field names of ``subprocess.CompletedProcess``."""
    returncode: int
    stdout: str
    stderr: str


def call_wharf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
               *args: str, env: dict[str, str]) -> Ran:
    """``wharf *args`` in this process with exactly the ``WHARF_*`` variables of ``env``
    (as ``tests.cli.test_cli.wharf_env`` builds it); an argparse usage error (its
    ``SystemExit``) is its exit status, as in a process."""
    from wharfd import cli, logs, serving
    root, access = logging.getLogger(), logging.getLogger(serving.access_log.name)
    saved = (list(root.handlers), root.level, list(access.handlers), access.propagate,
             structlog.get_config(), dict(logs._configured))
    capsys.readouterr()
    with monkeypatch.context() as m:
        for name in [k for k in os.environ if k.startswith("WHARF_")]:
            m.delenv(name)
        for name, value in env.items():
            if name.startswith("WHARF_"):
                m.setenv(name, value)
        try:
            code = cli.main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            for handler in list(root.handlers):
                root.removeHandler(handler)
            for handler in saved[0]:
                root.addHandler(handler)
            root.setLevel(saved[1])
            for handler in list(access.handlers):
                access.removeHandler(handler)
            for handler in saved[2]:
                access.addHandler(handler)
            access.propagate = saved[3]
            structlog.configure(**saved[4])
            logs._configured.clear()
            logs._configured.update(saved[5])
    out = capsys.readouterr()
    return Ran(code, out.out, out.err)
