"""The Helm chart: lint, render and Kubernetes-schema validation, all in-process and offline.

Rendering and linting use helm-python-sdk (import name `helm_python`), which binds Helm's own
Go SDK (Helm v4) through a bundled shared library: the same template engine and linter as the
`helm` binary, which is not installable here. Rendered objects are checked against the
Kubernetes OpenAPI schemas shipped in kubernetes-validate (strict: unknown fields fail), for
the oldest Kubernetes the chart supports and the newest the package knows.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import helm_python as helm
import jsonschema
import kubernetes_validate
import pytest
import yaml

from service import __version__
from service.web.tally import TALLY

from ..docs.test_references import anchors
from .test_docs import settings_read

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "yahtzee-scoring"
KUBE_VERSIONS = ("1.25.0", kubernetes_validate.latest_version())
INFO = 1  # helm lint severities: 1 info, 2 warning, 3 error


# A tenant of the tenants file, with one key: the chart requires API keys unless told otherwise
# (auth.enabled=false), so every render and lint starts from KEYS unless it says keys=False.
ACME = {
    "name": "acme",
    "keys": [{"id": "3f9a1c7e", "hash": "sha256:" + "5a" * 16 + ":" + "c3" * 32}],
    "origins": ["https://play.acme.example"],
    "quotas": {"scoring": "600/minute", "advice": "120/minute", "analysis": "30/minute",
               "builds": "20/hour"},
}
KEYS = {"auth": {"tenants": [ACME]}}


def merged(base: dict, values: dict | None) -> dict:
    """values over base, mappings merged key by key (as Helm merges values files)."""
    out = dict(base)
    for key, value in (values or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merged(out[key], value)
        else:
            out[key] = value
    return out


def render(values: dict | None = None, *, keys: bool = True) -> dict[tuple[str, str], dict]:
    """Rendered objects by (kind, name); NOTES.txt under ('NOTES', ''). With keys, the values
    go over KEYS."""
    values = merged(KEYS, values) if keys else values or {}
    with helm.Chart.load(CHART) as chart:
        files = chart.render(values, name="rel", namespace="games", is_install=True)
    out: dict[tuple[str, str], dict] = {}
    for path, text in files.items():
        if path.endswith("NOTES.txt"):
            out[("NOTES", "")] = {"text": text}
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                out[(doc["kind"], doc["metadata"]["name"])] = doc
    return out


def deployment(objs) -> dict:
    return objs[("Deployment", "rel-yahtzee-scoring")]


def container(objs) -> dict:
    (c,) = deployment(objs)["spec"]["template"]["spec"]["containers"]
    return c


def env_of(objs) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in container(objs)["env"]}


def pod_spec(objs) -> dict:
    return deployment(objs)["spec"]["template"]["spec"]


# Values that turn on every optional object: PodMonitor, PrometheusRule, the Grafana
# dashboard, NetworkPolicy, and two topology spread constraints (nodes, zones).
MONITORING = {
    "metrics": {"scrapeAnnotations": False,
                "podMonitor": {"enabled": True, "labels": {"release": "kube-prometheus"},
                               "interval": "15s", "scrapeTimeout": "5s"},
                "prometheusRule": {"enabled": True, "labels": {"release": "kube-prometheus"}},
                "grafanaDashboard": {"enabled": True}},
    "networkPolicy": {
        "enabled": True,
        "from": [{"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": "ingress-nginx"}}}],
        "metricsFrom": [{"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": "monitoring"}}}],
    },
    "topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
         "whenUnsatisfiable": "DoNotSchedule"},
        {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
         "whenUnsatisfiable": "ScheduleAnyway"},
    ],
}

# Or a ServiceMonitor (through a headless Service of the metrics port) instead of the PodMonitor.
SERVICE_MONITOR = {
    "metrics": {"scrapeAnnotations": False,
                "serviceMonitor": {"enabled": True, "labels": {"release": "kube-prometheus"},
                                   "interval": "15s", "scrapeTimeout": "5s"}},
    "ingress": {"enabled": True, "className": "nginx"},
}
# The standard knobs of a production install: a digest, a priority class, annotations on the
# Service, ephemeral storage, a PDB by maxUnavailable, the HPA's behavior, a volume of one's own
# and the `helm test` key.
STANDARD = {
    "image": {"repository": "registry.example/games/yahtzee", "tag": "3.0.0",
              "digest": "sha256:" + "ab" * 32},
    "priorityClassName": "games-critical",
    "service": {"annotations": {"service.beta.kubernetes.io/aws-load-balancer-internal": "true"}},
    "resources": {"requests": {"ephemeral-storage": "576Mi"},
                  "limits": {"ephemeral-storage": "640Mi"}},
    "podDisruptionBudget": {"minAvailable": "", "maxUnavailable": 1},
    "autoscaling": {"behavior": {"scaleUp": {"stabilizationWindowSeconds": 0, "policies": [
        {"type": "Pods", "value": 2, "periodSeconds": 60}]}}},
    "extraVolumes": [{"name": "extra-tables", "configMap": {"name": "house-rules"}}],
    "extraVolumeMounts": [{"name": "extra-tables", "mountPath": "/etc/extra", "readOnly": True}],
    "tests": {"apiKeySecret": {"name": "yahtzee-test-key", "key": "key"}},
}
# The Prometheus Operator's kinds: kubernetes-validate knows only Kubernetes' own.
OPERATOR_KINDS = ("ServiceMonitor", "PodMonitor", "PrometheusRule")

# Quotas shared through a Redis the operator runs, behind the NetworkPolicy.
REDIS_PEER = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "data"}},
              "podSelector": {"matchLabels": {"app.kubernetes.io/name": "redis"}}}
REDIS = {
    "rateLimit": {"storage": "redis://redis-master.data.svc:6379/0",
                  "redis": {"to": [REDIS_PEER]}},
    "networkPolicy": {"enabled": True},
}


@pytest.mark.parametrize(
    "values",
    [
        None,
        {"ingress": {"enabled": True, "className": "nginx"}},
        {"autoscaling": {"enabled": False}},
        MONITORING,
        SERVICE_MONITOR,
        STANDARD,
        REDIS,
        {"auth": {"enabled": False}},
    ],
    ids=["defaults", "ingress", "no-hpa", "monitoring-networkpolicy-spread", "service-monitor",
         "standard", "redis", "auth-off"],
)
def test_lint_strict_is_clean(values):
    report = helm.lint(CHART, merged(KEYS, values), strict=True, kube_version="1.25.0")
    assert report["errors"] == []
    assert [m for m in report["messages"] if m["severity"] > INFO] == []


def test_lint_does_catch_a_broken_chart(tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "Chart.yaml").write_text("apiVersion: v2\nname: broken\nversion: 0.1.0\n")
    (broken / "templates").mkdir()
    (broken / "templates" / "x.yaml").write_text("kind: {{ .Values.nope.deeper }}\n")
    report = helm.lint(broken, strict=True)
    assert report["errors"] or any(m["severity"] > INFO for m in report["messages"])


@pytest.mark.parametrize("kube", KUBE_VERSIONS)
@pytest.mark.parametrize(
    "values",
    [
        None,
        {"ingress": {"enabled": True, "className": "nginx",
                     "tls": [{"secretName": "tls", "hosts": ["yahtzee.example.com"]}]}},
        {"autoscaling": {"enabled": False}, "replicaCount": 1, "service": {"type": "NodePort"}},
        {"extraEnv": [{"name": "POD_NAME",
                       "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]},
        MONITORING,
        SERVICE_MONITOR,
        STANDARD,
        REDIS,
        {"auth": {"tenants": [], "existingSecret": "acme-keys"},
         "rateLimit": {"storageSecret": {"name": "redis-url", "key": "url"}},
         "networkPolicy": {"enabled": True}},
        {"auth": {"enabled": False}},
    ],
    ids=["defaults", "ingress-tls", "single-nodeport", "extra-env",
         "monitoring-networkpolicy-spread", "service-monitor", "standard", "redis",
         "existing-secrets", "auth-off"],
)
def test_rendered_objects_match_the_kubernetes_schemas(values, kube):
    objs = render(values)
    for (kind, name), doc in objs.items():
        if kind == "NOTES" or kind in OPERATOR_KINDS:  # CRDs: checked against their fields below
            continue
        try:
            kubernetes_validate.validate(doc, kube, strict=True)
        except kubernetes_validate.ValidationError as e:
            pytest.fail(f"{kind}/{name} on {kube}: {str(e).splitlines()[0]}")


def test_default_objects():
    objs = render()
    kinds = sorted(k for k, _ in objs)
    assert kinds == sorted(
        ["Deployment", "Service", "ServiceAccount", "HorizontalPodAutoscaler",
         "PodDisruptionBudget", "Pod", "Secret", "NOTES"]
    )  # Pod: the `helm test` hook; Secret: the tenants (KEYS); no Ingress by default
    hook = objs[("Pod", "rel-yahtzee-scoring-test-connection")]
    assert hook["metadata"]["annotations"]["helm.sh/hook"] == "test"


def test_probes():
    c = container(render())
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert c["startupProbe"]["httpGet"]["path"] == "/healthz"
    startup = c["startupProbe"]
    # the port opens once the app is loaded (about 2 s for the image, 7 s on a busy machine:
    # tests/deploy/test_container_image.py measures it against this budget); the warm-up
    # behind it is /readyz's business, not this probe's
    assert 20 <= startup["periodSeconds"] * startup["failureThreshold"] <= 120
    # /metrics has a port of its own (METRICS_PORT), which the probes do not use
    assert c["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"},
                          {"name": "metrics", "containerPort": 9464, "protocol": "TCP"}]


def test_security_context():
    objs = render()
    pod = deployment(objs)["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    sc = container(objs)["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert sc["readOnlyRootFilesystem"] is True
    assert sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"] == {"drop": ["ALL"]}
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
    # The read-only root filesystem needs a writable /tmp: an emptyDir.
    assert {"name": "tmp", "mountPath": "/tmp"} in container(objs)["volumeMounts"]
    tmp = next(v for v in pod["volumes"] if v["name"] == "tmp")
    assert "emptyDir" in tmp
    assert env_of(objs)["PROMETHEUS_MULTIPROC_DIR"].startswith("/tmp/")


def test_service_account_token_not_mounted():
    objs = render()
    assert objs[("ServiceAccount", "rel-yahtzee-scoring")]["automountServiceAccountToken"] is False
    pod = deployment(objs)["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["serviceAccountName"] == "rel-yahtzee-scoring"


def test_hpa_bounds_and_cpu_target_from_values():
    objs = render({"autoscaling": {"minReplicas": 3, "maxReplicas": 7,
                                   "targetCPUUtilizationPercentage": 55}})
    hpa = objs[("HorizontalPodAutoscaler", "rel-yahtzee-scoring")]
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (3, 7)
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu"
    assert metric["resource"]["target"] == {"type": "Utilization", "averageUtilization": 55}
    assert hpa["spec"]["scaleTargetRef"]["name"] == "rel-yahtzee-scoring"
    # The HPA owns the replica count; the Deployment must not fight it.
    assert "replicas" not in deployment(objs)["spec"]
    # CPU utilisation is relative to requests: they must be set.
    assert container(objs)["resources"]["requests"]["cpu"]


def test_without_hpa_replicas_come_from_values():
    objs = render({"autoscaling": {"enabled": False}, "replicaCount": 4})
    assert ("HorizontalPodAutoscaler", "rel-yahtzee-scoring") not in objs
    assert deployment(objs)["spec"]["replicas"] == 4


def test_pdb_only_with_more_than_one_pod():
    assert ("PodDisruptionBudget", "rel-yahtzee-scoring") in render()
    single = render({"autoscaling": {"enabled": False}, "replicaCount": 1})
    assert ("PodDisruptionBudget", "rel-yahtzee-scoring") not in single


@pytest.mark.parametrize(
    ("values", "image"),
    [
        (None, f"yahtzee-scoring:{__version__}"),  # appVersion
        ({"image": {"tag": "2.3.4"}}, "yahtzee-scoring:2.3.4"),
        ({"image": {"repository": "registry.example/games/yahtzee", "tag": "sha-abc123"}},
         "registry.example/games/yahtzee:sha-abc123"),
        # pinned: the digest wins over the tag
        ({"image": {"repository": "registry.example/games/yahtzee", "tag": "3.0.0",
                    "digest": "sha256:" + "ab" * 32}},
         "registry.example/games/yahtzee@sha256:" + "ab" * 32),
        ({"image": {"digest": "sha256:" + "0f" * 32}}, "yahtzee-scoring@sha256:" + "0f" * 32),
    ],
)
def test_image_tag_from_values(values, image):
    objs = render(values)
    assert container(objs)["image"] == image
    hook = objs[("Pod", "rel-yahtzee-scoring-test-connection")]
    assert hook["spec"]["containers"][0]["image"] == image


def test_ingress_optional():
    objs = render({"ingress": {"enabled": True, "className": "nginx"}})
    ing = objs[("Ingress", "rel-yahtzee-scoring")]
    assert ing["spec"]["ingressClassName"] == "nginx"
    backend = ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "rel-yahtzee-scoring", "port": {"number": 80}}
    assert "yahtzee.example.com" in objs[("NOTES", "")]["text"]


def test_env_and_graceful_shutdown():
    objs = render({"workers": 3, "config": {"CORS_ORIGINS": "https://app.example"}})
    env = env_of(objs)
    assert env["WEB_CONCURRENCY"] == "3" and env["PORT"] == "8000"
    assert env["CORS_ORIGINS"] == "https://app.example"
    pod = deployment(objs)["spec"]["template"]["spec"]
    pre_stop = container(objs)["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    graceful = int(env["GUNICORN_GRACEFUL_TIMEOUT"])
    assert pod["terminationGracePeriodSeconds"] > int(pre_stop[1]) + graceful


def mib(quantity: str) -> float:
    """A Kubernetes memory quantity in MiB."""
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "K": 1e3 / 2**20, "M": 1e6 / 2**20,
             "G": 1e9 / 2**20}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return float(quantity[: -len(suffix)]) * factor
    return float(quantity) / 2**20


def test_memory_requests_and_limits_follow_the_measured_formula():
    """docs/deploy.md's formula (service/capacity.py) for the chart's own settings."""
    from service.capacity import memory_limit_mib, memory_request_mib
    from service.config import Settings

    objs = render()
    env = env_of(objs)
    workers = int(env["WEB_CONCURRENCY"])
    cache_size = int(env.get("ADVISOR_CACHE_SIZE") or Settings.advisor_cache_size)
    cache_mib = int(env.get("ADVISOR_CACHE_MIB") or Settings.advisor_cache_mib)
    resources = container(objs)["resources"]
    assert mib(resources["limits"]["memory"]) >= memory_limit_mib(workers, cache_size, cache_mib)
    assert mib(resources["requests"]["memory"]) >= memory_request_mib(workers)
    # the house-rules tables live in the /tmp emptyDir: it holds ADVISOR_CACHE_MIB, one more
    # table being written (27 MiB at most) and the metrics and numba cache files
    assert env["ADVISOR_BUILD_DIR"].startswith("/tmp/")
    tmp = next(v for v in deployment(objs)["spec"]["template"]["spec"]["volumes"]
               if v["name"] == "tmp")
    assert mib(tmp["emptyDir"]["sizeLimit"]) >= cache_mib + 27 + 32


def test_drain_fits_in_the_grace_period():
    objs = render()
    env = env_of(objs)
    graceful = int(env["GUNICORN_GRACEFUL_TIMEOUT"])
    assert int(env["GUNICORN_DRAIN_SECONDS"]) < graceful
    readiness = container(objs)["readinessProbe"]
    # not ready within a few seconds of SIGTERM, well inside the preStop sleep + drain
    assert readiness["periodSeconds"] * readiness["failureThreshold"] <= 5


def test_every_config_key_is_a_setting_the_service_reads():
    read = settings_read()
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert set(values["config"]) <= read
    assert {"PORT", "WEB_CONCURRENCY", "PROMETHEUS_MULTIPROC_DIR"} <= read


def test_values_are_documented():
    """Every key in values.yaml has a comment above it, or above a key it is nested in."""
    stack: list[tuple[int, bool]] = []  # (indent, documented) of the enclosing keys
    previous = ""
    for line in (CHART / "values.yaml").read_text().splitlines():
        m = re.match(r"^(\s*)([A-Za-z][\w.-]*):(.*)$", line)
        if m:
            indent = len(m.group(1))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            documented = previous.lstrip().startswith("#") or any(d for _, d in stack)
            section = m.group(3).strip() == ""  # a mapping or list: its entries say more
            assert documented or section, f"values.yaml: {line.strip()!r} is not documented"
            stack.append((indent, documented))
        if line.strip():
            previous = line


# --- values.schema.json: wrong values fail at install, naming the value ------------------------
SCHEMA = json.loads((CHART / "values.schema.json").read_text())
# Settings the chart sets itself, from its own values (containerPort, workers, the /tmp volume,
# auth, rateLimit, fairShare, forwardedAllowIps), or keeps out of `config`: API_KEYS (tenants
# inline; the chart mounts the tenants file from a Secret instead).
CHART_OWNED_SETTINGS = {
    "PORT", "WEB_CONCURRENCY", "PROMETHEUS_MULTIPROC_DIR",
    "AUTH", "API_KEYS_FILE", "API_KEYS", "RATE_LIMIT_STORAGE", "RATE_LIMIT_REDIS_TIMEOUT",
    "RATE_LIMIT_REDIS_RETRY", "QUOTA_SCORING", "QUOTA_ADVICE", "QUOTA_ANALYSIS", "QUOTA_BUILDS",
    "FORWARDED_ALLOW_IPS", "TENANT_IN_FLIGHT", "TENANT_IN_FLIGHT_WAIT", "METRICS_PORT",
    "ADVISOR_SHARED_TABLES", "ADVISOR_SHARED_TABLES_MIB",
}


def _resolve(node: dict) -> dict:
    """A schema node with its $ref followed (refs are local: #/definitions/...)."""
    while "$ref" in node:
        node = SCHEMA["definitions"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _value_paths(values: dict, prefix: str = "") -> list[tuple[str, list[str]]]:
    """(dotted path, keys) of every mapping key in values.yaml, depth first."""
    out = []
    for key, value in values.items():
        path = f"{prefix}{key}"
        out.append((path, [*prefix.split(".")[:-1], key] if prefix else [key]))
        if isinstance(value, dict):
            out += _value_paths(value, f"{path}.")
    return out


def test_schema_is_draft_07_and_refuses_unknown_top_level_values():
    assert SCHEMA["$schema"] == "http://json-schema.org/draft-07/schema#"
    assert SCHEMA["additionalProperties"] is False


def test_schema_covers_every_value():
    """Every key of values.yaml has a schema with a type, enum or reference; free-form maps
    (annotations, labels, securityContext, ...) are typed as maps and not walked into."""
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    missing = []
    for path, keys in _value_paths(values):
        node = SCHEMA
        for key in keys:
            node = _resolve(node)
            props = node.get("properties")
            if props is None:
                break  # a free-form map: its entries are not values of the chart
            if key not in props:
                missing.append(path)
                break
            node = props[key]
        else:
            node = _resolve(node)
            if not ({"type", "enum", "anyOf"} & node.keys()):
                missing.append(f"{path} (no type)")
    assert missing == []


def test_default_values_pass_the_schema():
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    jsonschema.Draft7Validator(SCHEMA).validate(values)


def test_schema_config_names_exactly_the_settings_the_service_reads():
    read = settings_read()
    assert set(SCHEMA["properties"]["config"]["properties"]) == read - CHART_OWNED_SETTINGS


BAD_VALUES = [
    ({"replicaCount": -1}, "at '/replicaCount': minimum: got -1, want 0"),
    ({"replicas": 3}, "additional properties 'replicas' not allowed"),
    ({"image": {"tag": 2}}, "at '/image/tag': got number, want string"),
    ({"image": {"repository": "yahtzee-scoring:1.0.0"}}, "at '/image/repository'"),
    ({"image": {"pullPolicy": "Sometimes"}}, "at '/image/pullPolicy': value must be one of"),
    ({"containerPort": 80}, "at '/containerPort': minimum: got 80, want 1,024"),
    ({"service": {"type": "ExternalName"}}, "at '/service/type': value must be one of"),
    ({"workers": 0}, "at '/workers': minimum: got 0, want 1"),
    ({"config": {"LOG_LEVL": "DEBUG"}}, "additional properties 'LOG_LEVL' not allowed"),
    ({"config": {"LOG_FORMAT": "xml"}}, "at '/config/LOG_FORMAT': value must be one of"),
    ({"config": {"MAX_BODY_BYTES": "1MB"}}, "at '/config/MAX_BODY_BYTES'"),
    ({"config": {"ACCESS_LOG": "maybe"}}, "at '/config/ACCESS_LOG'"),
    ({"resources": {"requests": {"cpu": "lots"}}}, "at '/resources/requests/cpu'"),
    # The HPA without requests.cpu: the chart's own check says why (it was the schema's
    # "missing property 'cpu'", which did not)
    ({"resources": {"requests": {"cpu": None}}},
     "autoscaling.enabled is true but resources.requests.cpu is not set"),
    ({"resources": {"requests": {"cpu": 0}}},
     "autoscaling.enabled is true but resources.requests.cpu is 0"),
    ({"autoscaling": {"enabled": "yes"}}, "at '/autoscaling/enabled': got string, want boolean"),
    ({"autoscaling": {"targetCPUUtilizationPercentage": 0}},
     "at '/autoscaling/targetCPUUtilizationPercentage': minimum: got 0, want 1"),
    ({"autoscaling": {"minReplicas": 5, "maxReplicas": 3}},
     "autoscaling.minReplicas (5) is above autoscaling.maxReplicas (3)"),
    ({"terminationGracePeriodSeconds": 20},
     "terminationGracePeriodSeconds (20) must exceed preStopSleepSeconds (5) + "
     "config.GUNICORN_GRACEFUL_TIMEOUT (25)"),
    ({"podDisruptionBudget": {"minAvailable": "half"}}, "at '/podDisruptionBudget/minAvailable'"),
    ({"ingress": {"hosts": [{"host": "yahtzee.example.com", "paths": [{"path": "api"}]}]}},
     "at '/ingress/hosts/0/paths/0/path'"),
    ({"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                     "whenUnsatisfiable": "Sometimes"}]},
     "at '/topologySpreadConstraints/0/whenUnsatisfiable': value must be one of"),
    ({"topologySpreadConstraints": [{"topologyKey": "kubernetes.io/hostname",
                                     "whenUnsatisfiable": "DoNotSchedule"}]},
     "at '/topologySpreadConstraints/0': missing property 'maxSkew'"),
    ({"metrics": {"serviceMonitor": {"enabled": True, "interval": "30 seconds"}}},
     "at '/metrics/serviceMonitor/interval'"),
    ({"networkPolicy": {"enabled": True, "from": [{"podSelectr": {}}]}},
     "additional properties 'podSelectr' not allowed"),
    ({"nameOverride": "Yahtzee_Scoring"}, "at '/nameOverride'"),
    # API keys and quotas
    ({"config": {"AUTH": "off"}}, "additional properties 'AUTH' not allowed"),
    ({"auth": {"enabled": "no"}}, "at '/auth/enabled': got string, want boolean"),
    ({"auth": {"tenants": [{"name": "acme", "keys": [{"id": "3f9a1c7e"}]}]}},
     "at '/auth/tenants/0/keys/0': missing property 'hash'"),
    ({"auth": {"tenants": [{**ACME, "keys": [{**ACME["keys"][0], "revokd": True}]}]}},
     "additional properties 'revokd' not allowed"),
    ({"auth": {"tenants": [{**ACME, "keys": [{"id": "3f9a1c7e", "hash": "yz_3f9a1c7e_secret"}]}]}},
     "at '/auth/tenants/0/keys/0/hash'"),  # the key itself, not its hash
    ({"auth": {"tenants": [{**ACME, "origins": ["https://play.acme.example/"]}]}},
     "at '/auth/tenants/0/origins/0'"),
    ({"auth": {"tenants": [{**ACME, "quotas": {"scoring": 600}}]}},
     "at '/auth/tenants/0/quotas/scoring': got number, want string"),
    ({"auth": {"tenants": [ACME, {**ACME, "name": "acme-staging"}]}},
     'key id "3f9a1c7e" is given twice (tenants "acme" and "acme-staging")'),
    ({"auth": {"existingSecret": "acme-keys"}},
     "auth.existingSecret and auth.tenants are both set"),
    ({"rateLimit": {"storage": "http://x"}}, "at '/rateLimit/storage'"),
    ({"rateLimit": {"storage": "redis.data.svc:6379"}}, "at '/rateLimit/storage'"),
    ({"rateLimit": {"quotas": {"scoring": 6000}}},
     "at '/rateLimit/quotas/scoring': got number, want string"),
    ({"rateLimit": {"quotas": {"advice": "1200 a minute"}}}, "at '/rateLimit/quotas/advice'"),
    ({"rateLimit": {"quotas": {"moves": "10/second"}}},
     "additional properties 'moves' not allowed"),
    ({"rateLimit": {"storageSecret": {"name": "redis-url"}}},
     "at '/rateLimit/storageSecret': properties 'key' required"),
    ({"rateLimit": {"storage": "redis://r:6379/0",
                    "storageSecret": {"name": "redis-url", "key": "url"}}},
     "rateLimit.storage and rateLimit.storageSecret are both set"),
    ({"rateLimit": {"storage": "rediss://redis.data.svc:6380/0"}},
     "rateLimit.redis.port (6379) is not the port of rateLimit.storage (6380)"),
    ({"rateLimit": {"redis": {"port": "6379"}}}, "at '/rateLimit/redis/port': got string"),
    ({"rateLimit": {"redis": {"timeoutSeconds": 0}}}, "at '/rateLimit/redis/timeoutSeconds'"),
    ({"forwardedAllowIps": "ingress-nginx"}, "at '/forwardedAllowIps'"),
    # metrics, alerts, dashboard
    ({"metrics": {"port": 8000}},
     "metrics.port (8000) is containerPort: /metrics must have a port of its own"),
    ({"metrics": {"port": 80}}, "at '/metrics/port': minimum: got 80, want 1,024"),
    ({"metrics": {"podMonitor": {"enabled": True}, "serviceMonitor": {"enabled": True}}},
     "metrics.podMonitor.enabled and metrics.serviceMonitor.enabled are both true"),
    ({"metrics": {"podMonitor": {"enabled": True, "scrapeTimeout": "5 s"}}},
     "at '/metrics/podMonitor/scrapeTimeout'"),
    ({"metrics": {"prometheusRule": {"enabled": True, "thresholds": {"errorRatio": 1.5}}}},
     "at '/metrics/prometheusRule/thresholds/errorRatio': maximum"),
    ({"metrics": {"prometheusRule": {"thresholds": {"p99": 0.1}}}},
     "additional properties 'p99' not allowed"),
    ({"metrics": {"prometheusRule": {"enabled": True, "thresholds": {"buildQueueDepth": 20}}}},
     "metrics.prometheusRule.thresholds.buildQueueDepth (20) is above "
     "config.ADVISOR_BUILD_QUEUE (16)"),
    ({"metrics": {"prometheusRule": {"runbookBaseUrl": "https://wiki.example/runbook#top"}}},
     "at '/metrics/prometheusRule/runbookBaseUrl'"),
    ({"metrics": {"grafanaDashboard": {"labels": {"grafana_dashboard": 1}}}},
     "at '/metrics/grafanaDashboard/labels/grafana_dashboard': got number, want string"),
    # pinned and standard
    ({"image": {"digest": "sha256:abc"}}, "at '/image/digest'"),
    ({"image": {"digest": "ab" * 32}}, "at '/image/digest'"),
    ({"priorityClassName": "Games Critical"}, "at '/priorityClassName'"),
    ({"service": {"annotations": {"a": 1}}}, "at '/service/annotations/a': got number"),
    ({"resources": {"limits": {"ephemeral-storage": "lots"}}},
     "at '/resources/limits/ephemeral-storage'"),
    ({"resources": {"limits": {"disk": "1Gi"}}}, "additional properties 'disk' not allowed"),
    ({"podDisruptionBudget": {"maxUnavailable": 1}},
     "podDisruptionBudget.minAvailable (1) and podDisruptionBudget.maxUnavailable (1) are both "
     "set"),
    ({"podDisruptionBudget": {"minAvailable": ""}},
     "neither podDisruptionBudget.minAvailable nor podDisruptionBudget.maxUnavailable is set"),
    ({"podDisruptionBudget": {"minAvailable": 2}},
     "podDisruptionBudget.minAvailable (2) is not below the 2 pods that run "
     "(autoscaling.minReplicas): the PodDisruptionBudget would let no pod be evicted"),
    ({"autoscaling": {"enabled": False}, "replicaCount": 3, "podDisruptionBudget": {
        "minAvailable": 3}},
     "podDisruptionBudget.minAvailable (3) is not below the 3 pods that run (replicaCount)"),
    ({"podDisruptionBudget": {"minAvailable": "100%"}},
     "podDisruptionBudget.minAvailable (100%) is not below the 2 pods that run"),
    ({"podDisruptionBudget": {"minAvailable": None, "maxUnavailable": 0}},
     "podDisruptionBudget.maxUnavailable (0) lets no pod be evicted"),
    ({"podDisruptionBudget": {"maxUnavailable": "half"}},
     "at '/podDisruptionBudget/maxUnavailable'"),
    ({"autoscaling": {"behavior": {"scaleDown": {"selectPolicy": "Fastest"}}}},
     "at '/autoscaling/behavior/scaleDown/selectPolicy': value must be one of"),
    ({"autoscaling": {"behavior": {"scaleSideways": {}}}},
     "additional properties 'scaleSideways' not allowed"),
    ({"extraVolumes": [{"name": "tmp", "emptyDir": {}}]}, "at '/extraVolumes/0/name'"),
    ({"extraVolumeMounts": [{"name": "extra"}]},
     "at '/extraVolumeMounts/0': missing property 'mountPath'"),
    ({"tests": {"apiKeySecret": {"name": "Test Key"}}}, "at '/tests/apiKeySecret/name'"),
    ({"tests": {"apiKey": "yz_3f9a1c7e_secret"}}, "additional properties 'apiKey' not allowed"),
]


@pytest.mark.parametrize(("values", "message"), BAD_VALUES,
                         ids=[m.split("'")[1] if "'" in m else m[:30] for _, m in BAD_VALUES])
def test_bad_values_fail_with_a_message_naming_them(values, message):
    with pytest.raises(helm.HelmError) as failed:
        render(values)
    assert message in str(failed.value), str(failed.value)


def test_lint_refuses_bad_values_too():
    report = helm.lint(CHART, {"containerPort": 80}, strict=True, kube_version="1.25.0")
    assert any("at '/containerPort': minimum" in e for e in report["errors"]), report


# --- Optional objects: PodMonitor, ServiceMonitor, NetworkPolicy; topologySpreadConstraints -----
# The Prometheus Operator's duration format (monitoring.coreos.com/v1 Duration).
DURATION = ("^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?"
            "(([0-9]+)ms)?)$")
# The fields of the Prometheus Operator's ServiceMonitor (monitoring.coreos.com/v1) the chart
# uses, as its CRD defines them; kubernetes-validate knows only Kubernetes' own kinds.
SERVICE_MONITOR_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": {"type": "object", "required": ["name", "namespace", "labels"]},
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["selector", "endpoints"],
            "properties": {
                "namespaceSelector": {
                    "type": "object", "additionalProperties": False,
                    "properties": {"any": {"type": "boolean"},
                                   "matchNames": {"type": "array", "items": {"type": "string"}}}},
                "selector": {
                    "type": "object", "additionalProperties": False,
                    "properties": {"matchLabels": {"type": "object",
                                                   "additionalProperties": {"type": "string"}},
                                   "matchExpressions": {"type": "array"}}},
                "endpoints": {
                    "type": "array", "minItems": 1,
                    "items": {
                        "type": "object", "additionalProperties": False,
                        "properties": {
                            "port": {"type": "string"},
                            "path": {"type": "string"},
                            "interval": {"type": "string", "pattern": DURATION},
                            "scrapeTimeout": {"type": "string", "pattern": DURATION},
                        },
                    },
                },
            },
        },
    },
}


