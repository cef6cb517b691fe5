"""The deploy files parse and agree with each other and with the code: one image tag (set
by kustomize) for every workload including the migration, probes and scrape annotations
on every long-running process, no repository-relative paths in the env file."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"
IMAGE = "registry.example.com/wharf"


def k8s_documents() -> dict[str, list[dict]]:
    return {p.name: [d for d in yaml.safe_load_all(p.read_text()) if d]
            for p in sorted(K8S.glob("*.yaml"))}


def workloads() -> dict[str, dict]:
    """kind/name -> pod spec of every Deployment and Job."""
    out = {}
    for docs in k8s_documents().values():
        for d in docs:
            if d["kind"] in ("Deployment", "Job"):
                out[d["metadata"]["name"]] = d["spec"]["template"]
    return out


def test_every_manifest_parses_and_is_in_the_kustomization():
    docs = k8s_documents()
    kustomization = docs.pop("kustomization.yaml")[0]
    docs.pop("secret.example.yaml")  # created out of band
    assert sorted(kustomization["resources"]) == sorted(docs)
    assert "migrate-job.yaml" in kustomization["resources"]
    assert [i["name"] for i in kustomization["images"]] == [IMAGE]
    assert kustomization["images"][0]["newTag"]


def test_one_image_tag_set_by_kustomize_for_every_workload():
    pods = workloads()
    assert set(pods) == {"wharf-api", "wharf-feed", "wharf-worker", "wharf-scheduler",
                         "wharf-migrate"}
    for name, pod in pods.items():
        for container in pod["spec"]["containers"]:
            # No tag here: the kustomization's images: sets it, for the Job too.
            assert container["image"] == IMAGE, (name, container["image"])


def _env(container: dict) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", [])}


@pytest.mark.parametrize("name", ["wharf-worker", "wharf-scheduler"])
def test_background_processes_have_probes_and_a_scraped_metrics_port(name):
    pod = workloads()[name]
    (container,) = pod["spec"]["containers"]
    port = int(_env(container)["WHARF_METRICS_PORT"])
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["metrics"] == port
    for probe in ("livenessProbe", "startupProbe"):
        get = container[probe]["httpGet"]
        assert get["path"] == "/healthz" and get["port"] == "metrics"
    notes = pod["metadata"]["annotations"]
    assert notes["prometheus.io/scrape"] == "true"
    assert int(notes["prometheus.io/port"]) == port and notes["prometheus.io/path"] == "/metrics"


def test_api_probes_and_scrape_annotations():
    pod = workloads()["wharf-api"]
    (container,) = pod["spec"]["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    notes = pod["metadata"]["annotations"]
    assert notes["prometheus.io/scrape"] == "true"
    assert int(notes["prometheus.io/port"]) == container["ports"][0]["containerPort"]


def test_feed_probes_scrape_annotations_and_ingress_route():
    pod = workloads()["wharf-feed"]
    (container,) = pod["spec"]["containers"]
    assert container["args"] == ["wharf", "feed"]
    port = container["ports"][0]["containerPort"]
    assert int(_env(container)["WHARF_FEED_PORT"]) == port
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
    assert int(pod["metadata"]["annotations"]["prometheus.io/port"]) == port
    (ingress,) = [d for d in k8s_documents()["feed.yaml"] if d["kind"] == "Ingress"]
    paths = {p["path"]: p["backend"]["service"]["name"]
             for p in ingress["spec"]["rules"][0]["http"]["paths"]}
    assert paths == {"/api/feed": "wharf-feed", "/": "wharf-api"}


def test_compose_stack_parses_and_background_processes_have_health_checks():
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    services = compose["services"]
    for name in ("worker", "scheduler"):
        svc = services[name]
        port = svc["environment"]["WHARF_METRICS_PORT"]
        assert f"127.0.0.1:{port}/healthz" in " ".join(svc["healthcheck"]["test"])
        assert svc["environment"]["WHARF_BROKER_URL"]  # the shared settings are kept
    assert "/readyz" in " ".join(services["api"]["healthcheck"]["test"])
    prometheus = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    jobs = {j["job_name"]: j["dns_sd_configs"][0] for j in prometheus["scrape_configs"]}
    assert jobs["wharf-worker"]["port"] == int(services["worker"]["environment"]
                                                ["WHARF_METRICS_PORT"])
    assert jobs["wharf-scheduler"]["names"] == ["scheduler"]


def test_compose_stack_follows_the_compose_schema_and_runs_the_whole_production_shape():
    """``docker compose up`` in deploy/ (the README's quick start) starts every service,
    monitoring included, and the file is valid Compose. compose-spec.json is the Compose
    Specification's schema (github.com/compose-spec/compose-spec, schema/compose-spec.json
    at 170098b, Apache-2.0); docker is not available here to run ``docker compose config``."""
    import json

    import jsonschema
    compose = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    schema = json.loads((Path(__file__).parent / "compose-spec.json").read_text())
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
              for e in jsonschema.Draft7Validator(schema).iter_errors(compose)]
    assert errors == []
    services = compose["services"]
    assert {"postgres", "redis", "minio", "migrate", "api", "feed", "worker", "scheduler",
            "prometheus", "grafana"} <= set(services)
    assert [n for n, svc in services.items() if "profiles" in svc] == []  # all start by default
    for name, svc in services.items():  # every file a service mounts exists
        for volume in svc.get("volumes", []):
            if volume.startswith("./"):
                assert (DEPLOY / volume.split(":")[0]).exists(), (name, volume)
    assert set(compose["volumes"]) >= {v.split(":")[0] for svc in services.values()
                                      for v in svc.get("volumes", [])
                                      if not v.startswith(("./", "/"))}
    rules = "./prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro"
    assert rules in services["prometheus"]["volumes"]
    prometheus = yaml.safe_load((DEPLOY / "prometheus.yml").read_text())
    assert prometheus["rule_files"] == ["/etc/prometheus/alerts.yml"]


def test_worker_autoscaling_targets_the_worker_deployment_on_the_backlog():
    (scaler,) = k8s_documents()["worker-autoscaling.yaml"]
    (worker,) = k8s_documents()["worker.yaml"]
    assert scaler["apiVersion"] == "keda.sh/v1alpha1" and scaler["kind"] == "ScaledObject"
    spec = scaler["spec"]
    assert spec["scaleTargetRef"]["name"] == worker["metadata"]["name"] == "wharf-worker"
    assert "kind" not in spec["scaleTargetRef"]  # KEDA's default: a Deployment
    # KEDA owns the replica count: a fixed one in the Deployment would reset it at each apply.
    assert "replicas" not in worker["spec"]
    assert 1 <= spec["minReplicaCount"] <= spec["fallback"]["replicas"] <= spec["maxReplicaCount"]
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "prometheus"
    # Every API replica reports the same cluster-wide gauge: max, never sum.
    assert trigger["metadata"]["query"] == "max(wharf_operations_due)"
    assert float(trigger["metadata"]["threshold"]) > 0
    assert trigger["metadata"]["serverAddress"].startswith("http")


def test_env_example_sets_no_repository_relative_gunicorn_conf():
    text = (DEPLOY / "env.example").read_text()
    assert not re.search(r"^WHARF_GUNICORN_CONF=", text, re.MULTILINE)
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert "WHARF_GUNICORN_CONF" not in dockerfile


def test_the_image_copies_every_package_pyproject_installs():
    """A package missing from the Dockerfile's COPY lines would install without it (the
    composition package wharfd holds the ``wharf`` command)."""
    import tomllib
    pyproject = tomllib.loads((DEPLOY.parent / "pyproject.toml").read_text())
    packages = {name.split(".")[0].rstrip("*")
                for name in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]}
    copied = set(re.findall(r"^COPY (\w+)/ \1/$", (DEPLOY / "Dockerfile").read_text(), re.M))
    assert packages == copied
    assert pyproject["project"]["scripts"]["wharf"].split(":")[0].split(".")[0] in copied


def test_the_rabbitmq_variants_put_the_broker_and_the_feed_on_rabbitmq():
    """deploy/docker-compose.rabbitmq.yml (a Compose override, valid Compose) and the
    kustomize overlay deploy/k8s/rabbitmq: every Wharf process on an amqp:// broker, the
    feed with no Redis of its own (it follows the broker's stream queue)."""
    import json

    import jsonschema
    override = yaml.safe_load((DEPLOY / "docker-compose.rabbitmq.yml").read_text())
    schema = json.loads((Path(__file__).parent / "compose-spec.json").read_text())
    assert [e.message for e in jsonschema.Draft7Validator(schema).iter_errors(override)] == []
    base = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())["services"]
    services = override["services"]
    for name in ("api", "feed", "worker", "scheduler"):
        env = {**base[name]["environment"], **services[name]["environment"]}
        assert env["WHARF_BROKER_URL"].startswith("amqp://") and "@rabbitmq:5672/" in \
            env["WHARF_BROKER_URL"], name
        assert "WHARF_FEED_REDIS_URL" not in env
        assert services[name]["depends_on"]["rabbitmq"]["condition"] == "service_healthy"
    assert "healthcheck" in services["rabbitmq"] and "rabbitmq" in override["volumes"]
    overlay = yaml.safe_load((K8S / "rabbitmq" / "kustomization.yaml").read_text())
    assert overlay["resources"] == [".."]
    [patch] = overlay["patches"]
    assert patch["target"] == {"kind": "ConfigMap", "name": "wharf-config"}
    assert yaml.safe_load(patch["patch"]) == [{"op": "remove",
                                               "path": "/data/WHARF_BROKER_URL"}]
    assert "WHARF_BROKER_URL: \"amqp://" in (K8S / "secret.example.yaml").read_text()
