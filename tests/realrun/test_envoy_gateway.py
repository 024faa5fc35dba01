"""Envoy Gateway in the real run, offline (tools/realrun/controllers/envoy_gateway.py): how its chart is
staged and its process started, and how the run's lines judge what it wrote."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.model.catalog.stack_config import parse_settings
from components.model.settings.stack import StackSettings
from tests.admission.layers import cluster
from tests.k8s_schema import require_crds, validate_custom
from tests.rbac import UserInfo
from tests.support import objects_of_kind
from tools.plan.harness import ProgramRun, stack_config
from tools.realrun.conditions import stood_in_kinds
from tools.realrun.controllers import envoy_gateway as eg
from tools.realrun.controllers.chart import ChartError, container_env, identity

EG = "envoy-gateway"
STAND_IN = "python-requests"


def _settings() -> StackSettings:
    config, _ = stack_config("dev")
    return parse_settings(config, "Pulumi.dev.yaml")


def test_envoy_gateway_runs_for_the_dev_stack_with_the_pinned_chart() -> None:
    settings = _settings()
    assert eg.runs(settings)
    assert eg.chart_values(settings)["config"]["envoyGateway"]["envoyProxy"]["provider"]["type"] == "Kubernetes"


def test_the_stand_in_never_serves_a_gateway_api_kind_while_envoy_gateway_runs() -> None:
    kinds = stood_in_kinds(eg.SERVED)
    assert ("gateway.networking.k8s.io", "Gateway") not in kinds
    assert not [k for k in kinds if k[0] in (eg.GATEWAY_API, eg.ENVOY_API)]
    assert ("cert-manager.io", "Certificate") in kinds


def test_release_values_fill_in_the_image_as_upstreams_release_does() -> None:
    template = "image: ${GatewayImage}\npullPolicy: ${GatewayImagePullPolicy}\n"
    assert eg.release_values_file(template) == "image: docker.io/envoyproxy/gateway:v1.9.1\npullPolicy: IfNotPresent\n"
    with pytest.raises(ChartError, match="GatewayImage"):
        eg.release_values_file("image: docker.io/envoyproxy/gateway:v1.9.1\n")


def test_the_staged_chart_has_a_values_file_and_keeps_the_source(tmp_path: Path) -> None:
    source = tmp_path / "module" / "gateway-helm"
    (source / "templates").mkdir(parents=True)
    (source / "values.tmpl.yaml").write_text("image: ${GatewayImage}\npolicy: ${GatewayImagePullPolicy}\n")
    (source / "templates" / "a.yaml").write_text("kind: ConfigMap\n")
    for path in (source / "templates" / "a.yaml", source / "values.tmpl.yaml", source / "templates", source):
        path.chmod(0o555 if path.is_dir() else 0o444)  # the module cache is read-only
    staged = eg.staged_chart(source, tmp_path / "out")
    assert (staged / "values.yaml").read_text().startswith("image: docker.io/envoyproxy/gateway:v1.9.1")
    assert (staged / "templates" / "a.yaml").read_text() == "kind: ConfigMap\n"
    assert not (source / "values.yaml").exists()


def _deployment() -> dict[str, Any]:
    return {
        "kind": "Deployment",
        "metadata": {"name": EG, "namespace": "envoy-gateway-system"},
        "spec": {
            "template": {
                "spec": {
                    "serviceAccountName": EG,
                    "volumes": [
                        {"name": "envoy-gateway-config", "configMap": {"name": "envoy-gateway-config"}},
                        {"name": "certs", "secret": {"secretName": EG}},
                    ],
                    "containers": [
                        {
                            "name": EG,
                            "args": ["server", "--config-path=/config/envoy-gateway.yaml"],
                            "env": [
                                {
                                    "name": "ENVOY_GATEWAY_NAMESPACE",
                                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
                                },
                                {"name": "KUBERNETES_CLUSTER_DOMAIN", "value": "cluster.local"},
                            ],
                            "volumeMounts": [
                                {"name": "envoy-gateway-config", "mountPath": "/config"},
                                {"name": "certs", "mountPath": "/certs"},
                            ],
                        }
                    ],
                }
            }
        },
    }


def test_the_config_volume_is_a_host_folder_and_the_env_is_the_pods() -> None:
    deployment = _deployment()
    mount = eg.config_mount(deployment, "envoy-gateway-config")
    assert mount == "/config"
    assert eg.host_args(["server", "--config-path=/config/envoy-gateway.yaml"], mount, Path("/run/eg")) == [
        "server",
        "--config-path=/run/eg/envoy-gateway.yaml",
    ]
    with pytest.raises(ChartError, match="reads its config"):
        eg.host_args(["server"], mount, Path("/run/eg"))
    with pytest.raises(ChartError, match="mounts no ConfigMap"):
        eg.config_mount(deployment, "other")
    assert container_env([deployment], EG, EG) == {
        "ENVOY_GATEWAY_NAMESPACE": "envoy-gateway-system",
        "KUBERNETES_CLUSTER_DOMAIN": "cluster.local",
    }


def test_a_hook_job_gives_its_own_identity() -> None:
    job = {
        "kind": "Job",
        "metadata": {"name": "gateway-helm-certgen", "namespace": "egs"},
        "spec": {"template": {"spec": {"serviceAccountName": "gateway-helm-certgen",
                                       "containers": [{"name": "envoy-gateway-certgen", "args": []}]}}},
    }  # fmt: skip
    account = {"kind": "ServiceAccount", "metadata": {"name": "gateway-helm-certgen", "namespace": "egs"}}
    found = identity([job, account], "gateway-helm-certgen", "envoy-gateway-certgen", kind="Job")
    assert found.username == "system:serviceaccount:egs:gateway-helm-certgen"
    with pytest.raises(ChartError, match="no Deployment gateway-helm-certgen"):
        identity([job, account], "gateway-helm-certgen", "envoy-gateway-certgen")


def test_the_process_gets_the_charts_volumes_in_a_private_mount_namespace() -> None:
    command = eg.command(Path("/bin/envoy-gateway"), ["server", "--config-path=/x/envoy-gateway.yaml"])
    assert command[:5] == ["unshare", "--mount", "--propagation", "private", "sh"]
    script = command[6]
    assert "tmpfs" in script and " /certs" in script and " /var/lib" in script and script.endswith('exec "$@"')
    assert command[-3:] == ["/bin/envoy-gateway", "server", "--config-path=/x/envoy-gateway.yaml"]


def _condition(kind: str, status: str, reason: str = "Ok") -> dict[str, str]:
    return {"type": kind, "status": status, "reason": reason, "message": ""}


def _managed(*managers: str) -> list[dict[str, str]]:
    return [{"manager": m, "subresource": "status"} for m in managers]


def _gateway(programmed: dict[str, str], manager: str) -> dict[str, Any]:
    return {
        "metadata": {"name": "platform", "namespace": "tenancy-gateway", "managedFields": _managed(manager)},
        "status": {
            "addresses": [{"type": "IPAddress", "value": "10.0.0.9"}],
            "conditions": [_condition("Accepted", "True"), programmed],
            "listeners": [{"name": "https", "conditions": [_condition("Programmed", "True")]}],
        },
    }


def test_the_gateway_counts_as_programmed_only_by_envoy_gateway() -> None:
    assert eg.programmed(_gateway(_condition("Programmed", "True"), EG))[0]
    # No address (the default LoadBalancer Service on kind): not Programmed.
    ok, why = eg.programmed(_gateway(_condition("Programmed", "False", "AddressNotAssigned"), EG))
    assert not ok and "AddressNotAssigned" in why
    # The stand-in's condition is never Envoy Gateway's.
    ok, why = eg.programmed(_gateway(_condition("Programmed", "True", "RealRunStandIn"), STAND_IN))
    assert not ok and "stand-in" in why and STAND_IN in why


def _route(parents: list[dict[str, Any]], manager: str = EG) -> dict[str, Any]:
    return {
        "kind": "HTTPRoute",
        "metadata": {"name": "web", "namespace": "tenant-a-prod", "managedFields": _managed(manager)},
        "spec": {
            "parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "ListenerSet", "name": "tenant-domains"}]
        },
        "status": {"parents": parents},
    }


def _parent(accepted: str, resolved: str, controller: str = eg.CONTROLLER_NAME) -> dict[str, Any]:
    return {
        "controllerName": controller,
        "parentRef": {"group": "gateway.networking.k8s.io", "kind": "ListenerSet", "name": "tenant-domains",
                      "namespace": "tenant-a-prod"},
        "conditions": [_condition("Accepted", accepted), _condition("ResolvedRefs", resolved, "BackendNotFound")],
    }  # fmt: skip


def test_each_parent_of_a_route_must_be_accepted_with_resolved_refs_by_envoy_gateway() -> None:
    assert eg.route_problems(_route([_parent("True", "True")])) == []
    assert "ResolvedRefs False (BackendNotFound" in eg.route_problems(_route([_parent("True", "False")]))[0]
    assert "no status from" in eg.route_problems(_route([_parent("True", "True", "example.com/other")]))[0]
    assert "status written by" in eg.route_problems(_route([_parent("True", "True")], STAND_IN))[0]


def test_a_listener_set_and_each_listener_must_be_accepted_with_resolved_refs() -> None:
    listener_set: dict[str, Any] = {
        "kind": "ListenerSet",
        "metadata": {"name": "tenant-domains", "namespace": "tenant-a-prod", "managedFields": _managed(EG)},
        "spec": {"listeners": [{"name": "domain-0"}, {"name": "domain-1"}]},
        "status": {
            "conditions": [_condition("Accepted", "True")],
            "listeners": [
                {
                    "name": "domain-0",
                    "conditions": [_condition("Accepted", "True"), _condition("ResolvedRefs", "True")],
                },
                {
                    "name": "domain-1",
                    "conditions": [
                        _condition("Accepted", "True"),
                        _condition("ResolvedRefs", "False", "InvalidCertificateRef"),
                    ],
                },
            ],
        },
    }
    assert eg.listener_set_problems(listener_set) == [
        "ListenerSet tenant-a-prod/tenant-domains listener domain-1: ResolvedRefs False (InvalidCertificateRef: )"
    ]


def test_only_not_allowed_by_listeners_counts_as_not_attached() -> None:
    def route(status: str, reason: str) -> dict[str, Any]:
        return {"status": {"parents": [{"controllerName": eg.CONTROLLER_NAME,
                                        "conditions": [_condition("Accepted", status, reason)]}]}}  # fmt: skip

    assert eg.not_attached(route("False", "NotAllowedByListeners")) == ""
    assert eg.not_attached(route("True", "Accepted")).startswith("Accepted True")
    assert eg.not_attached(route("False", "NoMatchingParent")).startswith("Accepted False (NoMatchingParent")
    assert eg.not_attached({"status": {}}) == "no status from Envoy Gateway yet"


def test_refusals_in_the_controllers_log_are_found() -> None:
    log = "\n".join(
        [
            '{"level":"info","msg":"created deployment"}',
            '{"level":"error","msg":"deployments.apps \\"envoy\\" is forbidden: User \\"x\\" cannot patch"}',
            '{"level":"error","msg":"ValidatingAdmissionPolicy \'tenancy-x\' with binding \'y\' denied request: no"}',
        ]
    )
    assert len(eg.refusal_lines(log)) == 2


def test_the_attack_route_is_admitted_and_the_gateway_listener_takes_httproutes_only(dev_plan: ProgramRun) -> None:
    # The run's attack (a tenant's GRPCRoute to the platform Gateway's HTTPS listener) passes the
    # stack's RBAC and admission, as judged offline here; so only the Gateway's `allowedRoutes` can
    # keep it out, which is what the run then shows Envoy Gateway doing.
    require_crds()
    settings = _settings()
    namespace = "tenant-acme-dev"
    dev = cluster(dev_plan)
    hostname = dev.own_hostname(namespace)
    assert hostname == f"acme-dev.{settings.domain_suffix}"  # the name the run gives it
    route = eg.attack_route(settings, namespace, hostname)
    validate_custom(route)
    who = UserInfo("realrun-acme-admin", ("acme-admins", "system:authenticated"))
    outcome = dev.attempt(who, "CREATE", "gateway.networking.k8s.io/v1/grpcroutes", route, namespace)
    assert outcome.stopped_by is None, outcome.decision.denials
    (gateway,) = objects_of_kind(dev_plan, "Gateway")
    (https,) = [listener for listener in gateway["spec"]["listeners"] if listener["name"] == "https"]
    assert https["allowedRoutes"]["kinds"] == [{"kind": "HTTPRoute"}]


def test_a_label_selector_is_sent_as_the_apis_query_text() -> None:
    selector = {
        "matchLabels": {"b": "2", "a": "1"},
        "matchExpressions": [
            {"key": "tenancy.io/tenant", "operator": "Exists"},
            {"key": "x", "operator": "DoesNotExist"},
            {"key": "env", "operator": "In", "values": ["dev", "prod"]},
            {"key": "tier", "operator": "NotIn", "values": ["gold"]},
        ],
    }
    assert eg.selector_text(selector) == "a=1,b=2,tenancy.io/tenant,!x,env in (dev,prod),tier notin (gold)"
    assert eg.selector_text(None) == ""
    with pytest.raises(ValueError, match="Gt"):
        eg.selector_text({"matchExpressions": [{"key": "k", "operator": "Gt"}]})
