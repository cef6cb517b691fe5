/* The device login approval page (/device, api/device_page.py): look up a user code,
   approve or deny it. No library, no inline script (CSP script-src 'self'). */
(function () {
  "use strict";

  function $(id) { return document.getElementById(id); }
  function setText(id, text) { var el = $(id); if (el) { el.textContent = text; } }
  var code = null;

  function problem(r) {
    return r.json().then(function (p) {
      return (p.detail || p.title || ("HTTP " + r.status)) + " (" + (p.code || r.status) + ")";
    }, function () { return "HTTP " + r.status; });
  }

  function show(req) {
    setText("req-client", req.client_name || "(not given)");
    setText("req-agent", req.user_agent || "(unknown)");
    setText("req-address", req.address || "(unknown)");
    setText("req-created", req.created_at);
    setText("req-status", req.status);
    $("request").hidden = false;
    var open = req.status === "pending";
    $("approve").disabled = !open;
    $("deny").disabled = !open;
  }

  function lookup(form) {
    code = form.elements.user_code.value.trim();
    setText("message", "");
    fetch("/api/device-authorizations/" + encodeURIComponent(code),
          { credentials: "same-origin", headers: { "Accept": "application/json" } })
      .then(function (r) {
        if (r.ok) { return r.json().then(show); }
        $("request").hidden = true;
        return problem(r).then(function (m) { setText("message", m); });
      })
      .catch(function (e) { setText("message", "Failed: " + e.message); });
  }

  function decide(action) {
    fetch("/api/device-authorizations/" + encodeURIComponent(code) + "/" + action,
          { method: "POST", credentials: "same-origin",
            headers: { "Accept": "application/json" } })
      .then(function (r) {
        if (r.ok) {
          return r.json().then(function (req) {
            show(req);
            setText("message", action === "approve"
              ? "Approved: the device is logged in as you within a few seconds."
              : "Denied: the device gets no access.");
          });
        }
        return problem(r).then(function (m) { setText("message", m); });
      })
      .catch(function (e) { setText("message", "Failed: " + e.message); });
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
    var codeForm = $("code-form");
    if (!codeForm) { return; }
    codeForm.addEventListener("submit", function (ev) { ev.preventDefault(); lookup(codeForm); });
    $("approve").addEventListener("click", function () { decide("approve"); });
    $("deny").addEventListener("click", function () { decide("deny"); });
    if (codeForm.elements.user_code.value) { lookup(codeForm); }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
}());
