"""The Helm chart, rendered offline by Helm's own library and checked against the Kubernetes schemas.

helm-python-sdk binds Helm's Go SDK (bundled in the wheel), so lint, schema validation and rendering are the
real Helm code paths, with no helm binary, no cluster and no network. kubernetes-validate ships the Kubernetes
JSON schemas; every rendered object is validated in strict mode (unknown fields are errors) against one
Kubernetes version. The ServiceMonitor is a CRD with no schema there, so it gets a structural check instead.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes_validate
import pytest
import yaml

CHART = Path(__file__).resolve().parents[2] / "helm" / "fisk-chatops"
KUBE_VERSION = "1.30.0"
RELEASE = "rel"
NAMESPACE = "ops"
FULLNAME = "rel-fisk-chatops"
CRDS = {("monitoring.coreos.com/v1", "ServiceMonitor")}

EXTERNAL_SECRET = {"internal": {"enabled": False}, "external": {"existingSecret": "redis-creds", "key": "url"}}
# Every install must name its approvers (the chart refuses otherwise, as the slack role would at start-up);
# render(), notes() and lint() add this unless a test's values say something about approval.
APPROVERS = {"config": {"approval": {"approvers": {"users": ["U0APPROVER"]}}}}


def with_approvers(values: dict[str, Any] | None) -> dict[str, Any]:
    merged = copy.deepcopy(values or {})
    config = merged.setdefault("config", {})
    if "approval" not in config:
        config["approval"] = copy.deepcopy(APPROVERS["config"]["approval"])
    return merged


SECRET_VALUES = ("xoxb-trial-bot-token", "xapp-trial-app-token", "trial-signing-secret", "sk-ant-trial-key")

Manifest = dict[str, Any]


@pytest.fixture(scope="module")
def chart():
    with helm.Chart.load(CHART) as loaded:
        yield loaded


def render(chart: helm.Chart, values: dict[str, Any] | None = None) -> dict[tuple[str, str], Manifest]:
    """Render like `helm template rel CHART -n ops -f values`; objects keyed by (kind, name)."""
    files = chart.render(with_approvers(values), name=RELEASE, namespace=NAMESPACE, is_install=True)
    objects: dict[tuple[str, str], Manifest] = {}
    for path, text in files.items():
        if path.endswith("NOTES.txt"):
            continue
        for doc in yaml.safe_load_all(text):
            if doc:
                key = (doc["kind"], doc["metadata"]["name"])
                assert key not in objects, f"{key} rendered twice"
                objects[key] = doc
    return objects


def notes(chart: helm.Chart, values: dict[str, Any] | None = None) -> str:
    files = chart.render(with_approvers(values), name=RELEASE, namespace=NAMESPACE, is_install=True)
    return next(text for path, text in files.items() if path.endswith("NOTES.txt"))


def deployments(objects: dict[tuple[str, str], Manifest]) -> dict[str, Manifest]:
    """Role -> Deployment."""
    return {
        obj["metadata"]["labels"]["app.kubernetes.io/component"]: obj
        for (kind, _), obj in objects.items()
        if kind == "Deployment"
    }


def container(deployment: Manifest) -> Manifest:
    (main,) = [c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == "fisk-chatops"]
    return main


def env(deployment: Manifest) -> dict[str, Manifest]:
    return {e["name"]: e for e in container(deployment)["env"]}


def validate_all(objects: dict[tuple[str, str], Manifest]) -> None:
    for (kind, name), obj in objects.items():
        if (obj["apiVersion"], kind) in CRDS:
            check_service_monitor(obj)
            continue
        try:
            kubernetes_validate.validate(obj, KUBE_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path)
            pytest.fail(f"{kind}/{name} is not valid Kubernetes {KUBE_VERSION}: {where}: {exc.message}")


def check_service_monitor(obj: Manifest) -> None:
    """No schema ships for this CRD: check the fields the Prometheus Operator needs."""
    assert obj["metadata"]["name"] and obj["metadata"]["namespace"] == NAMESPACE
    spec = obj["spec"]
    assert set(spec) <= {"selector", "namespaceSelector", "endpoints", "jobLabel"}
    assert spec["selector"]["matchLabels"]
    for endpoint in spec["endpoints"]:
        assert set(endpoint) <= {"port", "path", "interval", "scrapeTimeout", "scheme"}


def render_error(chart: helm.Chart, values: dict[str, Any]) -> str:
    with pytest.raises(helm.HelmError) as caught:
        chart.render(values, name=RELEASE, namespace=NAMESPACE)
    return str(caught.value)


# --- lint ------------------------------------------------------------------------------------------------------


def test_versions_and_metadata(chart):
    assert helm.helm_sdk_version().startswith("v")
    assert chart.metadata["apiVersion"] == "v2"
    assert chart.metadata["appVersion"] == "0.1.0"
    assert chart.schema is not None


@pytest.mark.parametrize(
    "values",
    [
        None,
        {"roles": {"mode": "combined", "combined": {"replicas": 3}}},
        {"redis": EXTERNAL_SECRET, "slack": {"mode": "http"}, "monitoring": {"serviceMonitor": {"enabled": True}},
         "roles": {"runner": {"autoscaling": {"enabled": True}}}},
    ],
    ids=["defaults", "combined", "external-http-hpa-monitor"],
)
def test_lint_passes_strict(values):
    report = helm.lint(CHART, with_approvers(values), strict=True, kube_version=f"v{KUBE_VERSION}",
                       namespace=NAMESPACE)
    problems = [m for m in report["messages"] if m["severity"] >= 2]  # 2 warning, 3 error
    assert report["errors"] == [] and problems == [], json.dumps(report, indent=1)


def test_lint_reports_bad_values():
    report = helm.lint(CHART, {"roles": {"mode": "bogus"}})
    assert any("/roles/mode" in e and "split" in e for e in report["errors"]), report


# --- default values: split roles, in-chart Redis, Socket Mode --------------------------------------------------


def test_defaults_render_split_roles_and_validate(chart):
    objects = render(chart)
    validate_all(objects)
    deps = deployments(objects)
    assert set(deps) == {"slack", "agent", "runner"}
    for role, dep in deps.items():
        assert dep["metadata"]["name"] == f"{FULLNAME}-{role}"
        assert dep["spec"]["replicas"] == 1
        args = container(dep)["args"]
        assert args[:3] == ["serve", "--role", role]
        assert args[args.index("--health-port") + 1] == "8080"
        assert args[args.index("--config") + 1] == "/etc/fisk-chatops/config.yaml"
    kinds = {kind for kind, _ in objects}
    assert kinds == {"ConfigMap", "Deployment", "Service", "StatefulSet", "PodDisruptionBudget", "ServiceAccount",
                     "NetworkPolicy"}
    assert ("Secret", FULLNAME) not in objects  # tokens come from a Secret the user creates


def test_probes_and_ports(chart):
    for dep in deployments(render(chart)).values():
        main = container(dep)
        assert main["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
        assert main["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
        assert {p["name"]: p["containerPort"] for p in main["ports"]} == {"health": 8080}


def test_security_context(chart):
    objects = render(chart)
    for dep in deployments(objects).values():
        pod = dep["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == 10001
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["automountServiceAccountToken"] is False
        sc = container(dep)["securityContext"]
        assert sc["runAsNonRoot"] is True and sc["runAsUser"] == 10001
        assert sc["readOnlyRootFilesystem"] is True
        assert sc["allowPrivilegeEscalation"] is False
        assert sc["capabilities"] == {"drop": ["ALL"]}
        assert sc["seccompProfile"] == {"type": "RuntimeDefault"}
        mounts = {m["mountPath"]: m["name"] for m in container(dep)["volumeMounts"]}
        volumes = {v["name"]: v for v in pod["volumes"]}
        for writable in ("/tmp", "/var/lib/fisk-chatops"):
            assert "emptyDir" in volumes[mounts[writable]]
    redis = objects[("StatefulSet", f"{FULLNAME}-redis")]["spec"]["template"]["spec"]
    assert redis["securityContext"]["runAsNonRoot"] is True
    assert redis["containers"][0]["securityContext"]["readOnlyRootFilesystem"] is True
    assert redis["containers"][0]["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_secrets_are_references_and_each_role_gets_only_its_own(chart):
    deps = deployments(render(chart))
    expected = {
        "slack": {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"},
        "agent": {"ANTHROPIC_API_KEY"},
        "runner": set(),
    }
    secret_names = {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "ANTHROPIC_API_KEY"}
    for role, dep in deps.items():
        variables = env(dep)
        assert secret_names & set(variables) == expected[role], role
        for name in expected[role]:
            assert "value" not in variables[name]
            assert variables[name]["valueFrom"]["secretKeyRef"] == {"name": FULLNAME, "key": name}


def test_config_map_and_checksum_annotation(chart):
    objects = render(chart)
    config = yaml.safe_load(objects[("ConfigMap", FULLNAME)]["data"]["config.yaml"])
    assert config["applications"][0]["binary"] == "/opt/fisk/demo/opsctl"
    assert "url" not in config.get("redis", {})
    assert config["slack"] == {"mode": "socket", "http_port": 3000, "http_path": "/slack/events"}
    before = {role: dep["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
              for role, dep in deployments(objects).items()}
    assert len(set(before.values())) == 1 and len(next(iter(before.values()))) == 64
    for dep in deployments(objects).values():
        volumes = {v["name"]: v for v in dep["spec"]["template"]["spec"]["volumes"]}
        assert volumes["config"]["configMap"]["name"] == FULLNAME
        mount = next(m for m in container(dep)["volumeMounts"] if m["name"] == "config")
        assert mount["mountPath"] == "/etc/fisk-chatops/config.yaml" and mount["readOnly"] is True
    changed = render(chart, {"config": {"tool_search": False}})
    after = {role: dep["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
             for role, dep in deployments(changed).items()}
    assert all(after[role] != before[role] for role in before)


def test_internal_redis(chart):
    objects = render(chart)
    sts = objects[("StatefulSet", f"{FULLNAME}-redis")]
    redis = sts["spec"]["template"]["spec"]["containers"][0]
    assert redis["image"] == "redis:7-alpine"
    assert redis["args"][redis["args"].index("--appendonly") + 1] == "yes"
    assert sts["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] == "1Gi"
    service = objects[("Service", f"{FULLNAME}-redis")]
    assert service["spec"]["selector"] == sts["spec"]["selector"]["matchLabels"]
    for dep in deployments(objects).values():
        assert env(dep)["REDIS_URL"] == {"name": "REDIS_URL", "value": f"redis://{FULLNAME}-redis:6379/0"}
    # Only the app pods may reach the password-less Redis.
    policy = objects[("NetworkPolicy", f"{FULLNAME}-redis")]["spec"]
    assert policy["podSelector"]["matchLabels"] == sts["spec"]["selector"]["matchLabels"]
    (rule,) = policy["ingress"]
    app_labels = deployments(objects)["agent"]["spec"]["template"]["metadata"]["labels"]
    assert all(app_labels[k] == v for k, v in rule["from"][0]["podSelector"]["matchLabels"].items())
    # The health service must select app pods only, never the Redis pod.
    health = objects[("Service", f"{FULLNAME}-health")]["spec"]["selector"]
    redis_labels = sts["spec"]["template"]["metadata"]["labels"]
    assert not all(redis_labels.get(k) == v for k, v in health.items())


def test_internal_redis_without_persistence(chart):
    objects = render(chart, {"redis": {"internal": {"persistence": {"enabled": False}}}})
    validate_all(objects)
    sts = objects[("StatefulSet", f"{FULLNAME}-redis")]["spec"]
    assert "volumeClaimTemplates" not in sts
    assert any(v["name"] == "data" and "emptyDir" in v for v in sts["template"]["spec"]["volumes"])


def test_pod_disruption_budget_per_role(chart):
    objects = render(chart)
    pdbs = {name: obj for (kind, name), obj in objects.items() if kind == "PodDisruptionBudget"}
    assert set(pdbs) == {f"{FULLNAME}-{role}" for role in ("slack", "agent", "runner")}
    for role, dep in deployments(objects).items():
        assert pdbs[f"{FULLNAME}-{role}"]["spec"]["selector"] == dep["spec"]["selector"]


def test_notes_tell_the_next_steps(chart):
    text = notes(chart)
    assert f"create secret generic {FULLNAME}" in text
    assert "SLACK_APP_TOKEN=xapp-" in text and "SLACK_SIGNING_SECRET" not in text
    assert "config/slack-manifest.yaml" in text
    assert "/readyz" in text
    assert f"logs -f deploy/{FULLNAME}-runner" in text


@pytest.mark.parametrize(
    "values",
    [None, {"slack": {"mode": "http"}, "config": {"slack": {"allowed_channels": ["C1"]},
                                                    "approval": {"approvers": {"users": ["U1"]}}}},
     {"config": {"approval": {"anyone_may_approve": True},
                 "slack": {"direct_messages": "allowed_users", "allowed_users": ["U1"],
                           "direct_message_tools": {"include": {"tags": ["impact:ro"]}},
                           "rate_limit": {"window_seconds": 30, "per_user": 5, "per_channel": 0}}}}],
    ids=["defaults", "http-with-slack-and-approval-settings", "anyone-may-approve-and-slack-access"],
)
def test_rendered_config_is_accepted_by_the_app(chart, values):
    """The ConfigMap is parsed by the app's own configuration model (extra keys forbidden), and passes the slack
    role's start-up check of the approval policy."""
    from bot.config import Config, parse_config, parse_yaml
    from bot.slack.app import slack_policy
    from bot.slack.settings import SlackSettings

    config = parse_yaml(render(chart, values)[("ConfigMap", FULLNAME)]["data"]["config.yaml"])
    if "slack" not in Config.model_fields:  # until the Config model embeds the slack: section itself
        SlackSettings.model_validate(config.pop("slack"))
    parsed = parse_config(config, "configmap config.yaml")
    assert slack_policy(parsed.approval).forbid_self_approval is True
    if values and "direct_messages" in str(values):
        assert parsed.slack.direct_message_access == "allowed_users" and parsed.slack.rate_limit.per_user == 5


