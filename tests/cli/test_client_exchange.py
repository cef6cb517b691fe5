"""``wharf-client import``, ``export`` and ``takeout`` against a real ``wharf serve``
process (embedded mode: SQLite, files, in-process workers), over real TCP.

- An XLSX and a CSV imported end to end (the bytes PUT into an upload session,
  ``POST /api/imports`` from that session, wait): the new units read back through the
  API hold the file's sheets and values, the node is in the folder asked for, no blob
  resource is made and nothing goes to the trash (the session ends ``imported``), a
  ``--no-wait`` import finishes the same way, and a ``--resume`` rerun replays the same
  import instead of making a second one.
- A sheet unit exported to XLSX (opened with python-calamine) and to CSV (one sheet,
  chosen by name; opened with ``csv``): the files hold the unit's values and hash to the
  result's SHA-256; an existing file is kept without ``--force``; a download cut midway
  resumes with a ranged request.
- A PDF, and an XLSX asked to be a doc, fail the import with ``unsupported_format``: exit
  1, one error line with the code and message, nothing left in the tree.
- ``--json`` prints one document of the documented shape.
- ``takeout`` runs once the server mounts ``POST /api/me/exports`` (skipped while the
  route answers 404).
- docs/exchange.md's run walkthrough (curl, then wharf-client), as printed, runs against
  a fresh ``wharf serve`` with its defaults.
"""
from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.api.test_client import _DownwardCut
from tests.cli.test_cli import Running, wharf_env
from tests.processes.test_serving import User
from tests.support.waiting import free_port

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
CLIENT = [sys.executable, "-m", "wharfclient"]
IMPORT_KEYS = {"upload_session_id", "operation"}


def run(args, *, url: str, token: str, cwd: Path | None = None, timeout: float = 120):
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
    env.update(WHARF_URL=url, WHARF_TOKEN=token, WHARF_CLIENT_CONFIG="/nonexistent")
    return subprocess.run([*CLIENT, *args], env=env, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL, cwd=cwd)


def client(wharf):
    server, _user, token = wharf
    url = f"http://127.0.0.1:{server.port}"
    return lambda *args, **kw: run(list(args), url=url, token=token, **kw)


def workbook(path: Path) -> Path:
    import xlsxwriter
    wb = xlsxwriter.Workbook(str(path))
    q3 = wb.add_worksheet("Q3")
    q3.write_row(0, 0, ["Item", "Cost", "Paid"])
    q3.write_row(1, 0, ["Rent", 1200, True])
    q3.write_row(2, 0, ["Food", 300.5, False])
    wb.add_worksheet("Notes").write(0, 0, "hello, sheet two")
    wb.close()
    return path


def folder(user: User, name: str) -> str:
    status, _, node = user.call("POST", "/api/nodes", {"space_id": user.space_id,
                                                       "name": name})
    assert status == 201, node
    return node["id"]


def children(user: User, node_id: str) -> list[dict]:
    status, _, page = user.call("GET", f"/api/nodes/{node_id}/children")
    assert status == 200, page
    return page["items"]


def unit_body(user: User, unit_id: str) -> dict:
    status, _, unit = user.call("GET", f"/api/units/{unit_id}")
    assert status == 200, unit
    assert unit["unit_type"] == "sheet"
    return unit["snapshot"]["body"]


def rows(sheet: dict) -> list[list]:
    """The sheet's cell values as rows (a missing cell as None)."""
    data = sheet["cellData"]
    width = 1 + max(int(c) for row in data.values() for c in row)
    return [[data[str(r)].get(str(c), {}).get("v") for c in range(width)]
            for r in range(1 + max(int(r) for r in data))]


def trashed_roots(user: User) -> set[str]:
    status, _, page = user.call("GET", f"/api/spaces/{user.space_id}/trash?limit=100")
    assert status == 200, page
    return {b["root_node_id"] for b in page["items"]}


def import_xlsx(wharf, tmp_path: Path, *extra: str) -> dict:
    _server, user, _token = wharf
    r = client(wharf)("import", str(workbook(tmp_path / "budget.xlsx")), "--space",
                      user.space_id, "--json", *extra)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


# --- import ------------------------------------------------------------------------------------

