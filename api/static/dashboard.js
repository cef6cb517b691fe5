// Wharf operator dashboard: refreshes the server-rendered panels of /ops from
// GET /api/ops/dashboard, draws the throughput chart, and wires the retry/cancel buttons
// to POST /api/operations/{id}/retry|cancel. No dependencies, no inline script (the page's
// CSP is script-src 'self'); every value goes into the DOM as text, never as HTML.
// The ids and data-* attributes are those of api/dashboard_page.py: keep both in step.
(function () {
  "use strict";

  var SVG = "http://www.w3.org/2000/svg";
  var STATUSES = ["pending", "running", "completed", "failed"];
  var CHART_W = 600, CHART_H = 120;

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }

  function text(v) { return v === null || v === undefined ? "" : String(v); }
  function td(v, cls) { return el("td", cls ? { "class": cls } : {}, [text(v)]); }
  function fill(id, rows) {
    var body = $(id);
    if (!body) { return; }
    while (body.firstChild) { body.removeChild(body.firstChild); }
    rows.forEach(function (r) { body.appendChild(r); });
  }
  function setText(id, v) { var n = $(id); if (n) { n.textContent = text(v); } }

  // --- panels -------------------------------------------------------------------------
  function statuses(p) {
    var total = {}, kinds = {};
    STATUSES.forEach(function (s) { total[s] = 0; });
    p.open.concat(p.finished).forEach(function (c) {
      total[c.status] = (total[c.status] || 0) + c.count;
      kinds[c.kind] = kinds[c.kind] || {};
      kinds[c.kind][c.status] = c.count;
    });
    fill("status-totals", STATUSES.map(function (s) {
      return el("tr", {}, [el("th", {}, [s]),
        el("td", { "data-status": s }, [String(total[s] || 0)])]);
    }));
    fill("kind-rows", Object.keys(kinds).sort().map(function (k) {
      return el("tr", { "data-kind": k }, [el("th", {}, [k])].concat(STATUSES.map(function (s) {
        return el("td", { "data-status": s }, [String(kinds[k][s] || 0)]);
      })));
    }));
    setText("finished-capped", p.finished_capped ? " (capped: the newest rows only)" : "");
    setText("open-capped", p.open_capped ? " (capped: the oldest " + p.open_cap + " only)" : "");
  }

  function rect(cls, x, y, w, h, title) {
    var r = document.createElementNS(SVG, "rect");
    r.setAttribute("class", cls);
    r.setAttribute("x", x.toFixed(1)); r.setAttribute("y", y.toFixed(1));
    r.setAttribute("width", w.toFixed(1)); r.setAttribute("height", h.toFixed(1));
    var t = document.createElementNS(SVG, "title");
    t.textContent = title;
    r.appendChild(t);
    return r;
  }

  function throughput(t) {
    var svg = $("throughput-chart");
    if (svg) {
      while (svg.firstChild) { svg.removeChild(svg.firstChild); }
      var top = 1;
      t.minutes.forEach(function (m) { top = Math.max(top, m.completed + m.failed); });
      var w = CHART_W / Math.max(1, t.minutes.length);
      t.minutes.forEach(function (m, i) {
        var ok = CHART_H * m.completed / top, bad = CHART_H * m.failed / top;
        svg.appendChild(rect("ok", i * w, CHART_H - ok, Math.max(1, w - 1), ok,
                             m.start + ": " + m.completed + " completed"));
        svg.appendChild(rect("bad", i * w, CHART_H - ok - bad, Math.max(1, w - 1), bad,
                             m.start + ": " + m.failed + " failed"));
      });
    }
    setText("tp-completed", t.completed);
    setText("tp-failed", t.failed);
    setText("tp-rate", t.failure_rate === null ? "-" : (100 * t.failure_rate).toFixed(1) + " %");
  }

  // A capped count: "≥ cap" when it reached the cap (as _at_least in dashboard_page.py).
  function atLeast(n, cap) { return n >= cap ? "\u2265 " + n : String(n); }

  function queue(q) {
    setText("q-due", atLeast(q.due, q.count_cap));
    setText("q-lag", q.lag_seconds.toFixed(1) + " s");
    setText("q-running", atLeast(q.running, q.count_cap));
    setText("q-expired", atLeast(q.expired_leases, q.count_cap));
  }

  function operationRow(op) {
    var history = el("ol", {}, op.history.map(function (a) {
      var line = "#" + a.number + " " + (a.outcome || "running") + " on " + a.worker_id +
        " at " + a.started_at;
      if (a.error_code) { line += " — " + a.error_code + ": " + text(a.error_message); }
      return el("li", {}, [line]);
    }));
    var actions = el("td", {}, []);
    if (op.can_retry) {
      actions.appendChild(el("button", { type: "button", "data-action": "retry", "data-op": op.id },
                             ["Retry"]));
    }
    if (op.can_cancel) {
      actions.appendChild(el("button", { type: "button", "data-action": "cancel", "data-op": op.id },
                             ["Cancel"]));
    }
    return el("tr", { "data-op": op.id }, [
      td(op.id, "id"), td(op.kind), td(op.status), td(op.actor),
      td(op.attempts + "/" + op.max_attempts),
      td(op.duration_seconds === null ? "" : op.duration_seconds.toFixed(3) + " s"),
      td(op.error_code ? op.error_code + ": " + text(op.error_message) : "", "error"),
      el("td", {}, [el("details", {}, [el("summary", {}, [op.history.length + " shown"]),
                                       history])]),
      actions]);
  }

  // The attempt histories an operator opened stay open across refreshes.
  function operations(id, ops) {
    var open = {};
    var body = $(id);
    if (body) {
      Array.prototype.forEach.call(body.querySelectorAll("tr[data-op] details[open]"),
        function (det) { open[det.closest("tr").getAttribute("data-op")] = true; });
    }
    fill(id, ops.map(function (op) {
      var row = operationRow(op);
      if (open[op.id]) { row.querySelector("details").setAttribute("open", ""); }
      return row;
    }));
  }

  function render(d) {
    setText("generated-at", d.generated_at);
    statuses(d.statuses);
    throughput(d.throughput);
    queue(d.queue);
    operations("failures-rows", d.failures);
    operations("slowest-rows", d.slowest);
    operations("most_retried-rows", d.most_retried);
    fill("deletion-rows", d.deletion_jobs.map(function (j) {
      return el("tr", {}, [td(j.object_key), td(j.reason), td(j.attempts), td(j.created_at),
                           td(j.next_attempt_at), td(j.last_error, "error")]);
    }));
    fill("sweep-rows", d.sweeps.map(function (w) {
      return el("tr", {}, [td(w.schedule), td(w.spec), td(w.last_tick), td(w.last_status),
                           td(w.next_tick), td(w.skipped), td(w.last_skipped_at)]);
    }));
    fill("process-rows", d.processes.map(function (p) {
      return el("tr", {}, [td(p.role), td(p.hostname), td(p.pid), td(p.version),
                           td(p.started_at), td(p.last_seen_at),
                           td(p.age_seconds.toFixed(0) + " s"),
                           td(p.state)]);
    }));
    setText("disabled-total", atLeast(d.disabled_total, d.disabled_cap));
    fill("disabled-rows", d.disabled_users.map(function (u) {
      return el("tr", {}, [td(u.username), td(u.id), td(u.created_at),
                           td(u.pending_operations)]);
    }));
  }

  // --- refresh and actions --------------------------------------------------------------
  var root = null, timer = null, loading = false;

  function load() {
    if (loading) { return Promise.resolve(); }
    loading = true;
    return fetch("/api/ops/dashboard", { credentials: "same-origin",
                                         headers: { Accept: "application/json" } })
      .then(function (r) {
        if (!r.ok) { throw new Error("HTTP " + r.status); }
        return r.json();
      })
      .then(function (d) {
        render(d);
        setText("refresh-state", "live, every " + d.refresh_seconds + " s");
        root.setAttribute("data-loaded", d.generated_at);
      })
      .catch(function (e) { setText("refresh-state", "refresh failed: " + e.message); })
      .then(function () { loading = false; });
  }

  function act(button) {
    var id = button.getAttribute("data-op"), action = button.getAttribute("data-action");
    button.disabled = true;
    fetch("/api/operations/" + encodeURIComponent(id) + "/" + action,
          { method: "POST", credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        return r.json().then(function (body) {
          setText("action-result", r.ok ? action + " " + id + ": now " + body.status
                                        : action + " " + id + " refused: " + text(body.detail));
        });
      })
      .catch(function (e) { setText("action-result", action + " " + id + " failed: " + e.message); })
      .then(load);
  }

  function login(form) {
    var data = { username: form.elements.username.value, password: form.elements.password.value };
    fetch("/api/login-sessions", { method: "POST", credentials: "same-origin",
                                   headers: { "Content-Type": "application/json" },
                                   body: JSON.stringify(data) })
      .then(function (r) {
        if (r.ok) { window.location.reload(); return; }
        setText("login-error", "Login refused (HTTP " + r.status + ").");
      })
      .catch(function (e) { setText("login-error", "Login failed: " + e.message); });
  }

  function start() {
    var form = $("login-form");
    if (form) {
      form.addEventListener("submit", function (ev) { ev.preventDefault(); login(form); });
    }
    root = $("dashboard");
    if (!root) { return; }
    root.addEventListener("click", function (ev) {
      var b = ev.target.closest ? ev.target.closest("button[data-action]") : null;
      if (b && !b.disabled) { act(b); }
    });
    var every = parseInt(root.getAttribute("data-refresh"), 10) || 5;
    load();
    timer = window.setInterval(load, every * 1000);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