def test_durability_reaches_the_app_configuration(chart):
    """redis.durability (WAIT for replicas) is written into the ConfigMap as given, and the app reads it."""
    from bot.config import durability_settings, parse_config, parse_yaml
    from bot.redis_durable import DurabilitySettings

    approval = {"approval": {"anyone_may_approve": True}}
    for given, expected in ((None, DurabilitySettings(None, 1000)), ({"replicas": 2, "timeout_ms": 300},
                                                                     DurabilitySettings(2, 300))):
        values = {"config": {**approval, **({"redis": {"durability": given}} if given else {})}}
        config = parse_yaml(render(chart, values)[("ConfigMap", FULLNAME)]["data"]["config.yaml"])
        config.pop("slack", None)
        assert durability_settings(parse_config(config, "configmap config.yaml")) == expected


def test_added_secret_output_shapes_reach_the_runner(chart):
    """execution.secret_output (argv shapes whose whole output is a secret's value) is rendered as given and read by
    the app; the defaults add nothing to the built-in shapes (which cannot be turned off)."""
    from bot.config import parse_config, parse_yaml
    from bot.sanitize.secret_argv import NO_SHAPES, SecretArgvShapes
    from bot.wiring import execution_limits

    def shapes(values):
        config = parse_yaml(render(chart, values)[("ConfigMap", FULLNAME)]["data"]["config.yaml"])
        config.pop("slack", None)
        return execution_limits(parse_config(config, "configmap config.yaml")).secret_output

    assert shapes(None) == NO_SHAPES
    added = {"commands": ["creds show"], "field_options": ["-f"], "query_options": [], "reveal_options": []}
    assert shapes({"config": {"execution": {"secret_output": added}}}) == SecretArgvShapes.of(
        ["creds show"], ["-f"])