def test_import_xlsx_into_a_folder_then_read_the_unit_back(wharf, tmp_path):
    _server, user, _token = wharf
    target = folder(user, "Imports")
    out = import_xlsx(wharf, tmp_path, "--parent", target, "--name", "Q3 budget")
    assert set(out) == IMPORT_KEYS
    op = out["operation"]
    assert (op["kind"], op["status"], op["done"]) == ("import_file", "completed", True)
    assert set(op["result"]) == {"node_id", "resource_id", "unit_id"}
    body = unit_body(user, op["result"]["unit_id"])
    assert [body["sheets"][s]["name"] for s in body["sheetOrder"]] == ["Q3", "Notes"]
    q3, notes = (body["sheets"][s] for s in body["sheetOrder"])
    assert rows(q3) == [["Item", "Cost", "Paid"], ["Rent", 1200, True], ["Food", 300.5, False]]
    assert rows(notes) == [["hello, sheet two"]]
    # the unit's node is alone in the folder: no blob resource, nothing in the trash
    listed = children(user, target)
    assert [(n["id"], n["name"]) for n in listed] == [(op["result"]["node_id"], "Q3 budget")]
    assert trashed_roots(user) == set()
    status, _, session = user.call("GET",
                                   f"/api/blob-upload-sessions/{out['upload_session_id']}")
    assert status == 200 and session["state"] == "imported", session


def test_import_csv_prints_the_ids_and_a_resumed_rerun_replays_the_same_import(wharf,
                                                                            tmp_path):
    _server, user, _token = wharf
    cli = client(wharf)
    src = tmp_path / "people.csv"
    src.write_text("name,age,city\nAda,36,London\nAlan,41,Wilmslow\n", encoding="utf-8")
    r = cli("import", str(src), "--space", user.space_id)
    assert r.returncode == 0, r.stderr
    fields = r.stdout.split()
    assert fields[1] == "completed" and len(r.stdout.strip().splitlines()) == 1
    ids = dict(zip(fields[2::2], fields[3::2], strict=True))
    assert set(ids) == {"unit", "resource", "node"}
    body = unit_body(user, ids["unit"])
    (sheet,) = body["sheets"].values()
    assert sheet["name"] == "people"
    assert rows(sheet) == [["name", "age", "city"], ["Ada", 36, "London"],
                           ["Alan", 41, "Wilmslow"]]
    status, _, resource = user.call("GET", f"/api/resources/{ids['resource']}")
    assert status == 200, resource
    # stderr named the upload session: a rerun with --resume replays, imports nothing new
    session = r.stderr.split("upload session ", 1)[1].split()[0]
    again = cli("import", str(src), "--space", user.space_id, "--resume", session, "--json")
    assert again.returncode == 0, again.stderr
    replay = json.loads(again.stdout)["operation"]
    assert replay["id"] == fields[0] and replay["result"]["unit_id"] == ids["unit"]
    assert [n["name"] for n in _roots(user)].count("people") == 1
    # ... and a rerun that asks for something else is refused, saying why
    other = cli("import", str(src), "--space", user.space_id, "--resume", session,
                "--name", "Someone else")
    assert other.returncode == 3
    assert "already imported with other options" in other.stderr
    assert other.stderr.strip().endswith("(idempotency_key_reused)")


def _roots(user: User) -> list[dict]:
    status, _, page = user.call("GET", f"/api/spaces/{user.space_id}/nodes?limit=200")
    assert status == 200, page
    return page["items"]


