"""The Helm chart: lint, render and Kubernetes-schema validation, all in-process and offline.

Rendering and linting use helm-python-sdk (import name `helm_python`), which binds Helm's own
Go SDK (Helm v4) through a bundled shared library: the same template engine and linter as the
`helm` binary, which is not installable here. Rendered objects are checked against the
Kubernetes OpenAPI schemas shipped in kubernetes-validate (strict: unknown fields fail), for
the oldest Kubernetes the chart supports and the newest the package knows.
"""

from __future__ import annotations

import re
from pathlib import Path

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "helm" / "yahtzee-scoring"
KUBE_VERSIONS = ("1.25.0", kubernetes_validate.latest_version())
INFO = 1  # helm lint severities: 1 info, 2 warning, 3 error


def render(values: dict | None = None) -> dict[tuple[str, str], dict]:
    """Rendered objects by (kind, name); NOTES.txt under ('NOTES', '')."""
    with helm.Chart.load(CHART) as chart:
        files = chart.render(values or {}, name="rel", namespace="games", is_install=True)
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


@pytest.mark.parametrize(
    "values",
    [
        None,
        {"ingress": {"enabled": True, "className": "nginx"}},
        {"autoscaling": {"enabled": False}},
    ],
    ids=["defaults", "ingress", "no-hpa"],
)
def test_lint_strict_is_clean(values):
    report = helm.lint(CHART, values, strict=True, kube_version="1.25.0")
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
    ],
    ids=["defaults", "ingress-tls", "single-nodeport", "extra-env"],
)
def test_rendered_objects_match_the_kubernetes_schemas(values, kube):
    objs = render(values)
    for (kind, name), doc in objs.items():
        if kind == "NOTES":
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
         "PodDisruptionBudget", "Pod", "NOTES"]
    )  # Pod: the `helm test` hook; no Ingress by default
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
        (None, "yahtzee-scoring:1.0.0"),  # appVersion
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
    read = set(re.findall(r'(?:_env_\w+|environ\.get)\(\s*"([A-Z][A-Z0-9_]+)"',
                          (ROOT / "service/config.py").read_text()))
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