def test_private_decision_key_only_where_decisions_are_made(chart):
    """slack and agent pods mount the signing key, runner pods only the public keys (README threat model)."""
    for values, expected in (
        (None, {"slack": {"decision-key"}, "agent": {"decision-key"}, "runner": {"decision-public"}}),
        ({"roles": {"mode": "combined"}}, {"combined": {"decision-key", "decision-public"}}),
    ):
        objects = render(chart, values)
        for role, deployment in deployments(objects).items():
            volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
            assert {"decision-key", "decision-public"} & set(volumes) == expected[role], role
            mounts = {m["name"] for m in container(deployment)["volumeMounts"]}
            assert {"decision-key", "decision-public"} & mounts == expected[role], role
        if "slack" in expected:
            spec = deployments(objects)["slack"]["spec"]["template"]["spec"]
            key = next(v for v in spec["volumes"] if v["name"] == "decision-key")
            assert key["secret"]["secretName"] == f"{FULLNAME}-decision-key"
    config = yaml.safe_load(render(chart)[("ConfigMap", FULLNAME)]["data"]["config.yaml"])
    assert config["decisions"]["signing_key_file"] == "/etc/fisk-chatops/decision-key/signing.key"
    assert config["decisions"]["public_key_files"] == ["/etc/fisk-chatops/decision-public"]


