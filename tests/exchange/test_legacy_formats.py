"""Legacy Office files imported for real through ``POST /api/imports`` (issue 38): XLS read
by python-calamine (a committed fixture, ``fixtures/ledger.xls``: see ``fixtures/README.md``),
DOC and PPT converted by the real LibreOffice (``WHARF_SOFFICE``) under the default
``WHARF_IMPORT_CONVERSION_TIMEOUT``. On the filesystem and S3 (moto over HTTP) stores.

The DOC and PPT are made once per module from the python-docx and python-pptx files of
``test_imports.py`` with the same LibreOffice (``soffice --convert-to doc|ppt``, a private
profile), so the import's DOC → DOCX and PPT → PPTX conversions must bring back what those
files held. LibreOffice is ``WHARF_TEST_SOFFICE``, else ``soffice`` on ``PATH`` (``.ci/run``
installs it); without it these tests fail under ``WHARF_TEST_REQUIRE_SERVICES=1``, else they
are skipped with the reason."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.exchange.test_imports import _env, docx_bytes, pptx_bytes
from tests.support import services
from wharf.exchange import formats

FIXTURES = Path(__file__).parent / "fixtures"
CONVERSION_SECONDS = 120  # making a test file; the imports use the setting's default


def soffice_path() -> str | None:
    configured = os.environ.get("WHARF_TEST_SOFFICE")
    if configured:
        return configured if shutil.which(configured) else None
    return shutil.which("soffice")


def require_soffice() -> str:
    """LibreOffice's ``soffice``, else the test fails (``WHARF_TEST_REQUIRE_SERVICES=1``) or
    is skipped."""
    path = soffice_path()
    configured = os.environ.get("WHARF_TEST_SOFFICE")
    services.need(None if path else (
        f"LibreOffice: WHARF_TEST_SOFFICE ({configured}) is not an executable" if configured
        else "LibreOffice: no soffice on PATH and WHARF_TEST_SOFFICE unset (install "
        "libreoffice-writer-nogui and libreoffice-impress-nogui)"))
    assert path is not None
    return path


@pytest.fixture(scope="module")
def soffice() -> str:
    return require_soffice()


def legacy_file(soffice: str, work: Path, name: str, data: bytes, target: str) -> bytes:
    """``data`` (a file called ``name``) saved by LibreOffice as ``target`` (``doc``,
    ``ppt``, ``xls``), converted in ``work`` with a private profile there."""
    (work / name).write_bytes(data)
    subprocess.run(
        [soffice, f"-env:UserInstallation={(work / 'profile').as_uri()}", "--headless",
         "--norestore", "--nologo", "--nolockcheck", "--convert-to", target,
         "--outdir", str(work / "out"), str(work / name)],
        cwd=work, env={**os.environ, "HOME": str(work)}, stdin=subprocess.DEVNULL,
        capture_output=True, timeout=CONVERSION_SECONDS, check=True)
    made = (work / "out" / Path(name).with_suffix("." + target)).read_bytes()
    # really a legacy binary format (an OLE2 compound file), not a renamed zip
    assert made.startswith(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")
    return made


@pytest.fixture(scope="module")
def legacy_files(soffice, tmp_path_factory) -> dict[str, bytes]:
    """``{"doc": …, "ppt": …}``: the DOCX and PPTX of ``test_imports`` saved by LibreOffice
    as Word 97 and PowerPoint 97 files."""
    work = tmp_path_factory.mktemp("legacy")
    return {"doc": legacy_file(soffice, work, "report.docx", docx_bytes(), "doc"),
            "ppt": legacy_file(soffice, work, "deck.pptx", pptx_bytes(), "ppt")}


@pytest.fixture(params=["file", "s3"])
def lo_env(request, soffice, settings, db, tmp_path):
    """The import wiring with ``WHARF_SOFFICE`` set to the real LibreOffice (the default
    conversion time limit)."""
    return _env(request, settings, db, tmp_path, request.param, soffice=soffice)


@pytest.fixture(params=["file", "s3"])
def store_env(request, settings, db, tmp_path):
    return _env(request, settings, db, tmp_path, request.param)


def test_xls_imports_as_a_sheet_with_values_the_formula_result_and_the_merge(store_env):
    unit = store_env.unit((FIXTURES / "ledger.xls").read_bytes(), "ledger.xls",
                          name="Ledger 1997")
    assert unit["unit_type"] == "sheet"
    body = unit["snapshot"]["body"]
    assert [body["sheets"][s]["name"] for s in body["sheetOrder"]] == ["Ledger"]
    sheet = body["sheets"][body["sheetOrder"][0]]
    text, number = formats.CellType.STRING, formats.CellType.NUMBER
    assert sheet["cellData"] == {
        "0": {"0": {"v": "Item", "t": text}, "1": {"v": "Cost", "t": text},
              "3": {"v": "merged", "t": text}},
        "1": {"0": {"v": "Paper", "t": text}, "1": {"v": 12.5, "t": number}},
        "2": {"0": {"v": "Ink", "t": text}, "1": {"v": 7, "t": number}},
        # =B2+B3: its computed value (calamine does not expose the formula itself)
        "3": {"0": {"v": "Total", "t": text}, "1": {"v": 19.5, "t": number}}}
    assert sheet["mergeData"] == [formats.merge_range(0, 3, 1, 4)]
    node = store_env.alice.get(f"/api/resources/{unit['resource_id']}").json
    assert node["node"]["name"] == "Ledger 1997"


def test_xls_by_its_content_without_an_extension(request, settings, db, tmp_path):
    e = _env(request, settings, db, tmp_path, "file")  # no LibreOffice: calamine alone
    unit = e.unit((FIXTURES / "ledger.xls").read_bytes(), "ledger")
    assert unit["unit_type"] == "sheet"


def test_doc_converts_through_libreoffice_to_paragraphs_runs_and_headings(lo_env,
                                                                         legacy_files):
    started = time.monotonic()
    unit = lo_env.unit(legacy_files["doc"], "report.doc", name="Old report")
    assert unit["unit_type"] == "doc"
    assert formats.paragraphs_of(unit["snapshot"]["body"]) == [
        ([("Report", {})], formats.NamedStyle.TITLE),
        ([("Intro", {})], formats.NamedStyle.HEADING_1),
        ([("plain ", {}), ("bold", {"bl": 1}), (" and ", {}), ("italic", {"it": 1})],
         formats.NamedStyle.NORMAL_TEXT),
        ([("Deep", {})], formats.NamedStyle.HEADING_3)]
    node = lo_env.alice.get(f"/api/resources/{unit['resource_id']}").json
    assert node["node"]["name"] == "Old report"
    print(f"DOC import on {lo_env.store.__class__.__name__}: "
          f"{time.monotonic() - started:.1f}s")


def test_ppt_converts_through_libreoffice_to_slides_with_titles_and_text(lo_env,
                                                                         legacy_files):
    started = time.monotonic()
    unit = lo_env.unit(legacy_files["ppt"], "deck.ppt")
    assert unit["unit_type"] == "slide"
    assert formats.slide_texts(unit["snapshot"]["body"]) == [
        ("Welcome", ["First point"]), ("Numbers", ["42 things"])]
    print(f"PPT import on {lo_env.store.__class__.__name__}: "
          f"{time.monotonic() - started:.1f}s")