ENDPOINT_SCHEMA = SERVICE_MONITOR_SCHEMA["properties"]["spec"]["properties"]["endpoints"]
# The fields of the PodMonitor the chart uses (monitoring.coreos.com/v1, as its CRD defines them).
POD_MONITOR_SCHEMA = {
    **SERVICE_MONITOR_SCHEMA,
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        **SERVICE_MONITOR_SCHEMA["properties"],
        "kind": {"const": "PodMonitor"},
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "required": ["selector", "podMetricsEndpoints"],
            "properties": {
                "namespaceSelector": SERVICE_MONITOR_SCHEMA["properties"]["spec"]["properties"][
                    "namespaceSelector"],
                "selector": SERVICE_MONITOR_SCHEMA["properties"]["spec"]["properties"][
                    "selector"],
                "podMetricsEndpoints": ENDPOINT_SCHEMA,
            },
        },
    },
}


def _seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(int(n) * units[u] for n, u in re.findall(r"([0-9]+)(ms|s|m|h)", duration))


def test_optional_objects_are_off_by_default():
    kinds = {kind for kind, _ in render()}
    assert not kinds & {"ServiceMonitor", "PodMonitor", "PrometheusRule", "ConfigMap",
                        "NetworkPolicy", "Ingress"}


def container_port(objs, name_or_number) -> int:
    """The container port a Service's targetPort names (by name or number)."""
    if isinstance(name_or_number, int):
        return name_or_number
    return next(p["containerPort"] for p in container(objs)["ports"]
                if p["name"] == name_or_number)