# --- combined mode ---------------------------------------------------------------------------------------------


def test_combined_mode(chart):
    objects = render(chart, {"roles": {"mode": "combined", "combined": {"replicas": 3}}})
    validate_all(objects)
    deps = deployments(objects)
    assert set(deps) == {"combined"}
    dep = deps["combined"]
    assert dep["spec"]["replicas"] == 3
    assert container(dep)["args"][:3] == ["serve", "--role", "all"]
    assert {"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "ANTHROPIC_API_KEY", "REDIS_URL"} <= set(env(dep))
    pdbs = [name for kind, name in objects if kind == "PodDisruptionBudget"]
    assert pdbs == [f"{FULLNAME}-combined"]


# --- external Redis --------------------------------------------------------------------------------------------


def test_external_redis_from_existing_secret(chart):
    objects = render(chart, {"redis": EXTERNAL_SECRET, "secrets": {"existingSecret": "slack-and-anthropic",
                                                                   "keys": {"slackBotToken": "bot"}}})
    validate_all(objects)
    assert ("StatefulSet", f"{FULLNAME}-redis") not in objects
    assert ("Service", f"{FULLNAME}-redis") not in objects
    assert ("NetworkPolicy", f"{FULLNAME}-redis") not in objects
    deps = deployments(objects)
    for dep in deps.values():
        assert env(dep)["REDIS_URL"]["valueFrom"]["secretKeyRef"] == {"name": "redis-creds", "key": "url"}
    slack = env(deps["slack"])
    assert slack["SLACK_BOT_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "slack-and-anthropic", "key": "bot"}


def test_external_redis_url(chart):
    url = "rediss://:s3cret-pw@redis.example.internal:6380/0"
    values = {"redis": {"internal": {"enabled": False}, "external": {"url": url}}}
    objects = render(chart, values)
    validate_all(objects)
    for dep in deployments(objects).values():
        assert env(dep)["REDIS_URL"] == {"name": "REDIS_URL", "value": url}
    text = notes(chart, values)
    assert "rediss://***@redis.example.internal:6380/0" in text and "s3cret-pw" not in text


# --- HTTP mode, HPA, ServiceMonitor, fisk apps, trial secret ---------------------------------------------------


def test_http_mode_hpa_and_service_monitor(chart):
    objects = render(chart, {
        "redis": EXTERNAL_SECRET,
        "slack": {"mode": "http"},
        "monitoring": {"serviceMonitor": {"enabled": True, "labels": {"release": "prom"}}},
        "roles": {"runner": {"autoscaling": {"enabled": True, "minReplicas": 2, "maxReplicas": 7,
                                             "targetMemoryUtilizationPercentage": 80}}},
    })
    validate_all(objects)
    deps = deployments(objects)

    slack = objects[("Service", f"{FULLNAME}-slack")]
    assert slack["spec"]["selector"]["app.kubernetes.io/component"] == "slack"
    assert slack["spec"]["ports"][0]["targetPort"] == "slack-http"
    ports = {p["name"]: p["containerPort"] for p in container(deps["slack"])["ports"]}
    assert ports == {"health": 8080, "slack-http": 3000}
    assert "slack-http" not in {p["name"] for p in container(deps["agent"])["ports"]}
    slack_env = env(deps["slack"])
    assert "SLACK_SIGNING_SECRET" in slack_env and "SLACK_APP_TOKEN" not in slack_env
    config = yaml.safe_load(objects[("ConfigMap", FULLNAME)]["data"]["config.yaml"])
    assert config["slack"] == {"mode": "http", "http_port": 3000, "http_path": "/slack/events"}

    hpa = objects[("HorizontalPodAutoscaler", f"{FULLNAME}-runner")]
    assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "name": f"{FULLNAME}-runner"}
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (2, 7)
    assert {m["resource"]["name"] for m in hpa["spec"]["metrics"]} == {"cpu", "memory"}
    assert "replicas" not in deps["runner"]["spec"]  # the HPA owns it
    assert deps["agent"]["spec"]["replicas"] == 1

    monitor = objects[("ServiceMonitor", FULLNAME)]
    assert monitor["metadata"]["labels"]["release"] == "prom"
    assert monitor["spec"]["endpoints"][0]["path"] == "/metrics"
    assert monitor["spec"]["endpoints"][0]["port"] == "health"
    health = objects[("Service", f"{FULLNAME}-health")]
    assert all(health["metadata"]["labels"][k] == v for k, v in monitor["spec"]["selector"]["matchLabels"].items())


def test_http_mode_combined_routes_slack_service_to_combined_pods(chart):
    objects = render(chart, {"roles": {"mode": "combined"},
                             "slack": {"mode": "http", "http": {"port": 3100, "path": "/events"}},
                             "config": {"slack": {"allowed_channels": ["C123"]}}})
    validate_all(objects)
    assert objects[("Service", f"{FULLNAME}-slack")]["spec"]["selector"]["app.kubernetes.io/component"] == "combined"
    ports = {p["name"]: p["containerPort"] for p in container(deployments(objects)["combined"])["ports"]}
    assert ports == {"health": 8080, "slack-http": 3100}
    config = yaml.safe_load(objects[("ConfigMap", FULLNAME)]["data"]["config.yaml"])
    assert config["slack"] == {"mode": "http", "http_port": 3100, "http_path": "/events", "allowed_channels": ["C123"]}


def test_fisk_apps_init_container_in_every_role(chart):
    """Every role introspects the applications at start (the slack role lists them for /fisk tools)."""
    objects = render(chart, {"fiskApps": {"image": {"repository": "registry.example/ops-tools", "tag": "1.2"},
                                          "sourceDir": "/tools"}})
    validate_all(objects)
    deps = deployments(objects)
    for role in ("slack", "agent", "runner"):
        pod = deps[role]["spec"]["template"]["spec"]
        (init,) = pod["initContainers"]
        assert init["image"] == "registry.example/ops-tools:1.2"
        assert init["command"][-1] == "cp -R /tools/. /opt/fisk/bin/"
        assert init["securityContext"]["readOnlyRootFilesystem"] is True
        assert {"name": "fisk-apps", "mountPath": "/opt/fisk/bin"} in init["volumeMounts"]
        mount = next(m for m in container(deps[role])["volumeMounts"] if m["name"] == "fisk-apps")
        assert mount == {"name": "fisk-apps", "mountPath": "/opt/fisk/bin", "readOnly": True}
        assert {"name": "fisk-apps", "emptyDir": {}} in pod["volumes"]
    # Without fiskApps nothing is mounted over /opt/fisk/bin (a derived image keeps its binaries).
    for dep in deployments(render(chart)).values():
        assert all(m["mountPath"] != "/opt/fisk/bin" for m in container(dep)["volumeMounts"])


def test_fisk_apps_custom_init_containers(chart):
    custom = {"name": "tools", "image": "busybox:1.36", "command": ["sh", "-c", "cp /x /opt/fisk/bin/"],
              "volumeMounts": [{"name": "fisk-apps", "mountPath": "/opt/fisk/bin"}]}
    objects = render(chart, {"roles": {"mode": "combined"}, "fiskApps": {"initContainers": [custom]}})
    validate_all(objects)
    pod = deployments(objects)["combined"]["spec"]["template"]["spec"]
    assert pod["initContainers"] == [custom]
    assert {"name": "fisk-apps", "emptyDir": {}} in pod["volumes"]


def test_trial_secret_is_created_only_on_request(chart):
    values = {"secrets": {"create": True, "values": dict(zip(
        ("slackBotToken", "slackAppToken", "slackSigningSecret", "anthropicApiKey"), SECRET_VALUES, strict=True))}}
    objects = render(chart, values)
    validate_all(objects)
    secret = objects[("Secret", FULLNAME)]
    assert secret["stringData"]["SLACK_BOT_TOKEN"] == SECRET_VALUES[0]
    for dep in deployments(objects).values():
        annotations = dep["spec"]["template"]["metadata"]["annotations"]
        assert len(annotations["checksum/secret"]) == 64
        text = json.dumps(dep)
        assert not any(token in text for token in SECRET_VALUES)  # pods reference the Secret, never the value
    assert "NOT for\n   production" in notes(chart, values)


# --- bad values fail with a clear message ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"roles": {"slack": {"replicas": -1}}}, "/roles/slack/replicas': minimum: got -1, want 0"),
        ({"roles": {"runner": {"replicas": "2"}}}, "/roles/runner/replicas': got string, want integer"),
        ({"roles": {"mode": "bogus"}}, "/roles/mode': value must be one of 'split', 'combined'"),
        ({"slack": {"mode": "rtm"}}, "/slack/mode': value must be one of 'socket', 'http'"),
        ({"redis": {"external": {"url": "http://redis:6379"}, "internal": {"enabled": False}}}, "/redis/external/url"),
        ({"replicaCount": 2}, "additional properties 'replicaCount' not allowed"),
        ({"config": {"applications": [{"binary": "opsctl"}]}}, "/config/applications/0/binary"),
        ({"redis": {"internal": {"enabled": False}}}, "redis: no Redis configured"),
        ({"redis": {"external": {"url": "redis://r:6379/0"}}}, "configure exactly one"),
        ({"redis": {"internal": {"enabled": False}, "external": {"url": "redis://r:6379", "existingSecret": "s"}}},
         "set either url or existingSecret, not both"),
        ({"config": {"redis": {"url": "redis://:pw@r:6379"}}}, "config.redis.url: do not put the Redis URL"),
        ({"config": {"slack": {"mode": "http"}}}, "config.slack.mode: set the chart value slack.mode instead"),
        ({"config": {"slack": {"http_port": 3001}}}, "config.slack.http_port: set the chart value slack.http.port"),
        ({"secrets": {"values": {"anthropicApiKey": "sk-ant-x"}}},
         "secrets.values.anthropicApiKey is set but secrets.create is false"),
        ({"secrets": {"create": True}}, "secrets.create=true needs secrets.values.slackBotToken"),
        ({"roles": {"mode": "combined", "runner": {"autoscaling": {"enabled": True}}}},
         "applies to roles.mode=split only"),
        ({}, "config.approval: name who may approve calls"),
        ({"config": {"approval": {"approvers": {"users": [], "groups": []}, "anyone_may_approve": False}}},
         "or set config.approval.anyone_may_approve=true"),
        ({"config": {"slack": {"direct_messages": "anyone"}}}, "/config/slack/direct_messages"),
        ({"config": {"redis": {"durability": {"replicas": "always"}}}}, "/config/redis/durability/replicas"),
        ({"config": {"redis": {"durability": {"timeout_ms": 0}}}}, "/config/redis/durability/timeout_ms"),
    ],
    ids=["replicas-negative", "replicas-string", "mode-enum", "slack-mode-enum", "redis-url-scheme",
         "unknown-key", "relative-binary", "no-redis", "both-redis", "url-and-secret", "url-in-config",
         "slack-mode-in-config", "slack-port-in-config",
         "token-without-create", "create-without-token", "hpa-in-combined", "no-approvers",
         "empty-approvers", "direct-messages-enum", "durability-replicas", "durability-timeout"],
)
def test_bad_values_fail_clearly(chart, values, message):
    assert message in render_error(chart, values)


