"""Legacy DOC and PPT through LibreOffice headless (``WHARF_SOFFICE``): converted to DOCX
or PPTX in a private temporary directory (its own profile, ``-env:UserInstallation``, so
jobs never share or corrupt one), under a time limit (the whole process group is killed
past it), without network (a network namespace of its own, ``WHARF_SOFFICE_NETWORK``:
:func:`confined`), then read as those. Without ``WHARF_SOFFICE`` such an import fails
with ``unsupported_format``. LibreOffice's conversion does not update links or run macros
(headless, ``--norestore``, a fresh profile with macro security at its default)."""
from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Final

from wharf.exchange.import_errors import ConversionTimeout, CorruptFile, UnsupportedFormat

TARGET: Final = {"doc": "docx", "ppt": "pptx"}
log = logging.getLogger("wharf.exchange.legacy")
# ``unshare`` (util-linux) execs the command in new namespaces: as root a network
# namespace is enough; otherwise an unprivileged user namespace maps the caller to root
# in it (kernels that allow unprivileged user namespaces). The new namespace has only a
# loopback interface, down: no connection anywhere, 127.0.0.1 included.
_UNSHARES: Final = (("--net",), ("--net", "--map-root-user"))
_PROBE_TIMEOUT: Final = 10.0
_probed: list[tuple[str, ...]] = []  # the prefix found, once per process ([()]: none)
_probe_lock = threading.Lock()
_warned: list[bool] = []


def _network_prefix() -> tuple[str, ...]:
    """The command prefix that runs a program without network here, probed once per
    process (``()`` when the platform allows none: no ``unshare``, or namespaces denied
    as in most containers without ``CAP_SYS_ADMIN``)."""
    with _probe_lock:
        if not _probed:
            _probed.append(_probe())
        return _probed[0]


def _probe() -> tuple[str, ...]:
    unshare, true = shutil.which("unshare"), shutil.which("true")
    if unshare is None or true is None:
        return ()
    for flags in _UNSHARES:
        if flags == ("--net",) and os.geteuid() != 0:
            continue
        try:
            done = subprocess.run([unshare, *flags, true], stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=_PROBE_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return (unshare, *flags)
    return ()


def confined(cmd: list[str], network: str) -> list[str]:
    """``cmd`` run without network as ``network`` (``WHARF_SOFFICE_NETWORK``) asks:
    ``auto``, in a network namespace of its own when the platform allows it (else as it
    is, with a logged warning); ``isolated``, in one or not at all
    (``unsupported_format``); ``host``, as it is."""
    if network == "host":
        return cmd
    prefix = _network_prefix()
    if prefix:
        return [*prefix, *cmd]
    if network == "isolated":
        raise UnsupportedFormat(
            "LibreOffice must run without network (WHARF_SOFFICE_NETWORK=isolated) and this "
            "server cannot make it a network namespace (unshare --net)",
            details={"reason": "network"})
    if not _warned:  # once per process: the platform does not change
        _warned.append(True)
        log.warning("LibreOffice runs with the host's network: this server cannot make it a "
                    "network namespace (unshare --net); set WHARF_SOFFICE_NETWORK=host to "
                    "accept that, or isolated to refuse DOC/PPT imports instead")
    return cmd


def convert(soffice: str, source: Path, fmt: str, timeout: float, workdir: Path,
            network: str = "auto") -> Path:
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
    cmd = [shutil.which(soffice) or soffice, f"-env:UserInstallation={profile.as_uri()}",
           "--headless", "--invisible", "--nologo", "--nodefault", "--norestore",
           "--nolockcheck", "--convert-to", TARGET[fmt], "--outdir", str(out), str(named)]
    proc = subprocess.Popen(confined(cmd, network), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, cwd=workdir, start_new_session=True)
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
