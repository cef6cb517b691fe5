"""The operators' kit in deploy/ (issue 44): Prometheus alerting rules, which promtool checks
and unit-tests (each alert firing and not firing, each with a runbook in
docs/operations.md), and Grafana dashboards, provisioned for the compose stack. Every
metric a rule, a panel or the worker autoscaler names must be one a running Wharf's
/metrics exports, so renaming a metric breaks this test rather than an operator's pager."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest

from tests.support.services import need
from wharf.infra.clock import utcnow
from wharf.infra.ids import new_id

yaml = pytest.importorskip("yaml")

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
ALERTS = DEPLOY / "prometheus" / "alerts.yml"
ALERT_TESTS = DEPLOY / "prometheus" / "alerts.test.yml"
GRAFANA = DEPLOY / "grafana"
WHARF_METRIC = re.compile(r"\bwharf_[a-z0-9_]+\b")


def alert_rules() -> list[dict]:
    return [r for g in yaml.safe_load(ALERTS.read_text())["groups"] for r in g["rules"]]


def dashboards() -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in sorted((GRAFANA / "dashboards").glob("*.json"))}


def promtool(*args: str, cwd: Path = ROOT) -> str:
    tool = shutil.which("promtool")
    need(None if tool else "promtool is not installed (Debian: apt-get install prometheus)")
    assert tool is not None
    done = subprocess.run([tool, *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"promtool {' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def runbook_anchors() -> set[str]:
    """GitHub's anchors of the headings in docs/operations.md's "Runbooks" section."""
    text = (ROOT / "docs" / "operations.md").read_text()
    section = text.split("\n## Runbooks\n", 1)[1].split("\n## ", 1)[0]
    return {re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-")
            for h in re.findall(r"^###+ (.+)$", section, re.MULTILINE)}


def test_alert_rules_pass_promtool_and_each_has_tests_and_a_runbook(tmp_path):
    rules = alert_rules()
    names = [r["alert"] for r in rules]
    assert len(names) == len(set(names)) and len(names) >= 15
    promtool("check", "rules", ALERTS.name, cwd=ALERTS.parent)
    promtool("test", "rules", ALERT_TESTS.name, cwd=ALERT_TESTS.parent)
    # The compose stack's Prometheus configuration loads, with the rules where it mounts them.
    config = (DEPLOY / "prometheus.yml").read_text()
    assert "/etc/prometheus/alerts.yml" in config
    (tmp_path / "prometheus.yml").write_text(config.replace("/etc/prometheus/alerts.yml",
                                                            str(ALERTS)))
    promtool("check", "config", "prometheus.yml", cwd=tmp_path)
    # The dashboards' and the autoscaler's queries parse: promtool checks them as recording
    # rules (Grafana's $__rate_interval stood in for by a fixed range).
    queries = [expr.replace("$__rate_interval", "5m") for _, expr in queries_in_use()]
    (tmp_path / "queries.yml").write_text(yaml.safe_dump({"groups": [{"name": "queries", "rules": [
        {"record": f"query_{i}", "expr": q} for i, q in enumerate(queries)]}]}))
    promtool("check", "rules", "queries.yml", cwd=tmp_path)

    # Each alert is shown firing and not firing, and links to a runbook that exists.
    cases: dict[str, set[bool]] = {n: set() for n in names}
    for group in yaml.safe_load(ALERT_TESTS.read_text())["tests"]:
        for case in group["alert_rule_test"]:
            cases[case["alertname"]].add(bool(case["exp_alerts"]))
    assert {n: c for n, c in cases.items() if c != {True, False}} == {}
    anchors = runbook_anchors()
    for rule in rules:
        assert rule["labels"]["severity"] in ("critical", "warning"), rule["alert"]
        url = rule["annotations"]["runbook_url"]
        assert url == f"docs/operations.md#{rule['alert'].lower()}", url
        assert url.split("#")[1] in anchors, f"no runbook heading for {rule['alert']}"


def exported_names(body: str) -> set[str]:
    """Every sample name a Prometheus text exposition can carry, from its TYPE lines (a
    labelled family shows them before its first sample)."""
    names = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", body, re.MULTILINE):
        if kind == "counter":
            names |= {f"{name}_total", f"{name}_created"}
        elif kind == "histogram":
            names |= {f"{name}_bucket", f"{name}_sum", f"{name}_count", f"{name}_created"}
        names.add(name)
    return names


def queries_in_use() -> list[tuple[str, str]]:
    """(where, PromQL) of every dashboard panel's query and of the worker autoscaler's."""
    exprs = []
    for name, board in dashboards().items():
        exprs += [(f"{name} {p['title']}", t["expr"]) for p in board["panels"]
                  for t in p["targets"]]
    scaler = yaml.safe_load((DEPLOY / "k8s" / "worker-autoscaling.yaml").read_text())
    exprs += [("worker-autoscaling.yaml", t["metadata"]["query"])
              for t in scaler["spec"]["triggers"]]
    return exprs


def used_names() -> dict[str, set[str]]:
    """Metric name -> where the alerts, the dashboards and the autoscaler use it."""
    used: dict[str, set[str]] = {}
    exprs = [(f"alerts.yml {r['alert']}", r["expr"]) for r in alert_rules()] + queries_in_use()
    for where, expr in exprs:
        for metric in WHARF_METRIC.findall(expr):
            used.setdefault(metric, set()).add(where)
    return used


def test_every_metric_named_by_rules_dashboards_and_autoscaler_is_exported(client, db):
    import api.feed.metrics  # noqa: F401  (what `wharf feed` serves on its own /metrics)
    from storage.models import ScheduleTick
    # The fsck gauges exist once a run has finished.
    with db.write() as s:
        s.add(ScheduleTick(id=new_id(), schedule="fsck", tick_at=utcnow() - timedelta(hours=1),
                           status="done", scheduler_id="test", started_at=utcnow(),
                           finished_at=utcnow(), counts={"complete": 1}))
    r = client.get("/metrics")
    assert r.status_code == 200, r.text
    exported = exported_names(r.text)
    used = used_names()
    assert len(used) >= 35  # the scan finds the names (not an empty pass)
    missing = {m: sorted(w) for m, w in used.items() if m not in exported}
    assert missing == {}, f"named but not exported by Wharf: {missing}"
    # Every metric Wharf exports is on a dashboard or in a rule, so none is forgotten.
    families = {n for n in re.findall(r"^# TYPE (wharf_\S+)", r.text, re.MULTILINE)
                if not n.endswith("_created")}  # a counter's creation time
    unseen = {f for f in families
              if not any(u == f or u.startswith(f + "_") for u in used)}
    assert unseen == set(), f"exported but on no dashboard: {sorted(unseen)}"


def test_grafana_provisioning_and_dashboards_fit_together():
    datasources = yaml.safe_load(
        (GRAFANA / "provisioning" / "datasources" / "prometheus.yml").read_text())
    (source,) = datasources["datasources"]
    providers = yaml.safe_load(
        (GRAFANA / "provisioning" / "dashboards" / "wharf.yml").read_text())["providers"]
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
    mounts = dict(v.rsplit(":ro", 1)[0].split(":", 1) for v in compose["grafana"]["volumes"]
                  if v.startswith("./"))
    assert mounts["./grafana/provisioning"] == "/etc/grafana/provisioning"
    assert mounts["./grafana/dashboards"] == providers[0]["options"]["path"]
    assert source["url"] == "http://prometheus:9090" and "prometheus" in compose
    boards = dashboards()
    assert {b["title"] for b in boards.values()} == {
        "Wharf / Operations flow", "Wharf / Workers", "Wharf / API", "Wharf / Storage",
        "Wharf / Sweeps"}
    assert len({b["uid"] for b in boards.values()}) == len(boards)
    for name, board in boards.items():
        ids = [p["id"] for p in board["panels"]]
        assert len(ids) == len(set(ids)), name
        for panel in board["panels"]:
            assert panel["targets"], (name, panel["title"])
            for target in [panel, *panel["targets"]]:
                assert target["datasource"]["uid"] == source["uid"], (name, panel["title"])