def test_schema_validation_alone_names_the_key(chart):
    with pytest.raises(helm.HelmValuesError, match=r"/roles/agent/replicas"):
        chart.validate_schema({"roles": {"agent": {"replicas": -3}}})
    chart.validate_schema({"roles": {"agent": {"replicas": 0}}})


def test_every_option_at_once_renders_valid_objects(chart):
    """A kitchen-sink values file: every optional block on, all objects still valid Kubernetes."""
    objects = render(chart, {
        "image": {"repository": "registry.example/fisk-chatops", "tag": "0.1.0-rc1"},
        "imagePullSecrets": [{"name": "regcred"}],
        "fullnameOverride": "bot",
        "slack": {"mode": "http", "http": {"service": {"type": "LoadBalancer", "annotations": {"a": "b"}}}},
        "roles": {"agent": {"replicas": 0, "extraArgs": ["--verbose"]},
                  "runner": {"autoscaling": {"enabled": True}}},
        "redis": {"internal": {"persistence": {"storageClass": "fast", "size": "5Gi"}}},
        "secrets": {"existingSecret": "bot-tokens"},
        "fiskApps": {"image": {"repository": "tools"}, "command": ["/copy", "/opt/fisk/bin"]},
        "extraEnv": [{"name": "ANTHROPIC_BASE_URL", "value": "https://llm-proxy.example"}],
        "extraEnvFrom": [{"configMapRef": {"name": "proxy"}}],
        "serviceAccount": {"annotations": {"iam": "role"}},
        "podAnnotations": {"x": "y"}, "podLabels": {"team": "ops"},
        "monitoring": {"serviceMonitor": {"enabled": True}},
        "nodeSelector": {"pool": "ops"}, "tolerations": [{"key": "ops", "operator": "Exists"}],
        "affinity": {"podAntiAffinity": {}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": RELEASE}}}],
    })
    validate_all(objects)
    deps = deployments(objects)
    assert deps["agent"]["spec"]["replicas"] == 0
    assert container(deps["agent"])["args"][-1] == "--verbose"
    assert container(deps["agent"])["image"] == "registry.example/fisk-chatops:0.1.0-rc1"
    assert env(deps["runner"])["ANTHROPIC_BASE_URL"]["value"] == "https://llm-proxy.example"
    assert deps["runner"]["spec"]["template"]["spec"]["initContainers"][0]["command"] == ["/copy", "/opt/fisk/bin"]
    assert deps["slack"]["spec"]["template"]["metadata"]["labels"]["team"] == "ops"
    assert {name for kind, name in objects if kind == "Deployment"} == {"bot-slack", "bot-agent", "bot-runner"}
    assert env(deps["slack"])["SLACK_BOT_TOKEN"]["valueFrom"]["secretKeyRef"]["name"] == "bot-tokens"


# --- on call: alert intake -------------------------------------------------------------------------------------


def test_incidents_intake_port_service_and_optional_secrets(chart):
    from bot.config import parse_config

    default = render(chart)
    assert ("Service", f"{FULLNAME}-alerts") not in default
    config = yaml.safe_load(default[("ConfigMap", FULLNAME)]["data"]["config.yaml"])
    assert config["incidents"] == {"enabled": False, "listen": "own", "http_port": 9095}
    assert not any(k.startswith("FISK_CHATOPS_") and k != "FISK_CHATOPS_CONFIG"
                   for dep in deployments(default).values() for k in env(dep))

    routes = [{"name": "web", "channel": "C0123WEB", "match": {"service": "web"}}]
    objects = render(chart, {"incidents": {"enabled": True, "port": 9200},
                             "config": {"incidents": {"routes": routes, "retention_seconds": 86400}}})
    validate_all(objects)
    config = yaml.safe_load(objects[("ConfigMap", FULLNAME)]["data"]["config.yaml"])
    assert config["incidents"]["routes"] == routes and config["incidents"]["http_port"] == 9200
    parse_config(config, "configmap config.yaml")
    service = objects[("Service", f"{FULLNAME}-alerts")]
    assert service["spec"]["selector"]["app.kubernetes.io/component"] == "slack"
    assert service["spec"]["ports"][0]["targetPort"] == "alerts"
    deps = deployments(objects)
    ports = {p["name"]: p["containerPort"] for p in container(deps["slack"])["ports"]}
    assert ports["alerts"] == 9200
    assert "alerts" not in {p["name"] for p in container(deps["agent"]).get("ports", [])}
    slack_env = env(deps["slack"])
    for name in ("FISK_CHATOPS_ALERTMANAGER_TOKEN", "FISK_CHATOPS_ALERTMANAGER_BASIC_AUTH",
                 "FISK_CHATOPS_PAGERDUTY_SECRETS"):
        assert slack_env[name]["valueFrom"]["secretKeyRef"] == {"name": FULLNAME, "key": name, "optional": True}
        assert name not in env(deps["agent"]) and name not in env(deps["runner"])
    combined = deployments(render(chart, {"incidents": {"enabled": True}, "roles": {"mode": "combined"}}))
    assert "FISK_CHATOPS_PAGERDUTY_SECRETS" in env(combined["combined"])
    trial = render(chart, {"incidents": {"enabled": True}, "secrets": {"create": True, "values": {
        "slackBotToken": "xoxb-t", "slackAppToken": "xapp-t", "anthropicApiKey": "sk-ant-t",
        "pagerdutySecrets": "a,b"}}})
    assert trial[("Secret", FULLNAME)]["stringData"]["FISK_CHATOPS_PAGERDUTY_SECRETS"] == "a,b"
    said = notes(chart, {"incidents": {"enabled": True}})
    assert f"http://{FULLNAME}-alerts.{NAMESPACE}.svc:9095/alerts/alertmanager" in said
    assert "FISK_CHATOPS_PAGERDUTY_SECRETS" in said and "Alerts" not in notes(chart)


# --- external Redis: Sentinel, Cluster, ACL users, TLS, passwords from Secrets --------------------------------

SENTINEL = {"internal": {"enabled": False}, "external": {
    "mode": "sentinel", "username": "fisk",
    "password": {"existingSecret": "redis-auth", "key": "data-pw"},
    "sentinel": {"addresses": ["sentinel-0.redis:26379", "sentinel-1.redis:26379", "sentinel-2.redis:26379"],
                 "serviceName": "fisk-primary", "username": "watcher",
                 "password": {"existingSecret": "redis-auth", "key": "sentinel-pw"}}}}
CLUSTER_TLS = {"internal": {"enabled": False}, "external": {
    "mode": "cluster", "existingSecret": "redis-creds", "key": "url", "username": "fisk",
    "password": {"existingSecret": "redis-auth"},
    "tls": {"enabled": True, "existingSecret": "redis-tls-files", "caKey": "ca.pem", "certKey": "client.pem",
            "keyKey": "client-key.pem"}}}


def parsed_config(objects: dict[tuple[str, str], Manifest]) -> Any:
    """The rendered ConfigMap through the app's own configuration model (as the test above does)."""
    from bot.config import Config, parse_config, parse_yaml
    from bot.slack.settings import SlackSettings

    config = parse_yaml(objects[("ConfigMap", FULLNAME)]["data"]["config.yaml"])
    if "slack" not in Config.model_fields:
        SlackSettings.model_validate(config.pop("slack"))
    return parse_config(config, "configmap config.yaml")


def assert_passwords_only_referenced(objects: dict[tuple[str, str], Manifest], expected: dict[str, Any]) -> None:
    configmap = objects[("ConfigMap", FULLNAME)]["data"]["config.yaml"]
    assert "password" not in configmap
    for role, dep in deployments(objects).items():
        variables = env(dep)
        for name, ref in expected.items():
            assert variables[name] == {"name": name, "valueFrom": {"secretKeyRef": ref}}, (role, name)


def test_sentinel_mode_renders_valid_objects_the_app_accepts(chart):
    from bot.config import redis_topology

    objects = render(chart, {"redis": SENTINEL})
    validate_all(objects)
    assert ("StatefulSet", f"{FULLNAME}-redis") not in objects
    parsed = parsed_config(objects)
    assert parsed.redis.mode == "sentinel" and parsed.redis.username == "fisk"
    assert parsed.redis.sentinel.addresses == SENTINEL["external"]["sentinel"]["addresses"]
    assert parsed.redis.sentinel.service_name == "fisk-primary" and parsed.redis.sentinel.username == "watcher"
    topology = redis_topology(parsed)
    assert [f"{host}:{port}" for host, port in topology.sentinels][0] == "sentinel-0.redis:26379"
    assert_passwords_only_referenced(objects, {
        "REDIS_PASSWORD": {"name": "redis-auth", "key": "data-pw"},
        "REDIS_SENTINEL_PASSWORD": {"name": "redis-auth", "key": "sentinel-pw"}})
    for dep in deployments(objects).values():
        assert "REDIS_URL" not in env(dep)  # the sentinels name the primary; a URL would be ignored
        assert "redis-tls" not in {v["name"] for v in dep["spec"]["template"]["spec"]["volumes"]}
    assert "via Sentinel, primary fisk-primary" in notes(chart, {"redis": SENTINEL})


def test_cluster_with_tls_renders_valid_objects_the_app_accepts(chart):
    objects = render(chart, {"redis": CLUSTER_TLS, "config": {"redis": {"shards": 3}}})
    validate_all(objects)
    parsed = parsed_config(objects)
    assert parsed.redis.mode == "cluster" and parsed.redis.shards == 3 and parsed.redis.username == "fisk"
    tls = parsed.redis.tls
    assert tls.enabled and tls.ca_file == "/etc/fisk-chatops/redis-tls/ca.crt"
    assert tls.cert_file == "/etc/fisk-chatops/redis-tls/tls.crt"
    assert tls.key_file == "/etc/fisk-chatops/redis-tls/tls.key"
    assert_passwords_only_referenced(objects, {
        "REDIS_URL": {"name": "redis-creds", "key": "url"},
        "REDIS_PASSWORD": {"name": "redis-auth", "key": "redis-password"}})
    for role, dep in deployments(objects).items():
        assert "REDIS_SENTINEL_PASSWORD" not in env(dep)
        volumes = {v["name"]: v for v in dep["spec"]["template"]["spec"]["volumes"]}
        assert volumes["redis-tls"]["secret"] == {"secretName": "redis-tls-files", "defaultMode": 0o440, "items": [
            {"key": "ca.pem", "path": "ca.crt"}, {"key": "client.pem", "path": "tls.crt"},
            {"key": "client-key.pem", "path": "tls.key"}]}, role
        mount = next(m for m in container(dep)["volumeMounts"] if m["name"] == "redis-tls")
        assert mount == {"name": "redis-tls", "mountPath": "/etc/fisk-chatops/redis-tls", "readOnly": True}


def test_tls_without_files_uses_system_cas(chart):
    values = {"internal": {"enabled": False}, "external": {"url": "rediss://redis.example:6380/0",
                                                           "tls": {"enabled": True}}}
    objects = render(chart, {"redis": values})
    validate_all(objects)
    tls = parsed_config(objects).redis.tls
    assert tls.enabled and tls.ca_file is None and tls.cert_file is None


def test_standalone_defaults_write_only_the_mode(chart):
    redis = parsed_config(render(chart)).redis
    assert (redis.mode, redis.username, redis.tls.enabled, redis.sentinel.addresses) == ("standalone", None, False, [])


def external(**changes: Any) -> dict[str, Any]:
    return {"redis": {"internal": {"enabled": False}, "external": changes}}


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (external(mode="sentinel", sentinel={"addresses": ["s:26379"]}), "needs redis.external.sentinel.addresses"),
        (external(mode="sentinel", url="redis://x:6379", sentinel={"addresses": ["s:26379"], "serviceName": "m"}),
         "leave redis.external.url"),
        (external(url="redis://x:6379", sentinel={"serviceName": "m"}), "but redis.external.mode is standalone"),
        (external(mode="cluster"), "mode=cluster needs redis.external.url"),
        (external(url="redis://x:6379", tls={"existingSecret": "t"}), "tls.enabled is false"),
        (external(url="redis://x:6379", tls={"enabled": True, "existingSecret": "t", "certKey": "c"}),
         "set both certKey and keyKey"),
        (external(url="redis://x:6379", tls={"enabled": True, "certKey": "c", "keyKey": "k"}),
         "need redis.external.tls.existingSecret"),
        ({"redis": {"external": {"password": {"existingSecret": "p"}}}}, "set redis.internal.enabled=false"),
        ({"redis": EXTERNAL_SECRET, "config": {"redis": {"mode": "cluster"}}}, "config.redis.mode: set the chart"),
        ({"redis": EXTERNAL_SECRET, "config": {"redis": {"tls": {"enabled": True}}}}, "config.redis.tls"),
        (external(mode="replica"), "mode"),
        (external(mode="sentinel", sentinel={"addresses": ["no-port"], "serviceName": "m"}), "addresses"),
    ],
)
def test_bad_redis_values_fail_clearly(chart, values, message):
    assert message in render_error(chart, with_approvers(values))


