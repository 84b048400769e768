"""The Helm chart: lint, render and Kubernetes-schema validation, all in-process and offline.

Rendering and linting use helm-python-sdk (import name `helm_python`), which binds Helm's own
Go SDK (Helm v4) through a bundled shared library: the same template engine and linter as the
`helm` binary, which is not installable here. Rendered objects are checked against the
Kubernetes OpenAPI schemas shipped in kubernetes-validate (strict: unknown fields fail), for
the oldest Kubernetes the chart supports and the newest the package knows.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import helm_python as helm
import jsonschema
import kubernetes_validate
import pytest
import yaml

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


# Values that turn on every optional object: ServiceMonitor, NetworkPolicy, and two
# topology spread constraints (nodes, zones).
MONITORING = {
    "metrics": {"scrapeAnnotations": False,
                "serviceMonitor": {"enabled": True, "labels": {"release": "kube-prometheus"},
                                   "interval": "15s", "scrapeTimeout": "5s"}},
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
        REDIS,
        {"auth": {"enabled": False}},
    ],
    ids=["defaults", "ingress", "no-hpa", "monitoring-networkpolicy-spread", "redis", "auth-off"],
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
        REDIS,
        {"auth": {"tenants": [], "existingSecret": "acme-keys"},
         "rateLimit": {"storageSecret": {"name": "redis-url", "key": "url"}},
         "networkPolicy": {"enabled": True}},
        {"auth": {"enabled": False}},
    ],
    ids=["defaults", "ingress-tls", "single-nodeport", "extra-env",
         "monitoring-networkpolicy-spread", "redis", "existing-secrets", "auth-off"],
)
def test_rendered_objects_match_the_kubernetes_schemas(values, kube):
    objs = render(values)
    for (kind, name), doc in objs.items():
        if kind in ("NOTES", "ServiceMonitor"):  # a CRD: test_service_monitor_* checks it
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
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 60
    assert c["ports"] == [{"name": "http", "containerPort": 8000, "protocol": "TCP"}]


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
        (None, "yahtzee-scoring:2.0.0"),  # appVersion
        ({"image": {"tag": "2.3.4"}}, "yahtzee-scoring:2.3.4"),
        ({"image": {"repository": "registry.example/games/yahtzee", "tag": "sha-abc123"}},
         "registry.example/games/yahtzee:sha-abc123"),
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
    "FORWARDED_ALLOW_IPS", "TENANT_IN_FLIGHT", "TENANT_IN_FLIGHT_WAIT",
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
    ({"resources": {"requests": {"cpu": None}}},
     "at '/resources/requests': missing property 'cpu'"),
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


# --- Optional objects: ServiceMonitor, NetworkPolicy; topologySpreadConstraints ----------------
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


def _seconds(duration: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(int(n) * units[u] for n, u in re.findall(r"([0-9]+)(ms|s|m|h)", duration))


def test_optional_objects_are_off_by_default():
    kinds = {kind for kind, _ in render()}
    assert "ServiceMonitor" not in kinds and "NetworkPolicy" not in kinds


def test_service_monitor_scrapes_the_services_metrics_port():
    objs = render(MONITORING)
    sm = objs[("ServiceMonitor", "rel-yahtzee-scoring")]
    jsonschema.Draft7Validator(SERVICE_MONITOR_SCHEMA).validate(sm)
    svc = objs[("Service", "rel-yahtzee-scoring")]
    # It selects the chart's Service (by its labels, in its namespace) and a port it names.
    assert sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    assert sm["spec"]["namespaceSelector"]["matchNames"] == ["games"]
    (endpoint,) = sm["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in svc["spec"]["ports"]}
    assert endpoint["path"] == "/metrics"
    assert _seconds(endpoint["scrapeTimeout"]) <= _seconds(endpoint["interval"]) == 15
    assert sm["metadata"]["labels"]["release"] == "kube-prometheus"
    # With the ServiceMonitor, the scrape annotations can go (no double scrape).
    pod = deployment(objs)["spec"]["template"]["metadata"]
    assert "prometheus.io/scrape" not in pod.get("annotations", {})


def test_network_policy_lets_in_only_the_service_port_and_nothing_out():
    objs = render(MONITORING)
    np = objs[("NetworkPolicy", "rel-yahtzee-scoring")]
    pod_labels = deployment(objs)["spec"]["template"]["metadata"]["labels"]
    assert np["spec"]["podSelector"]["matchLabels"].items() <= pod_labels.items()
    assert np["spec"]["policyTypes"] == ["Ingress", "Egress"]
    (rule,) = np["spec"]["ingress"]
    assert rule["ports"] == [{"port": "http", "protocol": "TCP"}]
    peers = rule["from"]
    assert MONITORING["networkPolicy"]["from"][0] in peers  # the ingress controller
    assert MONITORING["networkPolicy"]["metricsFrom"][0] in peers  # Prometheus
    # and the release's `helm test` pod, which the policy itself does not select
    hook = objs[("Pod", "rel-yahtzee-scoring-test-connection")]
    test_peer = next(p for p in peers if "podSelector" in p)
    assert test_peer["podSelector"]["matchLabels"].items() <= hook["metadata"]["labels"].items()
    assert np["spec"]["egress"] == []
    # Without `from`, anyone may connect to the port (the policy still closes the rest).
    open_np = render({"networkPolicy": {"enabled": True}})[("NetworkPolicy",
                                                            "rel-yahtzee-scoring")]
    assert "from" not in open_np["spec"]["ingress"][0]
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
