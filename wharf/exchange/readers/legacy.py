"""Legacy DOC and PPT through LibreOffice headless (``WHARF_SOFFICE``): converted to DOCX
or PPTX in a private temporary directory (its own profile, ``-env:UserInstallation``, so
jobs never share or corrupt one), under a time limit (the whole process group is killed
past it), then read as those. Without ``WHARF_SOFFICE`` such an import fails with
``unsupported_format``. LibreOffice's conversion does not update links or run macros
(headless, ``--norestore``, a fresh profile with macro security at its default)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Final

from wharf.exchange.import_errors import ConversionTimeout, CorruptFile, UnsupportedFormat

TARGET: Final = {"doc": "docx", "ppt": "pptx"}


def convert(soffice: str, source: Path, fmt: str, timeout: float, workdir: Path) -> Path:
    """``source`` (a DOC or PPT) converted to DOCX or PPTX in ``workdir``; its path."""
    if not soffice:
        raise UnsupportedFormat(
            f"{fmt.upper()} files are imported through LibreOffice, which is not configured "
            "on this server (WHARF_SOFFICE); save the file as "
            f"{TARGET[fmt].upper()} and import that", details={"format": fmt})
    if shutil.which(soffice) is None:
        raise UnsupportedFormat(f"WHARF_SOFFICE ({soffice}) is not an executable",
                                details={"format": fmt})
    profile = Path(tempfile.mkdtemp(prefix="profile-", dir=workdir))
    out = Path(tempfile.mkdtemp(prefix="out-", dir=workdir))
    named = workdir / f"input.{fmt}"  # LibreOffice names its output after its input
    source.replace(named)
    env = {"HOME": str(profile), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "TMPDIR": str(workdir), "LANG": "C.UTF-8", "SAL_USE_VCLPLUGIN": "svp"}
    cmd = [soffice, f"-env:UserInstallation={profile.as_uri()}", "--headless", "--invisible",
           "--nologo", "--nodefault", "--norestore", "--nolockcheck", "--convert-to",
           TARGET[fmt], "--outdir", str(out), str(named)]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, cwd=workdir,
                            start_new_session=True)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise ConversionTimeout(f"the {fmt.upper()} conversion took longer than "
                                f"{timeout:g} s") from None
    finally:
        if proc.poll() is None:  # pragma: no cover (interrupted)
            os.killpg(proc.pid, signal.SIGKILL)
    result = out / f"input.{TARGET[fmt]}"
    if proc.returncode != 0 or not result.is_file():
        raise CorruptFile(f"LibreOffice could not convert the {fmt.upper()} file "
                          f"(exit {proc.returncode})")
    return result


def kill_leftovers(workdir: Path) -> int:
    """SIGKILL every process still running with ``workdir`` in its command line: the
    LibreOffice (``oosplash``, ``soffice.bin``) of an attempt whose worker was killed.
    It runs in a session of its own, so it outlives the worker, and with the worker gone
    nothing enforces its time limit any more (a hostile file could keep it converting for
    ever). Returns how many; nothing where there is no ``/proc``."""
    needle = os.fsencode(str(workdir) + os.sep)  # its files: not a longer name's
    killed = 0
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:
        return 0
    for entry in entries:
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if needle not in f.read():
                    continue
            os.kill(int(entry), signal.SIGKILL)
            killed += 1
        except (OSError, ProcessLookupError):
            continue
    return killed