def test_chart_readme_sentinel_tls_example_renders(chart):
    """The example in the chart README is kept working: strict lint, valid objects, the app accepts the config."""
    text = (CHART / "README.md").read_text()
    block = text.split("```yaml\n", 1)[1].split("```", 1)[0]
    example = yaml.safe_load(block)
    assert set(example) == {"redis"}
    report = helm.lint(CHART, with_approvers(example), strict=True, kube_version=f"v{KUBE_VERSION}",
                       namespace=NAMESPACE)
    assert report["errors"] == [] and [m for m in report["messages"] if m["severity"] >= 2] == [], report
    objects = render(chart, example)
    validate_all(objects)
    redis = parsed_config(objects).redis
    assert redis.mode == "sentinel" and redis.sentinel.tls
    assert redis.tls.cert_file == "/etc/fisk-chatops/redis-tls/tls.crt"
    assert_passwords_only_referenced(objects, {
        "REDIS_PASSWORD": {"name": "redis-auth", "key": "data-password"},
        "REDIS_SENTINEL_PASSWORD": {"name": "redis-auth", "key": "sentinel-password"}})


def set_values(flags: list[str]) -> dict[str, Any]:
    """Values from `helm install`'s `--set a.b=c` flags as the README writes them (`{x,y}` is a list)."""
    values: dict[str, Any] = {}
    for flag in flags:
        path, value = flag.strip("'").split("=", 1)
        *parents, last = path.split(".")
        node = values
        for key in parents:
            node = node.setdefault(key, {})
        if value.startswith("{") and value.endswith("}"):
            node[last] = value[1:-1].split(",")
        else:
            node[last] = {"true": True, "false": False}.get(value, value)
    return values


def test_readme_helm_install_commands_render(chart):
    """Each `helm install` a newcomer copies from the READMEs renders as written: no approvers added for it."""
    root_readme = CHART.parents[1] / "README.md"
    for readme in (CHART / "README.md", root_readme):
        commands = readme.read_text().replace("\\\n", " ").split("helm install fisk-chatops helm/fisk-chatops")[1:]
        assert commands, readme
        for command in commands:
            words = command.split("\n", 1)[0].split("#", 1)[0].split()
            flags = [words[i + 1] for i, word in enumerate(words) if word == "--set"]
            chart.render(set_values(flags), name="fisk-chatops", namespace="default", is_install=True)
