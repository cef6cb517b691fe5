"""The operator dashboard in a real browser: Debian's chromium and chromedriver, driven by
Selenium with the system binaries (nothing is downloaded), against the real app served
over HTTP (waitress in a thread) with in-process workers, on both databases.

It checks what an operator sees: the numbers the database holds, a retry button that
retries a failed operation (the worker then runs it again), a login form that works, and
that no request failed (no 4xx/5xx in the performance log, no error in the console — a
CSP violation included). Without chromium/chromedriver the test is skipped, and fails
under ``WHARF_TEST_REQUIRE_SERVICES=1`` (``.ci/run`` installs them).
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from datetime import timedelta

import dramatiq
import pytest
import requests
from sqlalchemy import func, select

from storage.models import Operation
from tests.conftest import PASSWORD, make_settings, register_operator
from tests.dashboard.test_dashboard import HOSTILE, add_operation
from tests.support import services
from tests.support.threaded_server import serving_in_thread
from tests.support.waiting import wait_until
from wharf.dashboard.service import FINISHED_WINDOW
from wharf.infra.clock import utcnow

CHROMIUM = os.environ.get("WHARF_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("WHARF_TEST_CHROMEDRIVER", "/usr/bin/chromedriver")
CHROME_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--window-size=1400,1000")


def browser_error() -> str | None:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not (os.path.isfile(p)
                                                          and os.access(p, os.X_OK))]
    if missing:
        return (f"{' and '.join(missing)} missing (apt-get install chromium chromium-driver; "
                ".ci/run installs them)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


@pytest.fixture
def settings(tmp_path, database_url, unitstore_url):
    return make_settings(tmp_path, database_url, unitstore_url, operators=("ops",))


@pytest.fixture
def server(components, browser) -> Iterator[str]:
    """The app over real HTTP on a free port; its base URL. After ``browser``: a case
    skipped for want of a browser starts no server."""
    with serving_in_thread(components.api_app()) as base:
        yield base


@pytest.fixture
def browser(tmp_path):
    services.need(browser_error())
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chrome-profile'}")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(tmp_path / "chrome-profile", ignore_errors=True)


def network_log(driver) -> tuple[list[str], list[str]]:
    """(every response as "status url", the failures: status >= 400 or a request that
    failed) since the last call."""
    seen, bad = [], []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.responseReceived":
            response = params["response"]
            seen.append(f"{response['status']} {response['url']}")
            if response["status"] >= 400:
                bad.append(seen[-1])
        elif message["method"] == "Network.loadingFailed" and not params.get("canceled"):
            bad.append(f"failed: {params.get('errorText')} {params.get('blockedReason', '')}")
    return seen, bad


def console_errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def login_cookie(base: str, username: str, components=None) -> str:
    """Register ``username`` (``components``: an operator's account, made directly) and
    log in; the session cookie."""
    http = requests.Session()
    if components is not None:
        register_operator(components, username)
    else:
        r = http.post(f"{base}/api/users", json={"username": username, "password": PASSWORD})
        assert r.status_code == 201, r.text
    r = http.post(f"{base}/api/login-sessions",
                  json={"username": username, "password": PASSWORD})
    assert r.status_code == 201, r.text
    return http.cookies["wharf_session"]


def db_counts(db) -> dict[str, int]:
    """What the dashboard must show: open operations, and those finished in 24 h."""
    since = utcnow() - FINISHED_WINDOW
    with db.read() as s:
        rows = s.execute(select(Operation.status, func.count()).where(
            Operation.status.in_(("pending", "running")) | (Operation.completed_at >= since))
            .group_by(Operation.status)).all()
    out = {"pending": 0, "running": 0, "completed": 0, "failed": 0}
    out.update({status: n for status, n in rows})
    return out


def shown_counts(driver) -> dict[str, int]:
    """The status totals the page shows, read in one script run (the page re-renders them
    while it polls: cells found in one call may be gone by the next, a stale element)."""
    return dict(driver.execute_script(
        "return Object.fromEntries([...document.querySelectorAll("
        "'#status-totals td[data-status]')].map("
        "c => [c.getAttribute('data-status'), parseInt(c.textContent, 10)]));"))


def test_dashboard_in_a_browser(server, browser, components, db):
    from selenium.webdriver.common.by import By

    base = server
    cookie = login_cookie(base, "ops", components)
    alice = requests.Session()
    login_cookie(base, "alice")
    alice.cookies.set("wharf_session", requests.post(
        f"{base}/api/login-sessions", json={"username": "alice", "password": PASSWORD},
        timeout=10).cookies["wharf_session"])
    space = alice.get(f"{base}/api/me", timeout=10).json()["personal_space_id"]
    # A real operation, cancelled before any worker runs it: failed (code cancelled).
    r = alice.post(f"{base}/api/resources", timeout=10,
                   json={"space_id": space, "name": "Report", "unit_type": "doc"},
                   headers={"Idempotency-Key": uuid.uuid4().hex, "Origin": base})
    assert r.status_code == 202, r.text
    op_id = r.json()["id"]
    r = alice.post(f"{base}/api/operations/{op_id}/cancel", timeout=10,
                   headers={"Origin": base})
    assert r.status_code == 200 and r.json()["status"] == "failed", r.text
    # More history for the panels, errors a user could have influenced included.
    alice_id = alice.get(f"{base}/api/me", timeout=10).json()["id"]
    add_operation(db, alice_id, status="completed", took=timedelta(seconds=30), attempts=2)
    hostile_id = add_operation(db, alice_id, kind="purge_trash", status="failed", attempts=1,
                               error={"code": "permission_revoked", "message": HOSTILE})
    add_operation(db, alice_id, status="pending", attempts=0,
                  next_attempt_at=utcnow() + timedelta(hours=1))

    browser.get(f"{base}/ops/dashboard.css")  # the origin, to set the cookie on
    browser.add_cookie({"name": "wharf_session", "value": cookie, "path": "/"})
    network_log(browser), console_errors(browser)  # only what follows counts
    browser.get(f"{base}/ops")
    assert browser.title == "Wharf operations"
    main = browser.find_element(By.ID, "dashboard")
    wait_until(lambda: main.get_attribute("data-loaded"), what="the first refresh")
    assert shown_counts(browser) == db_counts(db)
    # The hostile error is shown as text, not run.
    assert HOSTILE in browser.find_element(By.ID, "failures-rows").text
    assert browser.find_element(By.ID, "throughput-chart").find_elements(By.TAG_NAME, "rect")
    # An attempt history opened by the operator stays open across a refresh.
    history = f'#failures-rows tr[data-op="{hostile_id}"] details'
    browser.find_element(By.CSS_SELECTOR, history + " summary").click()
    loaded = main.get_attribute("data-loaded")
    wait_until(lambda: main.get_attribute("data-loaded") != loaded, what="a refresh")
    assert browser.find_element(By.CSS_SELECTOR, history).get_attribute("open") is not None
    assert "permission_revoked" in browser.find_element(By.CSS_SELECTOR, history).text

    # Retry the cancelled operation: the worker starts now and runs it this time.
    worker = dramatiq.Worker(components.broker, worker_threads=2, worker_timeout=50)
    worker.start()
    try:
        button = browser.find_element(
            By.CSS_SELECTOR, f'#failures-rows button[data-action="retry"][data-op="{op_id}"]')
        button.click()
        wait_until(lambda: "now pending" in browser.find_element(By.ID, "action-result").text
                   or "now running" in browser.find_element(By.ID, "action-result").text,
                   what="the retry's answer on the page")

        def status() -> str:
            with db.read() as s:
                return s.scalar(select(Operation.status).where(Operation.id == op_id))

        wait_until(lambda: status() == "completed", what="the retried operation to complete")
    finally:
        worker.stop(timeout=5000)
    with db.read() as s:
        attempts = s.scalar(select(Operation.attempts).where(Operation.id == op_id))
    assert attempts == 1  # never ran before the retry, ran once after it
    # The next refresh shows the database's numbers again (one failed fewer).
    loaded = main.get_attribute("data-loaded")
    wait_until(lambda: main.get_attribute("data-loaded") != loaded, what="a refresh")
    wait_until(lambda: shown_counts(browser) == db_counts(db), what="the counts after retry")
    assert not browser.find_elements(By.CSS_SELECTOR, f'#failures-rows tr[data-op="{op_id}"]')

    seen, bad = network_log(browser)
    assert bad == []
    assert console_errors(browser) == []
    # the log did record the page, its files, the refreshes and the retry
    for path in ("/ops", "/ops/dashboard.js", "/ops/dashboard.css", "/api/ops/dashboard",
                 f"/api/operations/{op_id}/retry"):
        assert f"200 {base}{path}" in seen, (path, seen)


def test_login_form(server, browser, components):
    from selenium.webdriver.common.by import By
    base = server
    login_cookie(base, "ops", components)
    browser.get(f"{base}/ops")  # anonymous: the 404 page with the login form
    assert browser.title == "Not found"
    network_log(browser), console_errors(browser)  # that 404 is the expected one
    form = browser.find_element(By.ID, "login-form")
    form.find_element(By.NAME, "username").send_keys("ops")
    form.find_element(By.NAME, "password").send_keys(PASSWORD)
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait_until(lambda: browser.title == "Wharf operations", what="the dashboard")
    wait_until(lambda: browser.find_element(By.ID, "dashboard").get_attribute("data-loaded"),
               what="the first refresh")
    seen, bad = network_log(browser)
    assert bad == []
    assert f"201 {base}/api/login-sessions" in seen, seen
    assert console_errors(browser) == []
