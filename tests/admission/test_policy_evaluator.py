"""The offline admission chain itself (tests/cel_admission.py), on small hand-written policies:
the parts of the API server's behaviour the bundle's own tests do not exercise (params, object
selectors, failure policies, default messages, Warn/Audit) must be right too, or the rule tests
would prove less than they claim."""

from __future__ import annotations

from typing import Any

from tests.cel_admission import AdmissionChain, Request, apply_json_patch


def policy(**spec: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
            ]
        },
        "validations": [{"expression": "object.data.size == '1'"}],
    }
    base.update(spec)
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "p"},
        "spec": base,
    }


def binding(actions: list[str], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "p"},
        "spec": {"policyName": "p", "validationActions": actions, **spec},
    }


def configmap(size: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", "labels": labels or {}},
        "data": {"size": size},
    }


NAMESPACE = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n", "labels": {"team": "a"}}}


def request(obj: dict[str, Any], operation: str = "CREATE") -> Request:
    return Request(operation, "/v1/configmaps", "ConfigMap", object=obj, namespace_object=NAMESPACE)


def test_default_message_and_actions() -> None:
    chain = AdmissionChain([policy(), binding(["Deny"])])
    assert chain.admit(request(configmap("1"))).allowed
    assert chain.admit(request(configmap("2"))).denials == ["p: failed expression: object.data.size == '1'"]
    warn = AdmissionChain([policy(), binding(["Warn", "Audit"])]).admit(request(configmap("2")))
    assert warn.allowed and len(warn.warnings) == len(warn.audit) == 1


def test_operations_and_resources_must_match() -> None:
    chain = AdmissionChain([policy(), binding(["Deny"])])
    assert chain.admit(request(configmap("2"), operation="UPDATE")).allowed
    secret = Request("CREATE", "/v1/secrets", "Secret", object=configmap("2"), namespace_object=NAMESPACE)
    assert chain.admit(secret).allowed


def test_selectors_on_policy_and_binding() -> None:
    constraints = policy()["spec"]["matchConstraints"]
    scoped = policy(matchConstraints={**constraints, "namespaceSelector": {"matchLabels": {"team": "b"}}})
    assert AdmissionChain([scoped, binding(["Deny"])]).admit(request(configmap("2"))).allowed
    only_labelled = binding(
        ["Deny"], matchResources={"objectSelector": {"matchExpressions": [{"key": "x", "operator": "Exists"}]}}
    )
    chain = AdmissionChain([policy(), only_labelled])
    assert chain.admit(request(configmap("2"))).allowed
    assert not chain.admit(request(configmap("2", {"x": "1"}))).allowed


def test_match_conditions_and_failure_policy() -> None:
    skip = policy(matchConditions=[{"name": "big", "expression": "object.data.size != '2'"}])
    assert AdmissionChain([skip, binding(["Deny"])]).admit(request(configmap("2"))).allowed
    broken = [{"expression": "object.data.missing == '1'"}]
    failing = AdmissionChain([policy(validations=broken), binding(["Deny"])]).admit(request(configmap("1")))
    assert not failing.allowed and "missing" in failing.denials[0]
    ignoring = AdmissionChain([policy(validations=broken, failurePolicy="Ignore"), binding(["Deny"])])
    assert ignoring.admit(request(configmap("1"))).allowed


def test_params_variables_and_message_expression() -> None:
    with_params = policy(
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        variables=[{"name": "want", "expression": "params.data.size"}],
        validations=[
            {"expression": "object.data.size == variables.want", "messageExpression": "'want ' + variables.want"}
        ],
    )
    params = configmap("3") | {"metadata": {"name": "limits", "namespace": "platform"}}
    ref = {"name": "limits", "namespace": "platform", "parameterNotFoundAction": "Deny"}
    chain = AdmissionChain([with_params, binding(["Deny"], paramRef=ref)], params=[params])
    assert chain.admit(request(configmap("3"))).allowed
    assert chain.admit(request(configmap("2"))).denials == ["p: want 3"]
    missing = AdmissionChain([with_params, binding(["Deny"], paramRef=ref)])
    assert missing.admit(request(configmap("3"))).denials == ["p: no params found for policy binding"]


def test_json_patch_add_and_append() -> None:
    obj = {"spec": {"list": [1], "map": {}}}
    patched = apply_json_patch(
        obj,
        [
            {"op": "add", "path": "/spec/list/-", "value": 2},
            {"op": "add", "path": "/spec/map/a~1b", "value": "x"},
            {"op": "add", "path": "/spec/new", "value": [3]},
        ],
    )
    assert patched == {"spec": {"list": [1, 2], "map": {"a/b": "x"}, "new": [3]}}
    assert obj == {"spec": {"list": [1], "map": {}}}