def test_no_wait_prints_the_operation_and_the_import_finishes(wharf, tmp_path):
    _server, user, _token = wharf
    r = client(wharf)("import", str(workbook(tmp_path / "budget.xlsx")), "--space",
                      user.space_id, "--name", "Later", "--no-wait", "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == IMPORT_KEYS and out["operation"]["kind"] == "import_file"
    waited = client(wharf)("wait", out["operation"]["id"], "--json")
    assert waited.returncode == 0, waited.stderr
    assert json.loads(waited.stdout)[0]["status"] == "completed"
    status, _, session = user.call("GET",
                                   f"/api/blob-upload-sessions/{out['upload_session_id']}")
    assert status == 200 and session["state"] == "imported", session
    assert trashed_roots(user) == set()


@pytest.mark.parametrize(("make", "extra", "message"), [
    (lambda d: _write(d / "paper.pdf", b"%PDF-1.7\n\x00\x01\x02\x03 binary"), (),
     "'paper.pdf' is not a spreadsheet, document or presentation"),
    (lambda d: workbook(d / "sheet.xlsx"), ("--type", "doc"), "not a doc"),
], ids=["pdf", "xlsx-as-doc"])
def test_a_failing_import_exits_1_with_its_code_and_message(wharf, tmp_path, make, extra,
                                                           message):
    _server, user, _token = wharf
    src = make(tmp_path)
    before = {n["id"] for n in _roots(user)}
    r = client(wharf)("import", str(src), "--space", user.space_id, *extra)
    assert r.returncode == 1, (r.stdout, r.stderr)
    op_id, status, code = r.stdout.split()[:3]
    assert (status, code) == ("failed", "unsupported_format:")
    errors = [ln for ln in r.stderr.splitlines() if "import failed" in ln]
    assert len(errors) == 1, r.stderr
    assert errors[0].startswith("wharf-client: import failed: ")
    assert errors[0].endswith("(unsupported_format)") and message in errors[0], errors[0]
    assert "Traceback" not in r.stderr
    # nothing is left in the tree (no unit, no blob) nor in the trash
    assert {n["id"] for n in _roots(user)} == before
    assert trashed_roots(user) == set()
    status, _, op = user.call("GET", f"/api/operations/{op_id}")
    assert op["error"]["code"] == "unsupported_format"
    again = client(wharf)("wait", op_id, "--json")
    assert again.returncode == 1


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# --- export ------------------------------------------------------------------------------------

def test_export_a_sheet_to_xlsx_and_csv_and_open_the_files(wharf, tmp_path):
    from python_calamine import CalamineWorkbook
    unit_id = import_xlsx(wharf, tmp_path, "--name", "Q3 budget")["operation"]["result"][
        "unit_id"]
    cli = client(wharf)
    xlsx = tmp_path / "out" / "budget-copy.xlsx"
    xlsx.parent.mkdir()
    r = cli("export", unit_id, "--format", "xlsx", "-o", str(xlsx), "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert set(got) == {"operation", "path", "size", "sha256", "resumed_from"}
    result = got["operation"]["result"]
    assert set(result) == {"export_id", "content_url", "size", "sha256", "expires_at"}
    assert got["path"] == str(xlsx) and got["resumed_from"] == 0
    assert (got["size"], got["sha256"]) == (result["size"], result["sha256"])
    assert hashlib.sha256(xlsx.read_bytes()).hexdigest() == result["sha256"]
    assert xlsx.stat().st_size == result["size"]
    assert not list(xlsx.parent.glob("*.part*"))
    book = CalamineWorkbook.from_path(str(xlsx))
    assert book.sheet_names == ["Q3", "Notes"]
    assert book.get_sheet_by_name("Q3").to_python() == [
        ["Item", "Cost", "Paid"], ["Rent", 1200, True], ["Food", 300.5, False]]
    assert book.get_sheet_by_name("Notes").to_python() == [["hello, sheet two"]]

    # CSV of the second sheet, into a directory: the server's file name, printed alone
    r = cli("export", unit_id, "--format", "csv", "--sheet", "Notes", "-o",
            str(xlsx.parent))
    assert r.returncode == 0, r.stderr
    path = Path(r.stdout.strip())
    assert path == xlsx.parent / "Q3 budget.csv"
    with path.open(newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == [["hello, sheet two"]]
    # no -o: the server's file name in the current directory; the first sheet by default
    work = tmp_path / "here"
    work.mkdir()
    r = cli("export", unit_id, "--format", "csv", "-q", cwd=work)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Q3 budget.csv"
    with (work / "Q3 budget.csv").open(newline="", encoding="utf-8") as f:
        assert list(csv.reader(f)) == [["Item", "Cost", "Paid"], ["Rent", "1200", "TRUE"],
                                       ["Food", "300.5", "FALSE"]]
    # an existing file is kept without --force (exit 2), replaced with it
    r = cli("export", unit_id, "--format", "csv", "--sheet", "Notes", cwd=work)
    assert r.returncode == 2
    assert "Q3 budget.csv exists; pass --force to overwrite it" in r.stderr
    assert (work / "Q3 budget.csv").read_text(encoding="utf-8").startswith("Item,")
    r = cli("export", unit_id, "--format", "csv", "--sheet", "Notes", "--force", cwd=work)
    assert r.returncode == 0, r.stderr
    assert (work / "Q3 budget.csv").read_text(encoding="utf-8").startswith('"hello')
    # --no-wait prints the operation; `fetch` waits for it and downloads the file later
    r = cli("export", unit_id, "--format", "xlsx", "--no-wait", "--json")
    assert r.returncode == 0, r.stderr
    submitted = json.loads(r.stdout)
    assert submitted["path"] is None and submitted["operation"]["kind"] == "export_unit"
    r = cli("fetch", submitted["operation"]["id"], "-o", str(work))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(work / "Q3 budget.xlsx")
    assert CalamineWorkbook.from_path(r.stdout.strip()).sheet_names == ["Q3", "Notes"]


def test_export_errors_exit_with_the_clients_codes(wharf, tmp_path):
    unit_id = import_xlsx(wharf, tmp_path)["operation"]["result"]["unit_id"]
    cli = client(wharf)
    r = cli("export", unit_id, "--format", "csv", "--sheet", "Nope", "-o",
            str(tmp_path / "x.csv"))
    assert r.returncode == 1, r.stderr  # the operation failed
    assert r.stdout.split()[1:3] == ["failed", "validation_failed:"]
    assert r.stderr.strip().splitlines()[-1] == \
        "wharf-client: export failed: no sheet 'Nope' (validation_failed)"
    assert not (tmp_path / "x.csv").exists()
    r = cli("export", unit_id, "--format", "docx")  # refused at submission
    assert r.returncode == 3 and r.stderr.strip().endswith("(validation_failed)")
    r = cli("export", uuid.uuid4().hex, "--format", "xlsx")
    assert r.returncode == 3 and r.stderr.strip().endswith("(not_found)")
    r = cli("export", unit_id, "--format", "xlsx", "--sheet", "Q3")
    assert r.returncode == 2 and "--sheet is for --format csv" in r.stderr


def test_an_export_download_cut_midway_resumes_with_a_range(wharf, tmp_path):
    server, user, token = wharf
    src = tmp_path / "big.csv"
    with src.open("w", encoding="utf-8") as f:
        f.write("id,label,amount\n")
        for i in range(80_000):
            f.write(f"{i},row number {i:07d} of the export,{i * 7}\n")
    r = client(wharf)("import", str(src), "--space", user.space_id, "--json")
    assert r.returncode == 0, r.stderr
    unit_id = json.loads(r.stdout)["operation"]["result"]["unit_id"]
    out = tmp_path / "big-copy.csv"
    proxy = _DownwardCut(server.port, cut_after=int(1.5 * 1024 * 1024))
    try:
        r = run(["export", unit_id, "--format", "csv", "-o", str(out), "--json"],
                url=f"http://127.0.0.1:{proxy.port}", token=token)
    finally:
        proxy.close()
    assert proxy.cut, "the proxy never cut the connection"
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["size"] > 3 * 1024 * 1024
    with out.open(newline="", encoding="utf-8") as f:
        exported = list(csv.reader(f))
    with src.open(newline="", encoding="utf-8") as f:
        assert exported == list(csv.reader(f))
    assert hashlib.sha256(out.read_bytes()).hexdigest() == got["sha256"]
    export_id = got["operation"]["result"]["export_id"]
    log = server.output()
    assert f"GET /api/exports/{export_id}/content 206" in log, log[-2000:]

    # across runs: `fetch OPERATION` cut with --retries 0 keeps the .part, a rerun resumes it
    again = tmp_path / "again.csv"
    proxy = _DownwardCut(server.port, cut_after=int(1.5 * 1024 * 1024))
    try:
        r = run(["fetch", got["operation"]["id"], "-o", str(again), "--retries", "0"],
                url=f"http://127.0.0.1:{proxy.port}", token=token)
    finally:
        proxy.close()
    assert r.returncode == 3, r.stderr
    kept = (tmp_path / "again.csv.part").stat().st_size
    assert 0 < kept < got["size"] and not again.exists()
    r = run(["fetch", got["operation"]["id"], "-o", str(again), "--json"],
            url=f"http://127.0.0.1:{server.port}", token=token)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["resumed_from"] == kept
    assert again.read_bytes() == out.read_bytes()
    assert not (tmp_path / "again.csv.part").exists()
    # an operation that is not an export has nothing to fetch: a usage error
    r = run(["fetch", _import_op(user)],
            url=f"http://127.0.0.1:{server.port}", token=token)
    assert r.returncode == 2 and "not an export or takeout" in r.stderr


def _import_op(user: User) -> str:
    status, _, page = user.call("GET", "/api/operations?kind=import_file&limit=1")
    assert status == 200 and page["items"], page
    return page["items"][0]["id"]


# --- takeout -----------------------------------------------------------------------------------

def test_takeout_of_everything_i_own(wharf, tmp_path):
    """Enabled by the server: skipped while ``POST /api/me/exports`` answers 404."""
    import zipfile
    _server, user, _token = wharf
    probe = user.call("POST", "/api/me/exports", {})  # no Idempotency-Key: starts nothing
    if probe[0] == 404:
        pytest.skip("this server has no POST /api/me/exports (takeout) yet")
    r = client(wharf)("takeout", "--me", "-o", str(tmp_path / "me.zip"), "--json")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert set(got["operation"]["result"]) >= {"export_id", "content_url", "size", "sha256",
                                               "expires_at"}
    assert hashlib.sha256((tmp_path / "me.zip").read_bytes()).hexdigest() == got["sha256"]
    with zipfile.ZipFile(tmp_path / "me.zip") as z:
        assert "manifest.json" in z.namelist()


# --- docs/exchange.md ----------------------------------------------------------------------------

def test_the_run_walkthrough_in_docs_exchange_md_runs(tmp_path):
    """docs/exchange.md, "Run walkthrough": its curl blocks and the wharf-client block, as
    printed there, against a fresh ``wharf serve`` (embedded mode, its own data dir)."""
    from python_calamine import CalamineWorkbook
    for tool in ("curl", "bash", "sha256sum"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is needed to run the walkthrough")
    text = (REPO / "docs" / "exchange.md").read_text(encoding="utf-8")
    part = text[text.index("## Run walkthrough"):]
    blocks = re.findall(r"```sh\n(.*?)```", part, re.S)
    assert len(blocks) == 2 and "wharf-client import" in blocks[1]
    port = free_port()  # wharf serve with its defaults (but fast password hashing)
    server = Running(tmp_path, "serve", env=wharf_env(tmp_path, WHARF_PORT=str(port)))
    try:
        server.wait_for(r"serving on http://", timeout=60)
        shims = tmp_path / "bin"  # wharf-client as this checkout's code, whatever is installed
        shims.mkdir()
        shim = shims / "wharf-client"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m wharfclient "$@"\n')
        shim.chmod(0o755)
        script = "set -euo pipefail\n" + "\n".join(blocks).replace(
            "BASE=http://127.0.0.1:8080", f"BASE=http://127.0.0.1:{port}")
        assert f"BASE=http://127.0.0.1:{port}" in script
        work = tmp_path / "work"
        work.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("WHARF_")}
        env.update(PATH=f"{shims}{os.pathsep}{env.get('PATH', '')}",
                   WHARF_CLIENT_CONFIG="/nonexistent")
        r = subprocess.run(["bash", "-c", script], cwd=work, env=env, capture_output=True,
                           text=True, timeout=180, stdin=subprocess.DEVNULL)
    finally:
        server.kill()
    assert r.returncode == 0, (r.stdout, r.stderr, server.output[-3000:])
    out = r.stdout
    # the unit read back
    unit = json.loads(next(ln for ln in out.splitlines() if ln.startswith('{"unit_id"')))
    body = unit["snapshot"]["body"]
    assert body["name"] == "People"
    assert "\nimported\n" in out  # the session the unit was imported from
    assert rows(body["sheets"][body["sheetOrder"][0]]) == [
        ["name", "age", "city"], ["Ada", 36, "London"], ["Alan", 41, "Wilmslow"]]
    # sha256sum's line and the result's sha256 agree
    digest = re.search(r"^([0-9a-f]{64})  people\.xlsx\n([0-9a-f]{64})$", out, re.M)
    assert digest and digest[1] == digest[2], out
    expected = [["name", "age", "city"], ["Ada", 36, "London"], ["Alan", 41, "Wilmslow"]]
    sheet = CalamineWorkbook.from_path(str(work / "people.xlsx")).get_sheet_by_index(0)
    assert sheet.to_python() == expected
    assert (work / "people-export.csv").read_bytes() == \
        (work / "people.csv").read_bytes().replace(b"\n", b"\r\n")
    assert "206 Partial Content" in out and "Content-Range: bytes 0-9/48" in out
    assert "\nname,age,c\n" in out
    imports = [json.loads(ln) for ln in out.splitlines()
               if ln.startswith("{") and "import_file" in ln]
    failed = imports[-1]
    assert failed["status"] == "failed" and failed["error"]["code"] == "unsupported_format"
    # the wharf-client block
    assert re.search(r"^\S+  completed  unit \S+  resource \S+  node \S+$", out, re.M), out
    assert CalamineWorkbook.from_path(str(work / "people-2.xlsx")).get_sheet_by_index(
        0).to_python() == expected
    assert (work / "people-2.csv").read_bytes() == (work / "people-export.csv").read_bytes()
    assert out.rstrip().endswith("exit status 1")
    assert "wharf-client: import failed: 'paper.pdf' is not" in r.stderr
    assert r.stderr.count("(unsupported_format)") == 1