def test_metrics_are_served_on_a_port_no_service_publishes_to_the_ingress():
    """/metrics is answered on METRICS_PORT only (404 on the service port): the Service (the
    Ingress's backend) has no such port, so no Ingress path reaches /metrics."""
    objs = render(merged(MONITORING, {"ingress": {
        "enabled": True, "className": "nginx",
        "hosts": [{"host": "yahtzee.example.com",
                   "paths": [{"path": "/", "pathType": "Prefix"},
                             {"path": "/metrics", "pathType": "Exact"}]}]}}))
    metrics_port = int(env_of(objs)["METRICS_PORT"])
    assert metrics_port == 9464 != int(env_of(objs)["PORT"])
    assert {"name": "metrics", "containerPort": metrics_port, "protocol": "TCP"} in \
        container(objs)["ports"]
    services = {name: doc for (kind, name), doc in objs.items() if kind == "Service"}
    svc = services["rel-yahtzee-scoring"]
    assert [p["name"] for p in svc["spec"]["ports"]] == ["http"]
    assert all(container_port(objs, p["targetPort"]) != metrics_port
               for p in svc["spec"]["ports"])
    # every Ingress path goes to a Service port whose container port is not the metrics port
    ingress = objs[("Ingress", "rel-yahtzee-scoring")]
    paths = [path for rule in ingress["spec"]["rules"] for path in rule["http"]["paths"]]
    assert len(paths) == 2
    for path in paths:
        backend = path["backend"]["service"]
        ports = services[backend["name"]]["spec"]["ports"]
        port = next(p for p in ports if p["port"] == backend["port"]["number"])
        assert container_port(objs, port["targetPort"]) != metrics_port, path
    # the pod annotations, for a Prometheus that scrapes by them, name the metrics port
    annotated = deployment(render())["spec"]["template"]["metadata"]["annotations"]
    assert annotated["prometheus.io/scrape"] == "true"
    assert annotated["prometheus.io/port"] == "9464"
    assert annotated["prometheus.io/path"] == "/metrics"
    moved = render({"metrics": {"port": 9100}})
    assert env_of(moved)["METRICS_PORT"] == "9100"
    assert deployment(moved)["spec"]["template"]["metadata"]["annotations"][
        "prometheus.io/port"] == "9100"
    assert container_port(moved, "metrics") == 9100


