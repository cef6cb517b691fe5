"""The operator dashboard as server-rendered HTML (``GET /ops``).

Rules:
- Every value is escaped (:func:`html.escape`, quotes included): operation errors, worker
  ids and kinds reach the page from users and processes.
- The page works without JavaScript: every number is in the HTML, the throughput chart is
  an inline SVG drawn here. Its own script (``/ops/dashboard.js``, no CDN, no inline script:
  the page is served with ``Content-Security-Policy: script-src 'self'``) refreshes the
  panels from ``GET /api/ops/dashboard`` and adds the retry/cancel buttons' behaviour.
- The markup is the script's contract: the ids and ``data-*`` attributes below are what
  ``api/static/dashboard.js`` fills in again (keep both in step).
"""
from __future__ import annotations

from collections.abc import Iterable
from html import escape

from wharf.dashboard.views import (
    Dashboard,
    DeletionJobView,
    DisabledUserView,
    OperationView,
    ProcessView,
    SweepView,
    ThroughputPanel,
)

#: Served with every page of the dashboard (the 404 page too).
# img-src data: for the empty icon only (else the browser asks for /favicon.ico: a 404)
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SCRIPT = "/ops/dashboard.js"
STYLE = "/ops/dashboard.css"
STATUSES = ("pending", "running", "completed", "failed")
CHART_W, CHART_H = 600, 120


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def _head(title: str) -> str:
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{_e(title)}</title><link rel="icon" href="data:,">'
            f'<link rel="stylesheet" href="{STYLE}">'
            f'<script src="{SCRIPT}" defer></script></head>')


def _table(headers: Iterable[str], rows: Iterable[str], body_id: str) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    return (f'<table><thead><tr>{head}</tr></thead><tbody id="{body_id}">'
            f'{"".join(rows)}</tbody></table>')


def _td(value: object, cls: str = "") -> str:
    return f'<td class="{cls}">{_e(value)}</td>' if cls else f"<td>{_e(value)}</td>"


def _duration(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds:.3f} s"


def operation_row(op: OperationView) -> str:
    history = "".join(
        f"<li>#{a.number} {_e(a.outcome or 'running')} on {_e(a.worker_id)} at "
        f"{_e(a.started_at)}"
        f"{' — ' + _e(a.error_code) + ': ' + _e(a.error_message) if a.error_code else ''}"
        "</li>" for a in op.history)
    actions = ""
    for allowed, action in ((op.can_retry, "retry"), (op.can_cancel, "cancel")):
        if allowed:
            actions += (f'<button type="button" data-action="{action}" '
                        f'data-op="{_e(op.id)}">{action.capitalize()}</button>')
    error = f"{op.error_code}: {op.error_message}" if op.error_code else ""
    return (f'<tr data-op="{_e(op.id)}">{_td(op.id, "id")}{_td(op.kind)}{_td(op.status)}'
            f"{_td(op.actor)}{_td(f'{op.attempts}/{op.max_attempts}')}"
            f"{_td(_duration(op.duration_seconds))}{_td(error, 'error')}"
            f"<td><details><summary>{len(op.history)} shown</summary><ol>{history}</ol>"
            f"</details></td><td>{actions}</td></tr>")


OPERATION_HEADERS = ("id", "kind", "status", "actor", "attempts", "duration", "error",
                     "attempt history", "")


def _operations(title: str, note: str, key: str, ops: list[OperationView]) -> str:
    return (f'<section id="panel-{key}"><h2>{_e(title)}</h2><p class="note">{_e(note)}</p>'
            + _table(OPERATION_HEADERS, map(operation_row, ops), f"{key}-rows") + "</section>")


def chart(t: ThroughputPanel) -> str:
    """Stacked bars per minute: completed (ok) and failed."""
    top = max([m.completed + m.failed for m in t.minutes] + [1])
    width = CHART_W / max(1, len(t.minutes))
    bars = []
    for i, m in enumerate(t.minutes):
        ok_h = CHART_H * m.completed / top
        bad_h = CHART_H * m.failed / top
        x = i * width
        bars.append(f'<rect class="ok" x="{x:.1f}" y="{CHART_H - ok_h:.1f}" '
                    f'width="{max(1.0, width - 1):.1f}" height="{ok_h:.1f}">'
                    f"<title>{_e(m.start)}: {m.completed} completed</title></rect>")
        bars.append(f'<rect class="bad" x="{x:.1f}" y="{CHART_H - ok_h - bad_h:.1f}" '
                    f'width="{max(1.0, width - 1):.1f}" height="{bad_h:.1f}">'
                    f"<title>{_e(m.start)}: {m.failed} failed</title></rect>")
    return (f'<svg id="throughput-chart" viewBox="0 0 {CHART_W} {CHART_H}" role="img" '
            f'aria-label="operations finished per minute">{"".join(bars)}</svg>')


def _rate(t: ThroughputPanel) -> str:
    return "-" if t.failure_rate is None else f"{100 * t.failure_rate:.1f} %"


def job_row(j: DeletionJobView) -> str:
    return (f"<tr>{_td(j.object_key)}{_td(j.reason)}{_td(j.attempts)}{_td(j.created_at)}"
            f"{_td(j.next_attempt_at)}{_td(j.last_error, 'error')}</tr>")


def sweep_row(w: SweepView) -> str:
    return (f"<tr>{_td(w.schedule)}{_td(w.spec)}{_td(w.last_tick)}{_td(w.last_status)}"
            f"{_td(w.next_tick)}{_td(w.skipped)}{_td(w.last_skipped_at)}</tr>")


def process_row(p: ProcessView) -> str:
    return (f"<tr>{_td(p.role)}{_td(p.hostname)}{_td(p.pid)}{_td(p.version)}"
            f"{_td(p.started_at)}{_td(p.last_seen_at)}{_td(f'{p.age_seconds:.0f} s')}"
            f"{_td(p.state)}</tr>")


