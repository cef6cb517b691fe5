"""LibreOffice's conversions run without network (``WHARF_SOFFICE_NETWORK``): the same
wrapper the DOC/PPT import uses runs a stand-in ``soffice`` (a small Python program) that
tries to connect to a port the test listens on before it "converts": in its own network
namespace the connection fails and the import reads the output; with ``host`` the same
program connects (so the test would see it). Where the platform cannot make a namespace
(no ``unshare`` on ``PATH``), ``auto`` warns and runs it anyway, ``isolated`` refuses."""
from __future__ import annotations

import logging
import sys
from pathlib import Path

import pytest

from tests.exchange.test_hostile_packages import assert_no_connection, listener  # noqa: F401
from tests.exchange.test_import_readers import _file, _ole
from tests.exchange.test_imports import docx_bytes
from wharf.exchange import formats, importer
from wharf.exchange.import_errors import CorruptFile, UnsupportedFormat
from wharf.exchange.readers import legacy
from wharf.infra.settings import Settings

# The stand-in: checks it got a private profile directory, tries the port (exit 5 when it
# connects), then writes the prepared DOCX where LibreOffice would.
_SOFFICE = """#!{python}
import os, shutil, socket, sys
args = sys.argv[1:]
profile = next(a for a in args if a.startswith("-env:UserInstallation=file://"))
if not os.path.isdir(profile[len("-env:UserInstallation=file://"):]):
    sys.exit(3)
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    sys.exit(5)
except OSError:
    pass
outdir = args[args.index("--outdir") + 1]
shutil.copy({prepared!r}, os.path.join(outdir, "input.docx"))
"""


def _convert(tmp_path: Path, port: int, network: str, run: str):
    prepared = _file(tmp_path, "prepared.docx", docx_bytes())
    script = tmp_path / f"soffice-{run}"
    script.write_text(_SOFFICE.format(python=sys.executable, port=port, prepared=str(prepared)))
    script.chmod(0o755)
    work = tmp_path / f"work-{run}"
    work.mkdir()
    settings = Settings.from_env({"WHARF_SOFFICE": str(script),
                                  "WHARF_SOFFICE_NETWORK": network})
    return importer.convert(_file(work, "source", _ole("WordDocument")), "old.doc", "Old",
                            settings, work)


def test_libreoffice_runs_without_network(tmp_path, listener, monkeypatch,  # noqa: F811
                                          caplog):
    base, sock = listener
    port = int(base.rsplit(":", 1)[1])
    # its own namespace (this platform allows one: CI and the dev machine run as root or
    # with unprivileged user namespaces): the connection fails, the conversion goes on
    assert legacy.confined(["x"], "auto")[0].endswith("unshare")
    unit_type, document = _convert(tmp_path, port, "auto", "auto")
    assert unit_type == "doc"
    assert formats.paragraphs_of(document["body"])[0][0] == [("Report", {})]
    _convert(tmp_path, port, "isolated", "isolated")
    assert_no_connection(sock)

    # with the host's network the same program connects: the test can tell
    with pytest.raises(CorruptFile, match="exit 5"):
        _convert(tmp_path, port, "host", "host")
    conn, _ = sock.accept()
    conn.close()

    # a platform without namespaces: auto warns (once) and runs with the network,
    # isolated refuses before anything runs
    monkeypatch.setattr(legacy, "_probed", [])
    monkeypatch.setattr(legacy, "_warned", [])
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(UnsupportedFormat, match="WHARF_SOFFICE_NETWORK=isolated"):
        _convert(tmp_path, port, "isolated", "refused")
    assert_no_connection(sock)
    with caplog.at_level(logging.WARNING, logger="wharf.exchange.legacy"), \
            pytest.raises(CorruptFile, match="exit 5"):
        _convert(tmp_path, port, "auto", "fallback")
    assert "host's network" in caplog.text
    sock.accept()[0].close()