def test_pod_monitor_scrapes_the_metrics_container_port():
    objs = render(MONITORING)
    pm = objs[("PodMonitor", "rel-yahtzee-scoring")]
    jsonschema.Draft7Validator(POD_MONITOR_SCHEMA).validate(pm)
    # It selects the Deployment's pods (by their labels, in the release's namespace) and a
    # container port they name: the metrics port, path /metrics.
    pod_labels = deployment(objs)["spec"]["template"]["metadata"]["labels"]
    assert pm["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    assert pm["spec"]["namespaceSelector"]["matchNames"] == ["games"]
    (endpoint,) = pm["spec"]["podMetricsEndpoints"]
    assert endpoint["port"] == "metrics"
    assert container_port(objs, endpoint["port"]) == int(env_of(objs)["METRICS_PORT"])
    assert endpoint["path"] == "/metrics"
    assert _seconds(endpoint["scrapeTimeout"]) <= _seconds(endpoint["interval"]) == 15
    assert pm["metadata"]["labels"]["release"] == "kube-prometheus"
    # not the `helm test` pod
    hook = objs[("Pod", "rel-yahtzee-scoring-test-connection")]["metadata"]["labels"]
    assert not pm["spec"]["selector"]["matchLabels"].items() <= hook.items()
    # With a monitor, the scrape annotations can go (no double scrape).
    pod = deployment(objs)["spec"]["template"]["metadata"]
    assert "prometheus.io/scrape" not in pod.get("annotations", {})
    # No Service is needed for it: the chart's only Service is the http one.
    assert [name for kind, name in objs if kind == "Service"] == ["rel-yahtzee-scoring"]


def test_service_monitor_scrapes_a_headless_metrics_service_the_ingress_does_not_use():
    """The ServiceMonitor selects only the metrics Service (headless, the metrics port alone),
    never the chart's Service, which the Ingress routes to."""
    objs = render(SERVICE_MONITOR)
    sm = objs[("ServiceMonitor", "rel-yahtzee-scoring")]
    jsonschema.Draft7Validator(SERVICE_MONITOR_SCHEMA).validate(sm)
    metrics_svc = objs[("Service", "rel-yahtzee-scoring-metrics")]
    main_svc = objs[("Service", "rel-yahtzee-scoring")]
    assert metrics_svc["spec"]["clusterIP"] == "None"
    assert metrics_svc["spec"]["selector"] == main_svc["spec"]["selector"]
    assert [(p["name"], p["targetPort"]) for p in metrics_svc["spec"]["ports"]] == [
        ("metrics", "metrics")]
    # It selects the metrics Service (by its labels, in its namespace), not the chart's.
    selector = sm["spec"]["selector"]["matchLabels"].items()
    assert selector <= metrics_svc["metadata"]["labels"].items()
    assert not selector <= main_svc["metadata"]["labels"].items()
    assert sm["spec"]["namespaceSelector"]["matchNames"] == ["games"]
    (endpoint,) = sm["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in metrics_svc["spec"]["ports"]}
    assert endpoint["path"] == "/metrics"
    assert _seconds(endpoint["scrapeTimeout"]) <= _seconds(endpoint["interval"]) == 15
    assert sm["metadata"]["labels"]["release"] == "kube-prometheus"
    backends = {path["backend"]["service"]["name"]
                for rule in objs[("Ingress", "rel-yahtzee-scoring")]["spec"]["rules"]
                for path in rule["http"]["paths"]}
    assert backends == {"rel-yahtzee-scoring"}
    pod = deployment(objs)["spec"]["template"]["metadata"]
    assert "prometheus.io/scrape" not in pod.get("annotations", {})


def test_network_policy_lets_in_only_the_service_and_metrics_ports_and_nothing_out():
    objs = render(MONITORING)
    np = objs[("NetworkPolicy", "rel-yahtzee-scoring")]
    pod_labels = deployment(objs)["spec"]["template"]["metadata"]["labels"]
    assert np["spec"]["podSelector"]["matchLabels"].items() <= pod_labels.items()
    assert np["spec"]["policyTypes"] == ["Ingress", "Egress"]
    service, metrics = np["spec"]["ingress"]
    assert service["ports"] == [{"port": "http", "protocol": "TCP"}]
    peers = service["from"]
    assert MONITORING["networkPolicy"]["from"][0] in peers  # the ingress controller
    assert MONITORING["networkPolicy"]["metricsFrom"][0] not in peers
    # and the release's `helm test` pod, which the policy itself does not select
    hook = objs[("Pod", "rel-yahtzee-scoring-test-connection")]
    test_peer = next(p for p in peers if "podSelector" in p)
    assert test_peer["podSelector"]["matchLabels"].items() <= hook["metadata"]["labels"].items()
    # Prometheus (metricsFrom), to the metrics port only
    assert metrics == {"ports": [{"port": "metrics", "protocol": "TCP"}],
                       "from": MONITORING["networkPolicy"]["metricsFrom"]}
    assert container_port(objs, "metrics") == 9464
    assert np["spec"]["egress"] == []
    # Without `from` and `metricsFrom`, anyone may connect to the two ports (the policy still
    # closes the rest).
    open_np = render({"networkPolicy": {"enabled": True}})[("NetworkPolicy",
                                                            "rel-yahtzee-scoring")]
    assert [rule.get("from") for rule in open_np["spec"]["ingress"]] == [None, None]
    assert [rule["ports"][0]["port"] for rule in open_np["spec"]["ingress"]] == ["http",
                                                                                "metrics"]
    everything_out = render({"networkPolicy": {"enabled": True, "egress": [{}]}})
    assert everything_out[("NetworkPolicy", "rel-yahtzee-scoring")]["spec"]["egress"] == [{}]


def test_the_helm_test_pod_is_not_one_of_the_services_pods():
    objs = render({"networkPolicy": {"enabled": True}})
    hook = objs[("Pod", "rel-yahtzee-scoring-test-connection")]["metadata"]["labels"]
    selectors = [
        objs[("Service", "rel-yahtzee-scoring")]["spec"]["selector"],
        objs[("PodDisruptionBudget", "rel-yahtzee-scoring")]["spec"]["selector"]["matchLabels"],
        objs[("NetworkPolicy", "rel-yahtzee-scoring")]["spec"]["podSelector"]["matchLabels"],
    ]
    for selector in selectors:
        assert not selector.items() <= hook.items(), selector


def test_topology_spread_across_nodes_by_default_and_from_values():
    default = deployment(render())["spec"]["template"]["spec"]["topologySpreadConstraints"]
    pod_labels = deployment(render())["spec"]["template"]["metadata"]["labels"]
    (node_spread,) = default
    assert node_spread["topologyKey"] == "kubernetes.io/hostname"
    assert node_spread["whenUnsatisfiable"] == "ScheduleAnyway"  # prefers, never blocks
    assert node_spread["labelSelector"]["matchLabels"].items() <= pod_labels.items()
    custom = deployment(render(MONITORING))["spec"]["template"]["spec"]
    keys = [(c["topologyKey"], c["whenUnsatisfiable"]) for c in custom["topologySpreadConstraints"]]
    assert keys == [("kubernetes.io/hostname", "DoNotSchedule"),
                    ("topology.kubernetes.io/zone", "ScheduleAnyway")]
    assert deployment(render({"topologySpreadConstraints": []}))["spec"]["template"]["spec"].get(
        "topologySpreadConstraints") is None


# --- API keys (auth), quotas (rateLimit), FORWARDED_ALLOW_IPS -----------------------------------
KEYS_DIR = "/etc/yahtzee-scoring/keys"


def env_entry(objs, name: str) -> dict:
    return next(e for e in container(objs)["env"] if e["name"] == name)


def keys_volume(objs) -> dict | None:
    return next((v for v in pod_spec(objs)["volumes"] if v["name"] == "api-keys"), None)


def test_keys_go_in_a_secret_mounted_read_only_as_the_tenants_file():
    objs = render()
    secret = objs[("Secret", "rel-yahtzee-scoring-api-keys")]
    tenants_file = base64.b64decode(secret["data"]["api-keys.json"])
    assert json.loads(tenants_file) == {"tenants": [ACME]}
    volume = keys_volume(objs)
    assert volume["secret"]["secretName"] == "rel-yahtzee-scoring-api-keys"
    assert volume["secret"]["items"] == [{"key": "api-keys.json", "path": "api-keys.json"}]
    # read by the pod's group (fsGroup) only: the container runs as 10001:10001
    assert volume["secret"]["defaultMode"] == 0o440
    assert pod_spec(objs)["securityContext"]["fsGroup"] == 10001
    mount = next(m for m in container(objs)["volumeMounts"] if m["name"] == "api-keys")
    assert mount == {"name": "api-keys", "mountPath": KEYS_DIR, "readOnly": True}
    env = env_of(objs)
    assert env["AUTH"] == "keys"
    assert env["API_KEYS_FILE"] == f"{KEYS_DIR}/api-keys.json"
    assert "API_KEYS" not in env
    # the root filesystem stays read-only: the keys are a volume of their own
    assert container(objs)["securityContext"]["readOnlyRootFilesystem"] is True


def test_a_change_of_keys_rolls_the_pods_and_nothing_else_does():
    def checksum(values=None):
        annotations = deployment(render(values))["spec"]["template"]["metadata"]["annotations"]
        return annotations["checksum/api-keys"]

    objs = render()
    tenants_file = base64.b64decode(
        objs[("Secret", "rel-yahtzee-scoring-api-keys")]["data"]["api-keys.json"])
    assert checksum() == hashlib.sha256(tenants_file).hexdigest()
    # rotation: a second key, then the first one revoked; each is a new pod template
    second = {"id": "b2d4e6f8", "hash": "sha256:" + "7e" * 16 + ":" + "d1" * 32}
    two_keys = {**ACME, "keys": [*ACME["keys"], second]}
    revoked = {**ACME, "keys": [{**ACME["keys"][0], "revoked": True}, second]}
    sums = {checksum(), checksum({"auth": {"tenants": [two_keys]}}),
            checksum({"auth": {"tenants": [revoked]}})}
    assert len(sums) == 3
    assert checksum({"workers": 3, "metrics": {"scrapeAnnotations": False}}) == checksum()


def test_an_existing_secret_is_mounted_and_none_is_made():
    objs = render({"auth": {"tenants": [], "existingSecret": "acme-keys"}})
    assert [name for kind, name in objs if kind == "Secret"] == []
    assert keys_volume(objs)["secret"]["secretName"] == "acme-keys"
    assert keys_volume(objs)["secret"]["items"][0]["key"] == "api-keys.json"
    assert env_of(objs)["AUTH"] == "keys"
    assert env_of(objs)["API_KEYS_FILE"] == f"{KEYS_DIR}/api-keys.json"
    # the chart cannot see the Secret's content: no checksum (docs: kubectl rollout restart)
    annotations = deployment(objs)["spec"]["template"]["metadata"].get("annotations", {})
    assert "checksum/api-keys" not in annotations
    assert "rollout restart" in objs[("NOTES", "")]["text"]
    other_key = render({"auth": {"tenants": [], "existingSecret": "acme-keys",
                                 "existingSecretKey": "tenants.json"}})
    assert keys_volume(other_key)["secret"]["items"] == [{"key": "tenants.json",
                                                          "path": "api-keys.json"}]


def test_keys_are_required_unless_auth_is_disabled():
    with pytest.raises(helm.HelmError) as failed:
        render(keys=False)
    message = str(failed.value)
    for way_out in ("auth.tenants", "auth.existingSecret", "auth.enabled=false",
                    "python -m service.web.auth new-key"):
        assert way_out in message, message
    # (helm lint renders in lint mode, where `fail` only logs: it cannot check this)

    objs = render({"auth": {"enabled": False}}, keys=False)
    env = env_of(objs)
    assert env["AUTH"] == "off"
    assert "API_KEYS_FILE" not in env
    assert [name for kind, name in objs if kind == "Secret"] == []
    assert keys_volume(objs) is None
    assert [m["name"] for m in container(objs)["volumeMounts"]] == ["tmp"]
    assert "AUTH=off" in objs[("NOTES", "")]["text"]


def test_quotas_are_counted_in_each_pod_by_default_with_no_egress():
    objs = render({"networkPolicy": {"enabled": True}})
    env = env_of(objs)
    assert env["RATE_LIMIT_STORAGE"] == "memory://"
    assert "RATE_LIMIT_REDIS_TIMEOUT" not in env and "RATE_LIMIT_REDIS_RETRY" not in env
    assert "ADVISOR_SHARED_TABLES" not in env  # no Redis: each pod builds its own tables
    assert {k: v for k, v in env.items() if k.startswith("QUOTA_")} == {
        "QUOTA_SCORING": "54000/minute", "QUOTA_ADVICE": "12000/minute",
        "QUOTA_ANALYSIS": "600/minute", "QUOTA_BUILDS": "10/minute"}
    assert objs[("NetworkPolicy", "rel-yahtzee-scoring")]["spec"]["egress"] == []
    assert env_of(render({"rateLimit": {"storage": "memory://"}}))["RATE_LIMIT_STORAGE"] == \
        "memory://"


def test_redis_storage_is_set_and_let_out_through_the_network_policy():
    objs = render(REDIS)
    env = env_of(objs)
    assert env["RATE_LIMIT_STORAGE"] == "redis://redis-master.data.svc:6379/0"
    assert env["RATE_LIMIT_REDIS_TIMEOUT"] == "0.25"
    assert env["RATE_LIMIT_REDIS_RETRY"] == "5"
    # the tables of new rules are kept in the same Redis (rateLimit.shareTables)
    assert env["ADVISOR_SHARED_TABLES"] == env["RATE_LIMIT_STORAGE"]
    assert env["ADVISOR_SHARED_TABLES_MIB"] == "1024"
    unshared = env_of(render(merged(REDIS, {"rateLimit": {"shareTables": False}})))
    assert "ADVISOR_SHARED_TABLES" not in unshared
    egress = objs[("NetworkPolicy", "rel-yahtzee-scoring")]["spec"]["egress"]
    to_redis, dns = egress
    assert to_redis == {"to": [REDIS_PEER], "ports": [{"port": 6379, "protocol": "TCP"}]}
    # the Redis host name must be looked up; anywhere unless rateLimit.redis.dnsTo says where
    assert dns == {"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}
    kube_dns = {"namespaceSelector": {"matchLabels": {
        "kubernetes.io/metadata.name": "kube-system"}}}
    tls = render(merged(REDIS, {"rateLimit": {
        "storage": "rediss://redis.data.svc:6380/1",
        "redis": {"port": 6380, "to": [], "dnsTo": [kube_dns],
                  "timeoutSeconds": 0.5, "retrySeconds": 10}}}))
    assert env_of(tls)["RATE_LIMIT_REDIS_TIMEOUT"] == "0.5"
    assert env_of(tls)["RATE_LIMIT_REDIS_RETRY"] == "10"
    to_redis, dns = tls[("NetworkPolicy", "rel-yahtzee-scoring")]["spec"]["egress"]
    assert to_redis == {"ports": [{"port": 6380, "protocol": "TCP"}]}  # no `to`: any host
    assert dns["to"] == [kube_dns]
    # the operator's own egress rules are kept, the chart's added after them
    extra = {"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}
    both = render(merged(REDIS, {"networkPolicy": {"egress": [extra]}}))
    assert both[("NetworkPolicy", "rel-yahtzee-scoring")]["spec"]["egress"][0] == extra
    assert len(both[("NetworkPolicy", "rel-yahtzee-scoring")]["spec"]["egress"]) == 3


def test_redis_url_from_a_secret():
    objs = render({"rateLimit": {"storageSecret": {"name": "redis-url", "key": "url"}},
                   "networkPolicy": {"enabled": True}})
    storage = env_entry(objs, "RATE_LIMIT_STORAGE")
    assert storage == {"name": "RATE_LIMIT_STORAGE",
                       "valueFrom": {"secretKeyRef": {"name": "redis-url", "key": "url"}}}
    assert "RATE_LIMIT_REDIS_TIMEOUT" in env_of(objs)
    assert env_entry(objs, "ADVISOR_SHARED_TABLES")["valueFrom"] == storage["valueFrom"]
    egress = objs[("NetworkPolicy", "rel-yahtzee-scoring")]["spec"]["egress"]
    assert egress[0]["ports"] == [{"port": 6379, "protocol": "TCP"}]


def test_quotas_and_trusted_proxies_from_values():
    objs = render({"rateLimit": {"quotas": {"scoring": "20/second;600/minute",
                                            "builds": "unlimited"}},
                   "forwardedAllowIps": "10.244.0.0/16"})
    env = env_of(objs)
    assert env["QUOTA_SCORING"] == "20/second;600/minute"
    assert env["QUOTA_BUILDS"] == "unlimited"
    assert env["QUOTA_ADVICE"] == "12000/minute"  # the other classes keep their defaults
    assert env["FORWARDED_ALLOW_IPS"] == "10.244.0.0/16"
    assert env_of(render())["FORWARDED_ALLOW_IPS"] == "127.0.0.1,::1"


def test_fair_share_from_values():
    env = env_of(render({"fairShare": {"inFlight": 6, "waitSeconds": 0.5}}))
    assert env["TENANT_IN_FLIGHT"] == "6" and env["TENANT_IN_FLIGHT_WAIT"] == "0.5"
    defaults = env_of(render())
    assert defaults["TENANT_IN_FLIGHT"] == "0" and defaults["TENANT_IN_FLIGHT_WAIT"] == "1"


def test_quota_pattern_takes_the_limits_notation():
    """The schema's quota pattern accepts what the `limits` library parses, and refuses what
    it does not."""
    limits = pytest.importorskip("limits")
    pattern = re.compile(SCHEMA["definitions"]["quota"]["pattern"])
    good = ["6000/minute", "20/second;600/minute", "10 per second", "5/2 minutes",
            "1/day, 100/month | 1000/year", "3 PER HOUR"]
    bad = ["6000", "6000/minutes/", "many/minute", "10/fortnight", "", "/minute"]
    for quota in good:
        assert pattern.match(quota), quota
        limits.parse_many(quota)
    for quota in bad:
        assert not pattern.match(quota), quota
    assert pattern.match("unlimited")


def test_the_chart_sets_only_settings_the_service_reads():
    """Every variable the chart puts in the container's environment is named in the service's
    sources or gunicorn.conf.py: a misspelt name would be ignored without a word."""
    sources = "\n".join(path.read_text() for path in
                        [*(ROOT / "service").rglob("*.py"), ROOT / "gunicorn.conf.py"])
    objs = render(REDIS)
    names = {e["name"] for e in container(objs)["env"]}
    unknown = {n for n in names - settings_read() if not re.search(rf"\b{n}\b", sources)}
    assert unknown == set()


# --- Alerts (PrometheusRule) and the Grafana dashboard: the metrics they name exist -------------
#: Series of other exporters the alerts and the dashboard use, with their labels:
#: kube-state-metrics and the kubelet's cAdvisor.
EXTERNAL_METRICS = {
    "kube_pod_container_status_restarts_total": {"namespace", "pod", "container", "uid"},
    "kube_pod_container_resource_limits": {"namespace", "pod", "container", "node", "resource",
                                           "unit"},
    "container_memory_working_set_bytes": {"namespace", "pod", "container", "id", "image",
                                           "name"},
}
#: Labels Prometheus puts on every series of a target it scrapes (PodMonitor, ServiceMonitor,
#: the annotations' usual scrape config).
TARGET_LABELS = {"namespace", "pod", "container", "job", "instance", "endpoint", "service"}
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and",
                "or", "unless", "offset", "inf", "nan"}


def series_of(kind: str, name: str, labels: set[str]) -> dict[str, set[str]]:
    """The series names a metric of prometheus-client exposes, with their labels."""
    if kind == "counter":  # "x" and "x_total" both expose x_total (no _created: multiprocess)
        return {name.removesuffix("_total") + "_total": labels}
    if kind == "histogram":
        return {f"{name}_bucket": labels | {"le"}, f"{name}_sum": labels,
                f"{name}_count": labels}
    if kind == "summary":
        return {name: labels | {"quantile"}, f"{name}_sum": labels, f"{name}_count": labels}
    return {name: labels}


def service_metrics() -> dict[str, tuple[str, set[str]]]:
    """Every metric the service defines, as name -> (type, labels): the Counter(, Gauge(,
    Histogram( and Summary( calls of prometheus-client in service/ (collections.Counter takes
    no name), and the metric families its own collectors make (CounterMetricFamily(, ...)."""
    kinds = {"Counter": "counter", "Gauge": "gauge", "Histogram": "histogram",
             "Summary": "summary", "CounterMetricFamily": "counter",
             "GaugeMetricFamily": "gauge"}
    out: dict[str, tuple[str, set[str]]] = {}
    for path in sorted((ROOT / "service").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            kind = kinds.get(func.attr if isinstance(func, ast.Attribute)
                             else getattr(func, "id", ""))
            first = node.args[0]
            if kind is None or not (isinstance(first, ast.Constant)
                                    and isinstance(first.value, str)):
                continue
            labelnames = node.args[2] if len(node.args) > 2 else next(
                (k.value for k in node.keywords if k.arg in ("labelnames", "labels")), None)
            labels = set(ast.literal_eval(labelnames)) if labelnames is not None else set()
            out[first.value] = (kind, labels)
    # the per-request metrics the pod's processes count in shared memory, as the tally
    # declares them (a counter's name without `_total`, as prometheus-client's takes it)
    for family in TALLY.families:
        name = family.name + ("_total" if family.kind == "counter" else "")
        out[name] = (family.kind, set(family.labelnames))
    return out


def exported_metrics() -> dict[str, set[str]]:
    """Every series the service exports, with its labels."""
    out: dict[str, set[str]] = {}
    for name, (kind, labels) in service_metrics().items():
        out.update(series_of(kind, name, labels))
    return out


def known_metrics() -> dict[str, set[str]]:
    return {**EXTERNAL_METRICS, **exported_metrics()}


def promql_metrics(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (functions, keywords, label names in
    matchers and in by/on/... clauses, ranges and strings left out)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}|\[[^\]]*\]", " ", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for m in re.finditer(r"(?<![\w.$])[A-Za-z_:][\w:]*", text):
        if text[m.end():].lstrip().startswith("(") or m.group() in PROMQL_WORDS:
            continue  # a function (or an aggregation)
        names.add(m.group())
    return names


def promql_labels(expr: str) -> dict[str, set[str]]:
    """metric -> label names its matchers name, and "" -> those of by/on/... clauses."""
    out: dict[str, set[str]] = {"": set()}
    for metric, matchers in re.findall(r"([A-Za-z_:][\w:]*)\s*\{([^}]*)\}", expr):
        out.setdefault(metric, set()).update(
            re.findall(r'([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)\s*"', matchers))
    for clause in re.findall(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)",
                             expr):
        out[""].update(label.strip() for label in clause.split(",") if label.strip())
    return out


def unknown_in(expr: str, known: dict[str, set[str]]) -> list[str]:
    """What an expression names that no exporter exports: metrics, and labels of them."""
    names = promql_metrics(expr)
    wrong = [f"metric {name}" for name in sorted(names - known.keys())]
    labels = promql_labels(expr)
    for metric, used in labels.items():
        if metric and metric in known:
            wrong += [f"label {metric}{{{label}}}" for label in
                      sorted(used - known[metric] - TARGET_LABELS)]
    grouping = set().union(*(known.get(n, set()) for n in names)) | TARGET_LABELS
    wrong += [f"label {label} (by/on)" for label in sorted(labels[""] - grouping)]
    return wrong


def test_promql_reading_finds_metrics_and_labels():
    expr = ('histogram_quantile(0.99, sum by (le) (rate(http_request_duration_seconds_bucket'
            '{namespace="games",endpoint=~"/v1/.+"}[5m]))) > 0.05 and on (pod) '
            'max by (pod) (rate_limit_storage_up) == 0 or vector(1)')
    assert promql_metrics(expr) == {"http_request_duration_seconds_bucket",
                                    "rate_limit_storage_up"}
    assert promql_labels(expr) == {"": {"le", "pod"},
                                   "http_request_duration_seconds_bucket": {"namespace",
                                                                            "endpoint"}}
    known = known_metrics()
    assert unknown_in(expr, known) == []
    assert unknown_in('sum by (tenant) (rate(http_requests_totl{stauts="500"}[5m]))', known) \
        == ["metric http_requests_totl", "label tenant (by/on)"]
    assert unknown_in('rate(http_requests_total{stauts="500"}[5m])', known) == [
        "label http_requests_total{stauts}"]


def test_the_metrics_list_comes_from_the_service():
    exported = exported_metrics()
    assert exported["http_requests_total"] == {"method", "endpoint", "status"}
    assert exported["http_request_duration_seconds_bucket"] == {"method", "endpoint", "status",
                                                                "le"}
    assert {"http_request_duration_seconds_count", "http_requests_in_progress",
            "tenant_requests_total", "tenant_charged_units_total", "rate_limit_storage_up",
            "rate_limit_storage_errors_total", "tenant_table_builds_total"} <= exported.keys()
    assert exported["tenant_charged_units_total"] == {"tenant", "operation"}
    # the build queue's, in service/advisor/tables/build_process.py
    assert exported["table_build_queue_depth"] == set()
    # the server's processes, service/web/processes.py's collector
    assert {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
            "process_start_time_seconds", "server_processes"} <= exported.keys()
    assert exported["table_build_seconds_bucket"] == {"kind", "outcome", "le"}


def test_docs_list_every_metric_with_its_type_and_labels():
    """docs/deploy.md's table of metrics (5. Observe) is the service's metrics, as defined."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    section = text.split("\n### Metrics\n")[1].split("\n### ")[0]
    rows = re.findall(r"^\| `([a-z_]+)` \| (\w+)[^|]* \| ([^|]*) \|", section, re.M)
    documented = {name: (kind, set(re.findall(r"`(\w+)`", labels))) for name, kind, labels in rows}
    assert documented == service_metrics()


# The fields of the PrometheusRule the chart uses (monitoring.coreos.com/v1, as its CRD
# defines them); an alerting rule as Prometheus reads it.
PROMETHEUS_RULE_SCHEMA = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "PrometheusRule"},
        "metadata": {"type": "object", "required": ["name", "namespace", "labels"]},
        "spec": {
            "type": "object", "additionalProperties": False, "required": ["groups"],
            "properties": {"groups": {"type": "array", "minItems": 1, "items": {
                "type": "object", "additionalProperties": False, "required": ["name", "rules"],
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "interval": {"type": "string", "pattern": DURATION},
                    "rules": {"type": "array", "minItems": 1, "items": {
                        "type": "object", "additionalProperties": False,
                        "required": ["alert", "expr", "labels", "annotations"],
                        "properties": {
                            "alert": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                            "expr": {"type": "string", "minLength": 1},
                            "for": {"type": "string", "pattern": DURATION},
                            "labels": {"type": "object", "required": ["severity"],
                                       "additionalProperties": {"type": "string"},
                                       "properties": {"severity": {
                                           "enum": ["critical", "warning", "info"]}}},
                            "annotations": {
                                "type": "object", "additionalProperties": {"type": "string"},
                                "required": ["summary", "description", "runbook_url"]},
                        }}},
                }}}},
        },
    },
}
RUNBOOK = ROOT / "docs" / "runbook.md"
#: What the issue asks an alert for, and the alert that does it.
ALERTS = {
    "YahtzeeScoringErrors5xx": 'status=~"5.."',
    "YahtzeeScoringTooMany429": 'status="429"',
    "YahtzeeScoringTablesBuilding202": 'status="202"',
    "YahtzeeScoringLatencyP99": "http_request_duration_seconds_bucket",
    "YahtzeeScoringQuotaStorageDown": "rate_limit_storage_up",
    "YahtzeeScoringBuildQueueFull": "table_build_queue_depth",
    "YahtzeeScoringRestarts": "kube_pod_container_status_restarts_total",
    "YahtzeeScoringMemoryNearLimit": 'kube_pod_container_resource_limits',
}


def alert_rules(objs) -> dict[str, dict]:
    rule = objs[("PrometheusRule", "rel-yahtzee-scoring")]
    return {r["alert"]: r for group in rule["spec"]["groups"] for r in group["rules"]}


def test_prometheus_rule_alerts_name_metrics_the_service_exports():
    objs = render(MONITORING)
    rule = objs[("PrometheusRule", "rel-yahtzee-scoring")]
    jsonschema.Draft7Validator(PROMETHEUS_RULE_SCHEMA).validate(rule)
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus"
    assert rule["metadata"]["namespace"] == "games"
    rules = alert_rules(objs)
    assert set(rules) == set(ALERTS)
    known = known_metrics()
    pod_label = deployment(objs)["metadata"]["name"]
    for name, rule in rules.items():
        expr = rule["expr"]
        assert ALERTS[name] in expr, name
        assert promql_metrics(expr), name
        assert unknown_in(expr, known) == [], name
        # the release's pods only: its namespace and its Deployment's pod names
        assert 'namespace="games"' in expr and f'pod=~"{pod_label}-' in expr, name
        assert re.fullmatch(rf'{pod_label}-\[a-z0-9\]\+-\[a-z0-9\]\+', re.search(
            r'pod=~"([^"]+)"', expr).group(1)), name
        assert expr.count("(") == expr.count(")") and expr.count("{") == expr.count("}")
    # the container's own series of kube-state-metrics and cAdvisor, not the test pod's
    assert 'container="yahtzee-scoring"' in rules["YahtzeeScoringMemoryNearLimit"]["expr"]
    assert 'container="yahtzee-scoring"' in rules["YahtzeeScoringRestarts"]["expr"]
    # ratios of /v1 requests: probes (/readyz answers 503 while draining) are not errors
    for name in ("YahtzeeScoringErrors5xx", "YahtzeeScoringTooMany429",
                 "YahtzeeScoringTablesBuilding202"):
        assert rules[name]["expr"].count('endpoint=~"/v1/.+"') >= 2, name
    assert rules["YahtzeeScoringErrors5xx"]["labels"]["severity"] == "critical"


def test_each_alert_has_a_runbook_section():
    objs = render(MONITORING)
    sections = anchors(RUNBOOK)
    for name, rule in alert_rules(objs).items():
        annotations = rule["annotations"]
        assert annotations["summary"] and annotations["description"], name
        base, _, anchor = annotations["runbook_url"].partition("#")
        assert base == "docs/runbook.md", name
        assert anchor == name.lower() and anchor in sections, name
    # an alert's annotations keep Prometheus's own templating for its values
    assert "{{ $value | humanizePercentage }}" in \
        alert_rules(objs)["YahtzeeScoringErrors5xx"]["annotations"]["description"]
    assert "{{ $labels.pod }}" in \
        alert_rules(objs)["YahtzeeScoringRestarts"]["annotations"]["description"]


def test_alert_thresholds_and_labels_from_values():
    objs = render(merged(MONITORING, {"metrics": {"prometheusRule": {
        "runbookBaseUrl": "https://git.example/games/yahtzee/blob/main/docs/runbook.md",
        "alertLabels": {"team": "games"},
        "thresholds": {"errorRatio": 0.02, "tooManyRequestsRatio": 0.25, "acceptedRatio": 0.5,
                       "latencyP99Seconds": 0.1, "buildQueueDepth": 8, "restartsPerHour": 5,
                       "memoryRatio": 0.8}}}}))
    rules = alert_rules(objs)
    assert re.findall(r">\s*([0-9.]+)", rules["YahtzeeScoringErrors5xx"]["expr"]) == ["0.02"] * 2
    for name, threshold in [("YahtzeeScoringTooMany429", "> 0.25"),
                            ("YahtzeeScoringTablesBuilding202", "> 0.5"),
                            ("YahtzeeScoringLatencyP99", "> 0.1"),
                            ("YahtzeeScoringBuildQueueFull", ">= 8"),
                            ("YahtzeeScoringRestarts", ">= 5"),
                            ("YahtzeeScoringMemoryNearLimit", "> 0.8")]:
        assert rules[name]["expr"].rstrip().endswith(threshold), name
    for name, rule in rules.items():
        assert rule["labels"]["team"] == "games", name
        assert rule["annotations"]["runbook_url"] == \
            f"https://git.example/games/yahtzee/blob/main/docs/runbook.md#{name.lower()}"
    # a bigger build queue lets the threshold follow it
    bigger = render(merged(MONITORING, {"config": {"ADVISOR_BUILD_QUEUE": "32"}, "metrics": {
        "prometheusRule": {"thresholds": {"buildQueueDepth": 24}}}}))
    assert alert_rules(bigger)["YahtzeeScoringBuildQueueFull"]["expr"].endswith(">= 24")


def test_the_latency_slo_endpoints_are_the_scoring_operations():
    """The latency alert's endpoints are the routes of single scoring requests (the service's
    own URL map), batches left out."""
    from service.config import Settings
    from service.web.app import create_app

    expr = alert_rules(render(MONITORING))["YahtzeeScoringLatencyP99"]["expr"]
    pattern = re.search(r'endpoint=~"([^"]+)"', expr).group(1)
    app = create_app(Settings(advisor_builds="inline", advisor_warm="none"))
    rules = [r.rule for r in app.url_map.iter_rules() if r.rule.startswith("/v1/")]
    matched = {r for r in rules if re.fullmatch(pattern, r)}
    assert matched == {
        "/v1/variants", "/v1/variants/<variant:variant>",
        "/v1/variants/<variant:variant>/rules",
        "/v1/variants/<variant:variant>/hands/score",
        "/v1/variants/<variant:variant>/hands/validate",
        "/v1/variants/<variant:variant>/scorecards/score",
        "/v1/variants/<variant:variant>/games/turn",
        "/v1/variants/<variant:variant>/games/validate"}


def dashboard_of(objs) -> dict:
    cm = objs[("ConfigMap", "rel-yahtzee-scoring-dashboard")]
    return json.loads(cm["data"]["yahtzee-scoring.json"])


def dashboard_panels(dashboard: dict) -> list[dict]:
    out = []
    for panel in dashboard["panels"]:
        out.append(panel)
        out += panel.get("panels", [])
    return out


def test_grafana_dashboard_is_a_config_map_for_the_sidecar_with_known_metrics():
    objs = render(MONITORING)
    cm = objs[("ConfigMap", "rel-yahtzee-scoring-dashboard")]
    assert cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert cm["metadata"]["namespace"] == "games"
    assert list(cm["data"]) == ["yahtzee-scoring.json"]
    dashboard = dashboard_of(objs)
    # the chart's file as it is: Helm does not template it
    assert dashboard == json.loads((CHART / "dashboards" / "yahtzee-scoring.json").read_text())
    assert dashboard["uid"] and dashboard["title"]
    known = known_metrics()
    panels = [p for p in dashboard_panels(dashboard) if p["type"] != "row"]
    ids = [p["id"] for p in dashboard_panels(dashboard)]
    assert len(ids) == len(set(ids))
    used: set[str] = set()
    for panel in panels:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            expr = target["expr"]
            assert promql_metrics(expr), (panel["title"], expr)
            assert unknown_in(expr, known) == [], (panel["title"], expr)
            used |= promql_metrics(expr)
    # what the issue asks to see
    wanted = {
        "requests/s by endpoint and status": "http_requests_total",
        "p50/p99 latency": "http_request_duration_seconds_bucket",
        "in-progress requests": "http_requests_in_progress",
        "tenant requests": "tenant_requests_total",
        "charged units": "tenant_charged_units_total",
        "quota storage up": "rate_limit_storage_up",
        "build queue depth": "table_build_queue_depth",
        "build seconds": "table_build_seconds_bucket",
        "the server's CPU": "process_cpu_seconds_total",
        "the server's memory": "process_resident_memory_bytes",
    }
    assert {what: metric for what, metric in wanted.items() if metric not in used} == {}
    exprs = [t["expr"] for p in panels for t in p["targets"]]
    for status in ('status=~"4.."', 'status=~"5.."', 'status="429"', 'status="202"'):
        assert any(status in e for e in exprs), status
    assert any("histogram_quantile(0.5," in e for e in exprs)
    assert any("histogram_quantile(0.99," in e for e in exprs)
    assert any("by (endpoint, status)" in e for e in exprs)
    assert any("by (tenant, operation)" in e for e in exprs)
    # the sidecar's label and folder from values
    other = render(merged(MONITORING, {"metrics": {"grafanaDashboard": {
        "namespace": "monitoring", "labels": {"dashboards": "games"},
        "annotations": {"grafana_folder": "Games"}}}}))
    cm = other[("ConfigMap", "rel-yahtzee-scoring-dashboard")]
    assert cm["metadata"]["labels"]["dashboards"] == "games"
    assert cm["metadata"]["namespace"] == "monitoring"
    assert cm["metadata"]["annotations"] == {"grafana_folder": "Games"}


# --- Pinned and standard: digest, priority, Service annotations, storage, PDB, HPA, volumes -----
def test_standard_knobs_reach_the_objects():
    objs = render(STANDARD)
    pod = pod_spec(objs)
    assert container(objs)["image"] == "registry.example/games/yahtzee@sha256:" + "ab" * 32
    assert container(objs)["imagePullPolicy"] == "IfNotPresent"
    assert pod["priorityClassName"] == "games-critical"
    assert objs[("Service", "rel-yahtzee-scoring")]["metadata"]["annotations"] == \
        STANDARD["service"]["annotations"]
    resources = container(objs)["resources"]
    assert resources["requests"]["ephemeral-storage"] == "576Mi"
    assert resources["limits"]["ephemeral-storage"] == "640Mi"
    assert resources["requests"]["cpu"] == "1"  # the defaults stay beside them
    assert {"name": "extra-tables", "configMap": {"name": "house-rules"}} in pod["volumes"]
    assert [v["name"] for v in pod["volumes"]] == ["tmp", "api-keys", "extra-tables"]
    assert container(objs)["volumeMounts"][-1] == STANDARD["extraVolumeMounts"][0]
    defaults = render()
    assert "priorityClassName" not in pod_spec(defaults)
    assert "annotations" not in defaults[("Service", "rel-yahtzee-scoring")]["metadata"]


def test_pdb_by_min_available_or_max_unavailable():
    pdb = render()[("PodDisruptionBudget", "rel-yahtzee-scoring")]["spec"]
    assert pdb["minAvailable"] == 1 and "maxUnavailable" not in pdb
    pdb = render(STANDARD)[("PodDisruptionBudget", "rel-yahtzee-scoring")]["spec"]
    assert pdb["maxUnavailable"] == 1 and "minAvailable" not in pdb
    pdb = render({"podDisruptionBudget": {"minAvailable": None, "maxUnavailable": "25%"}})[
        ("PodDisruptionBudget", "rel-yahtzee-scoring")]["spec"]
    assert pdb["maxUnavailable"] == "25%" and "minAvailable" not in pdb
    # below the pods that run is fine: 2 of 3, 50 %
    for values in ({"autoscaling": {"minReplicas": 3}, "podDisruptionBudget": {"minAvailable": 2}},
                   {"podDisruptionBudget": {"minAvailable": "50%"}}):
        render(values)
    # one pod: no PDB, so nothing to refuse
    single = render({"autoscaling": {"enabled": False}, "replicaCount": 1,
                     "podDisruptionBudget": {"minAvailable": 1}})
    assert ("PodDisruptionBudget", "rel-yahtzee-scoring") not in single


def test_hpa_behavior_is_passed_through():
    hpa = render(STANDARD)[("HorizontalPodAutoscaler", "rel-yahtzee-scoring")]["spec"]
    assert hpa["behavior"] == {
        "scaleUp": {"stabilizationWindowSeconds": 0,
                    "policies": [{"type": "Pods", "value": 2, "periodSeconds": 60}]},
        "scaleDown": {"stabilizationWindowSeconds": 300}}
    own = render({"autoscaling": {"scaleDownStabilizationSeconds": 120, "behavior": {
        "scaleDown": {"selectPolicy": "Min",
                      "policies": [{"type": "Percent", "value": 50, "periodSeconds": 60}]}}}})
    assert own[("HorizontalPodAutoscaler", "rel-yahtzee-scoring")]["spec"]["behavior"] == {
        "scaleDown": {"stabilizationWindowSeconds": 120, "selectPolicy": "Min",
                      "policies": [{"type": "Percent", "value": 50, "periodSeconds": 60}]}}
    window = render({"autoscaling": {"behavior": {"scaleDown": {
        "stabilizationWindowSeconds": 600}}}})
    assert window[("HorizontalPodAutoscaler", "rel-yahtzee-scoring")]["spec"]["behavior"] == {
        "scaleDown": {"stabilizationWindowSeconds": 600}}
    assert render()[("HorizontalPodAutoscaler", "rel-yahtzee-scoring")]["spec"]["behavior"] == {
        "scaleDown": {"stabilizationWindowSeconds": 300}}


def test_the_hpa_needs_requests_cpu_but_a_fixed_size_does_not():
    objs = render({"autoscaling": {"enabled": False},
                   "resources": {"requests": {"cpu": None}}})
    assert "cpu" not in container(objs)["resources"]["requests"]


# --- `helm test`: an authenticated call through the Service ---------------------------------------
def test_pod(objs) -> dict:
    return objs[("Pod", "rel-yahtzee-scoring-test-connection")]


test_pod.__test__ = False  # a helper, not a test


def test_the_helm_test_pod_runs_like_the_app():
    objs = render(STANDARD)
    pod = test_pod(objs)
    (c,) = pod["spec"]["containers"]
    assert c["image"] == container(objs)["image"]  # the digest too
    assert c["command"][:2] == ["python", "-c"]
    assert pod["spec"]["securityContext"] == pod_spec(objs)["securityContext"]
    assert c["securityContext"] == container(objs)["securityContext"]
    assert c["securityContext"]["runAsNonRoot"] is True
    assert c["securityContext"]["readOnlyRootFilesystem"] is True
    assert pod["spec"]["automountServiceAccountToken"] is False
    assert pod["spec"]["restartPolicy"] == "Never"
    env = {e["name"]: e for e in c["env"]}
    assert env["SERVICE_URL"]["value"] == "http://rel-yahtzee-scoring:80"
    assert env["AUTH"]["value"] == "keys"
    assert env["API_KEY"]["valueFrom"] == {"secretKeyRef": {"name": "yahtzee-test-key",
                                                            "key": "key"}}
    # without the Secret: no key (the test then checks auth is on); with auth off, none either
    for values, auth in [(None, "keys"), ({"auth": {"enabled": False}, "tests": {
            "apiKeySecret": {"name": "yahtzee-test-key"}}}, "off")]:
        (c,) = test_pod(render(values))["spec"]["containers"]
        env = {e["name"]: e for e in c["env"]}
        assert "API_KEY" not in env and env["AUTH"]["value"] == auth


class _ReadyFirst:
    """The app, with /readyz answered 200 as a pod with its tables loaded answers it (the
    test needs no tables)."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        if environ["PATH_INFO"] == "/readyz":
            start_response("200 OK", [("Content-Type", "application/json")])
            return [b'{"status": "ready"}']
        return self.app(environ, start_response)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Two servers on loopback, one requiring keys (one tenant with KEY), one without."""
    from werkzeug.serving import make_server

    from service.config import Settings
    from service.web.app import create_app
    from service.web.auth import hash_key, new_key

    key_id, key = new_key()
    tenants = {"tenants": [{"name": "helm-test", "keys": [{"id": key_id,
                                                           "hash": hash_key(key)}]}]}
    tables = str(tmp_path_factory.mktemp("helm-test-tables"))
    urls, servers = {}, []
    for auth, extra in (("keys", {"api_keys": json.dumps(tenants)}), ("off", {})):
        app = create_app(Settings(advisor_table_dir=tables, advisor_builds="inline",
                                  advisor_warm="none", auth=auth, **extra))
        server = make_server("127.0.0.1", 0, _ReadyFirst(app), threaded=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        urls[auth] = f"http://127.0.0.1:{server.server_port}"
    yield urls, key
    for server in servers:
        server.shutdown()


def run_test_pod(values, env: dict[str, str]) -> subprocess.CompletedProcess:
    """The `helm test` pod's command, run here with the pod's environment over `env`."""
    (c,) = test_pod(render(values))["spec"]["containers"]
    pod_env = {e["name"]: e["value"] for e in c["env"] if "value" in e}
    return subprocess.run([sys.executable, *c["command"][1:]], capture_output=True, text=True,
                          timeout=60, env={**os.environ, **pod_env, **env})


def test_the_helm_test_pod_makes_an_authenticated_call(served):
    urls, key = served
    keyed = {"tests": {"apiKeySecret": {"name": "yahtzee-test-key"}}}
    done = run_test_pod(keyed, {"SERVICE_URL": urls["keys"], "API_KEY": key + "\n"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "/readyz without a key -> 200",
        "/v1/variants/yahtzee/hands/score without a key -> 401",
        "/v1/variants/yahtzee/hands/score with a key -> 200"]
    # a wrong key fails the test, saying what it got
    wrong = run_test_pod(keyed, {"SERVICE_URL": urls["keys"], "API_KEY": "yz_00000000_nope"})
    assert wrong.returncode != 0
    assert "/v1/variants/yahtzee/hands/score: 401, expected 200" in wrong.stderr
    # without the Secret: the 401 alone, proving keys are required
    done = run_test_pod(None, {"SERVICE_URL": urls["keys"]})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == \
        "/v1/variants/yahtzee/hands/score without a key -> 401"
    # a service that does not require keys fails that test
    open_door = run_test_pod(None, {"SERVICE_URL": urls["off"]})
    assert "401, expected" not in open_door.stderr
    assert "/v1/variants/yahtzee/hands/score: 200, expected 401" in open_door.stderr
    # with auth off the chart's test expects 200 without a key
    done = run_test_pod({"auth": {"enabled": False}}, {"SERVICE_URL": urls["off"]})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == \
        "/v1/variants/yahtzee/hands/score without a key -> 200"


#: A pod of the release `rel` (Deployment rel-yahtzee-scoring: ReplicaSet hash, pod suffix).
POD = "rel-yahtzee-scoring-5d8f9c7b6-x2x4z"
_SERIES = f'namespace="games",pod="{POD}"'
_SCORE = f'{_SERIES},method="POST",endpoint="/v1/variants/<variant:variant>/hands/score"'
_CONTAINER = f'{_SERIES},container="yahtzee-scoring"'


def _answers(ok: int, status: str, bad: int) -> list[dict]:
    """http_requests_total of hands/score: `ok` 200s and `bad` answers of `status` a minute,
    and /readyz answering 503 (a pod draining) 100 times a minute, which is no error."""
    return [{"series": f'http_requests_total{{{_SCORE},status="200"}}', "values": f"0+{ok}x120"},
            {"series": f'http_requests_total{{{_SCORE},status="{status}"}}',
             "values": f"0+{bad}x120"},
            {"series": f'http_requests_total{{{_SERIES},method="GET",endpoint="/readyz",'
                       f'status="503"}}', "values": "0+100x120"}]


def _latency(fast: int) -> list[dict]:
    """hands/score's histogram: of 100 requests a minute, `fast` within 50 ms, all within
    100 ms."""
    buckets = {"0.025": fast // 2, "0.05": fast, "0.1": 100, "+Inf": 100}
    return [{"series": f'http_request_duration_seconds_bucket{{{_SCORE},status="200",le="{le}"}}',
             "values": f"0+{n}x120"} for le, n in buckets.items()]


def _memory(used: int) -> list[dict]:
    return [{"series": f"container_memory_working_set_bytes{{{_CONTAINER}}}",
             "values": f"{used}x60"},
            {"series": f'kube_pod_container_resource_limits{{{_CONTAINER},resource="memory",'
                       f'unit="byte"}}', "values": "1000x60"}]


#: alert: (series that fire it, series of a healthy service, when to look, labels it has)
ALERT_CASES = {
    "YahtzeeScoringErrors5xx": (_answers(1000, "500", 50), _answers(1000, "500", 1), "70m",
                                {"severity": "critical"}),
    "YahtzeeScoringTooMany429": (_answers(100, "429", 20), _answers(100, "429", 2), "40m",
                                 {"severity": "warning"}),
    "YahtzeeScoringTablesBuilding202": (_answers(100, "202", 20), _answers(100, "202", 5),
                                        "40m", {"severity": "warning"}),
    "YahtzeeScoringLatencyP99": (_latency(80), _latency(100), "40m", {"severity": "warning"}),
    "YahtzeeScoringQuotaStorageDown": (
        [{"series": f"rate_limit_storage_up{{{_SERIES}}}", "values": "0x30"}],
        [{"series": f"rate_limit_storage_up{{{_SERIES}}}", "values": "1x30"}], "10m",
        {"severity": "warning", "pod": POD}),
    "YahtzeeScoringBuildQueueFull": (
        [{"series": f"table_build_queue_depth{{{_SERIES}}}", "values": "14x30"}],
        [{"series": f"table_build_queue_depth{{{_SERIES}}}", "values": "3x30"}], "20m",
        {"severity": "warning", "pod": POD}),
    "YahtzeeScoringRestarts": (
        [{"series": f"kube_pod_container_status_restarts_total{{{_CONTAINER}}}",
          "values": "0 0 1 2 3 4 5 5 5 5 5"}],
        [{"series": f"kube_pod_container_status_restarts_total{{{_CONTAINER}}}",
          "values": "0 0 1 1 1 1 1 1 1 1 1"}], "10m",
        {"severity": "warning", "namespace": "games", "pod": POD,
         "container": "yahtzee-scoring"}),
    "YahtzeeScoringMemoryNearLimit": (_memory(950), _memory(800), "20m",
                                      {"severity": "warning", "pod": POD}),
}


def test_the_alerts_fire_on_their_conditions_and_not_on_a_healthy_service(tmp_path):
    """promtool (Prometheus's own: `apt-get install prometheus`) checks the rules, their
    annotations' templates included, then replays series through them: each alert fires on
    its condition with its labels, and stays quiet on a healthy service (with /readyz's 503s
    of a draining pod, which are no error)."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus)")
    rule = render(MONITORING)[("PrometheusRule", "rel-yahtzee-scoring")]
    assert set(ALERT_CASES) == set(alert_rules(render(MONITORING)))
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(rule["spec"]))
    checked = subprocess.run([promtool, "check", "rules", str(rules)], capture_output=True,
                             text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # the replay compares labels only: the annotations are text for people
    for group in rule["spec"]["groups"]:
        for r in group["rules"]:
            r.pop("annotations")
    (tmp_path / "labels.yaml").write_text(yaml.safe_dump(rule["spec"]))
    tests = []
    for alert, (firing, healthy, at, labels) in ALERT_CASES.items():
        tests.append({"interval": "1m", "input_series": firing, "alert_rule_test": [
            {"eval_time": at, "alertname": alert, "exp_alerts": [{"exp_labels": labels}]}]})
        tests.append({"interval": "1m", "input_series": healthy, "alert_rule_test": [
            {"eval_time": at, "alertname": alert, "exp_alerts": []}]})
    spec = tmp_path / "tests.yaml"
    spec.write_text(yaml.safe_dump({"rule_files": ["labels.yaml"], "evaluation_interval": "1m",
                                    "tests": tests}))
    replayed = subprocess.run([promtool, "test", "rules", str(spec)], capture_output=True,
                              text=True, cwd=tmp_path)
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


def test_the_dashboards_queries_are_promql(tmp_path):
    """Each query of the dashboard, its Grafana variables given values, is PromQL that
    promtool accepts (as a recording rule)."""
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus)")
    variables = {"$__rate_interval": "5m", "$__range": "1h", "$namespace": "games",
                 "$pod": ".+"}
    records = []
    for panel in dashboard_panels(dashboard_of(render(MONITORING))):
        for target in panel.get("targets", []):
            expr = target["expr"]
            for name, value in variables.items():
                expr = expr.replace(name, value)
            assert "$" not in expr, expr
            records.append({"record": f"dashboard:panel{panel['id']}:{target['refId']}",
                            "expr": expr})
    rules = tmp_path / "dashboard.yaml"
    rules.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": records}]}))
    checked = subprocess.run([promtool, "check", "rules", str(rules)], capture_output=True,
                             text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(records)} rules found" in checked.stdout