def disabled_row(u: DisabledUserView) -> str:
    return (f"<tr>{_td(u.username)}{_td(u.id)}{_td(u.created_at)}"
            f"{_td(u.pending_operations)}</tr>")


def _at_least(count: int, cap: int) -> str:
    """A capped count: ``≥ cap`` when it reached the cap (the same in dashboard.js)."""
    return f"≥ {count}" if count >= cap else str(count)


def page(d: Dashboard, username: str | None) -> str:
    by_status = {s: 0 for s in STATUSES}
    by_kind: dict[str, dict[str, int]] = {}
    for c in [*d.statuses.open, *d.statuses.finished]:
        by_status[c.status] = by_status.get(c.status, 0) + c.count
        by_kind.setdefault(c.kind, {s: 0 for s in STATUSES})[c.status] = c.count
    window_h = d.statuses.finished_window_seconds // 3600
    totals = "".join(
        f'<tr><th>{_e(s)}</th><td data-status="{_e(s)}">{by_status.get(s, 0)}</td></tr>'
        for s in STATUSES)
    kinds = "".join(
        f'<tr data-kind="{_e(kind)}"><th>{_e(kind)}</th>'
        + "".join(f'<td data-status="{_e(s)}">{counts.get(s, 0)}</td>' for s in STATUSES)
        + "</tr>" for kind, counts in sorted(by_kind.items()))
    t, q = d.throughput, d.queue
    capped = " (capped: the newest rows only)" if d.statuses.finished_capped else ""
    open_capped = (f" (capped: the oldest {d.statuses.open_cap} only)"
                   if d.statuses.open_capped else "")
    body = f"""<body><main id="dashboard" data-refresh="{d.refresh_seconds}">
<header><h1>Wharf operations</h1><p>Signed in as {_e(username)} · as of
<time id="generated-at">{_e(d.generated_at)}</time> · <span id="refresh-state">refreshes
every {d.refresh_seconds} s with JavaScript</span></p><p id="action-result" role="status"></p>
</header>
<section id="panel-statuses"><h2>Operations by status</h2>
<p class="note">pending and running: all, up to {d.statuses.open_cap}<span
id="open-capped">{_e(open_capped)}</span>; completed and failed: finished in the last
{window_h} h<span id="finished-capped">{_e(capped)}</span>.</p>
<table class="totals"><tbody id="status-totals">{totals}</tbody></table>
<table><thead><tr><th>kind</th>{"".join(f"<th>{s}</th>" for s in STATUSES)}</tr></thead>
<tbody id="kind-rows">{kinds}</tbody></table></section>
<section id="panel-throughput"><h2>Throughput, last hour</h2>
<p class="note">Operations finished per minute (green completed, red failed), oldest minute
left.</p>{chart(t)}
<p>completed <b id="tp-completed">{t.completed}</b> · failed <b id="tp-failed">{t.failed}</b>
· failure rate <b id="tp-rate">{_rate(t)}</b></p></section>
<section id="panel-queue"><h2>Queue</h2><table class="totals"><tbody>
<tr><th>due now</th><td id="q-due">{_at_least(q.due, q.count_cap)}</td></tr>
<tr><th>lag (oldest due)</th><td id="q-lag">{q.lag_seconds:.1f} s</td></tr>
<tr><th>running</th><td id="q-running">{_at_least(q.running, q.count_cap)}</td></tr>
<tr><th>expired leases</th><td id="q-expired">{_at_least(q.expired_leases, q.count_cap)}</td>
</tr>
</tbody></table></section>
{_operations("Recent failures", "Failed in the last hour, newest first.", "failures",
             d.failures)}
{_operations("Slowest", "Finished in the last hour, longest from submission to end.",
             "slowest", d.slowest)}
{_operations("Most retried", "Open, or finished in the last hour, with the most attempts.",
             "most_retried", d.most_retried)}
<section id="panel-deletion"><h2>Deletion jobs failing for long</h2>
<p class="note">Failing for more than {d.deletion_failing_for_seconds // 3600} h, oldest
first.</p>{_table(("object key", "reason", "attempts", "created", "next attempt",
                   "last error"), map(job_row, d.deletion_jobs), "deletion-rows")}</section>
<section id="panel-sweeps"><h2>Sweeps</h2>{_table(
        ("sweep", "every", "last run", "status", "next run", "skipped (24 h)",
         "last skipped"), map(sweep_row, d.sweeps), "sweep-rows")}</section>
<section id="panel-processes"><h2>Processes</h2>
<p class="note">Seen in the last {d.process_window_seconds // 60} min, newest first.</p>
{_table(("role", "host", "pid", "version", "started", "last seen", "age", "state"),
        map(process_row, d.processes), "process-rows")}</section>
<section id="panel-disabled"><h2>Disabled accounts</h2>
<p class="note"><span id="disabled-total">{_at_least(d.disabled_total, d.disabled_cap)}</span>
disabled (<code>wharf user enable NAME</code> restores one); the first by name, with their
operations waiting.</p>
{_table(("username", "id", "registered", "operations waiting"),
        map(disabled_row, d.disabled_users), "disabled-rows")}</section>
</main></body></html>"""
    return _head("Wharf operations") + body


def not_found(login: bool) -> str:
    """The 404 page; with a login form for anonymous visitors (the script submits it)."""
    form = ""
    if login:
        form = """<form id="login-form"><h2>Operators: log in</h2>
<label>Username <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password"
required></label><button type="submit">Log in</button><p id="login-error" role="alert"></p>
</form>"""
    return _head("Not found") + f"<body><main><h1>Not found</h1>{form}</main></body></html>"
