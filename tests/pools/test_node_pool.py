"""Node pools: what each kind registers (inputs of the cloud resources), Karpenter objects against
the upstream CRDs (schema and CEL rules), bad pool config with its messages and nothing registered,
and the contract with tenants and the policy bundle: a tenant's namespace label, its pool's node
label and taint, and the admission policy agree."""

from __future__ import annotations

import json
import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from cel_expr_python import cel
from cel_expr_python.ext import ext_strings

from components.model.core.errors import ConfigurationError
from components.model.core.labels import COST_CODE_KEY, NODE_POOL_KEY
from tests.cel_admission import AdmissionChain, Request
from tests.k8s_schema import CRDS_DIR, crd_documents, require_crds, validate_custom
from tests.support import kubernetes_objects, objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import PROJECT_ROOT, ProgramRun, RecordedResource, new_monitor, run_program, stack_config

GKE = "gcp:container/nodePool:NodePool"
EKS = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
KARPENTER_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
COMPONENT = "tenancy:index:NodePool"
_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "PREFER_NO_SCHEDULE": "PreferNoSchedule", "NO_EXECUTE": "NoExecute"}


@pytest.fixture(scope="module")
def aws_plan(prod_aws_plan: ProgramRun) -> ProgramRun:
    return prod_aws_plan


def stack_pools(stack: str) -> dict[str, dict[str, Any]]:
    """The `tenancy:nodePools` section of a stack file, as written."""
    document = yaml.safe_load((PROJECT_ROOT / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8"))
    pools: dict[str, dict[str, Any]] = document["config"]["tenancy:nodePools"]
    return pools


def children(run: ProgramRun, pool: str, type_token: str) -> list[RecordedResource]:
    """Resources of a type registered under the pool's NodePool component."""
    component = next(r for r in run.of_type(COMPONENT) if r.name == pool)
    return [r for r in run.resources if r.parent == component.urn and r.type == type_token]


def only(run: ProgramRun, pool: str, type_token: str) -> RecordedResource:
    found = children(run, pool, type_token)
    assert len(found) == 1, (pool, type_token, [r.name for r in found])
    return found[0]


def problems(stack: str, **config: str) -> tuple[list[str], int]:
    """Run the program expecting a ConfigurationError; the problems and how many resources registered."""
    overrides = {f"tenancy:{key}": value for key, value in config.items()}
    monitor = new_monitor()
    with pytest.raises(ConfigurationError) as raised:
        run_program(stack, *stack_config(stack, overrides), monitor=monitor)
    return [str(p) for p in raised.value.problems], len(monitor.recorded)


# --- gke ------------------------------------------------------------------------------------------


def test_gke_pools_render_the_configured_inputs(prod_plan: ProgramRun) -> None:
    configured = stack_pools("prod")
    assert {r.name for r in prod_plan.of_type(GKE)} == {f"{name}-gke" for name in configured}
    for name, pool in configured.items():
        inputs = only(prod_plan, name, GKE).inputs
        assert inputs["cluster"] == "tenancy-prod"
        assert inputs["location"] == "europe-west1"
        assert inputs["autoscaling"]["totalMinNodeCount"] == pool["minNodes"]
        assert inputs["autoscaling"]["totalMaxNodeCount"] == pool["maxNodes"]
        assert inputs["autoscaling"]["locationPolicy"] == ("ANY" if pool.get("spot") else "BALANCED")
        assert inputs["management"] == {"autoRepair": True, "autoUpgrade": True}
        node = inputs["nodeConfig"]
        assert node["machineType"] == pool["machineType"]
        assert node["spot"] is bool(pool.get("spot", False))
        assert node["diskSizeGb"] == pool.get("diskSizeGb", 100)
        assert node["labels"] == {NODE_POOL_KEY: name, COST_CODE_KEY: pool["costCode"]}
        assert node["taints"] == [{"key": NODE_POOL_KEY, "value": name, "effect": "NO_SCHEDULE"}]
        assert node["resourceLabels"] == {"managed-by": "tenancy", "node-pool": name, "cost-code": pool["costCode"]}
        assert node["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
        assert node["serviceAccount"] == pool["serviceAccount"]
        assert node["oauthScopes"] == ["https://www.googleapis.com/auth/cloud-platform"]


def test_gke_without_service_account_keeps_gke_default_scopes() -> None:
    pools = {"shared": {"kind": "gke", "costCode": "shared", "machineType": "n2-custom-4-16384"}}
    run = plan("prod", tenants_dir=tenants_on("shared", "prod"), nodePools=json.dumps(pools))
    node = only(run, "shared", GKE).inputs["nodeConfig"]
    assert node["machineType"] == "n2-custom-4-16384"
    assert "serviceAccount" not in node and "oauthScopes" not in node


@cache
def tenants_on(pool: str, stack: str) -> Path:
    """A tenants directory with two tenants on `pool`, for stacks whose pools a test replaces; they
    target `stack` only, since the other stacks' committed files do not define that pool."""
    directory = Path(tempfile.mkdtemp(prefix="pool-tenants-")) / "tenants"
    return write_tenants(
        directory,
        *(tenant_document(name, nodePool=pool, stacks=[stack]) for name in ("alpha", "beta")),
    )


# --- eks ------------------------------------------------------------------------------------------


def test_eks_node_group_and_launch_template(aws_plan: ProgramRun) -> None:
    pool = stack_pools("prod-aws")["shared"]
    template = only(aws_plan, "shared", LAUNCH_TEMPLATE)
    group = only(aws_plan, "shared", EKS)
    inputs = group.inputs
    assert inputs["clusterName"] == "tenancy-prod"
    assert inputs["nodeRoleArn"] == pool["nodeRoleArn"]
    assert inputs["subnetIds"] == pool["subnetIds"]
    assert inputs["instanceTypes"] == pool["instanceTypes"]
    assert inputs["capacityType"] == "ON_DEMAND"
    assert inputs["scalingConfig"] == {
        "minSize": pool["minNodes"],
        "maxSize": pool["maxNodes"],
        "desiredSize": pool["minNodes"],
    }
    # The autoscaler owns the current size; `pulumi up` must not reset it.
    assert group.ignore_changes == ["scalingConfig.desiredSize"]
    assert inputs["labels"] == {NODE_POOL_KEY: "shared", COST_CODE_KEY: pool["costCode"]}
    assert inputs["taints"] == [{"key": NODE_POOL_KEY, "value": "shared", "effect": "NO_SCHEDULE"}]
    # The node group runs the pool's own launch template (mock ids are `<name>-id`).
    assert inputs["launchTemplate"]["id"] == f"{template.name}-id"
    assert "diskSize" not in inputs  # with a launch template, the disk is the template's
    cost = {"managed-by": "tenancy", "node-pool": "shared", "cost-code": pool["costCode"]}
    specs = {spec["resourceType"]: spec["tags"] for spec in template.inputs["tagSpecifications"]}
    assert specs == {"instance": cost, "volume": cost, "network-interface": cost}
    assert template.inputs["metadataOptions"]["httpTokens"] == "required"
    assert template.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1
    assert template.inputs["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"


def test_eks_spot_and_bottlerocket() -> None:
    pools = {
        "batch": {
            "kind": "eks",
            "costCode": "batch",
            "spot": True,
            "amiType": "BOTTLEROCKET_ARM_64",
            "instanceTypes": ["c7g.xlarge", "m7g.xlarge"],
            "nodeRoleArn": "arn:aws:iam::111122223333:role/nodes",
            "subnetIds": ["subnet-0123456789abcdef0"],
            "diskSizeGb": 50,
        }
    }
    run = plan("prod-aws", tenants_dir=tenants_on("batch", "prod-aws"), nodePools=json.dumps(pools))
    group = only(run, "batch", EKS).inputs
    assert group["capacityType"] == "SPOT"
    assert group["amiType"] == "BOTTLEROCKET_ARM_64"
    mapping = only(run, "batch", LAUNCH_TEMPLATE).inputs["blockDeviceMappings"][0]
    # Bottlerocket keeps containers and images on its second (data) volume.
    assert mapping["deviceName"] == "/dev/xvdb"
    assert mapping["ebs"]["volumeSize"] == 50


# --- karpenter ------------------------------------------------------------------------------------


def test_karpenter_node_pool_and_node_class(aws_plan: ProgramRun) -> None:
    configured = stack_pools("prod-aws")
    for name in ("customers", "research"):
        pool = configured[name]
        node_class_resource = only(aws_plan, name, NODE_CLASS)
        node_pool_resource = only(aws_plan, name, KARPENTER_POOL)
        node_class = node_class_resource.inputs
        node_pool = node_pool_resource.inputs
        assert node_class["metadata"]["name"] == node_pool["metadata"]["name"] == name
        assert node_class["spec"]["role"] == pool["nodeRole"]
        assert node_class["spec"]["amiSelectorTerms"] == [{"alias": pool["amiAlias"]}]
        discovery = [{"tags": {"karpenter.sh/discovery": "tenancy-prod"}}]
        assert node_class["spec"]["subnetSelectorTerms"] == discovery
        assert node_class["spec"]["securityGroupSelectorTerms"] == discovery
        assert node_class["spec"]["tags"] == {"managed-by": "tenancy", "node-pool": name, "cost-code": pool["costCode"]}

        template = node_pool["spec"]["template"]
        assert template["metadata"]["labels"] == {NODE_POOL_KEY: name, COST_CODE_KEY: pool["costCode"]}
        assert template["spec"]["taints"] == [{"key": NODE_POOL_KEY, "value": name, "effect": "NoSchedule"}]
        assert template["spec"]["nodeClassRef"] == {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": name}
        requirements = {r["key"]: r for r in template["spec"]["requirements"]}
        assert requirements["karpenter.sh/capacity-type"]["values"] == pool["capacityTypes"]
        assert requirements["kubernetes.io/arch"]["values"] == pool.get("architectures", ["amd64"])
        assert node_pool["spec"]["limits"] == pool["limits"]
        disruption = node_pool["spec"]["disruption"]
        assert disruption["consolidationPolicy"] == pool["disruption"]["consolidationPolicy"]
        assert disruption["consolidateAfter"] == pool["disruption"]["consolidateAfter"]
        assert disruption["budgets"] == pool["disruption"].get("budgets", [{"nodes": "10%"}])
        # The class exists before a pool refers to it.
        assert node_class_resource.urn in node_pool_resource.dependencies

    customers = {
        r["key"]: r["values"]
        for r in only(aws_plan, "customers", KARPENTER_POOL).inputs["spec"]["template"]["spec"]["requirements"]
    }
    assert customers["karpenter.k8s.aws/instance-family"] == configured["customers"]["instanceFamilies"]
    research = {
        r["key"]: r["values"]
        for r in only(aws_plan, "research", KARPENTER_POOL).inputs["spec"]["template"]["spec"]["requirements"]
    }
    assert research["karpenter.k8s.aws/instance-size"] == configured["research"]["instanceSizes"]
    # Without named families: the c/m/r categories of recent generations, not every EC2 type.
    assert research["karpenter.k8s.aws/instance-category"] == ["c", "m", "r"]
    assert research["karpenter.k8s.aws/instance-generation"] == ["2"]


def _rewrite_kubernetes_regex(rule: str) -> str:
    """cel-cpp lacks the Kubernetes `find` (regex) function; the CRDs only use it for a leading
    segment (`^([^/]+)`, `^[^@]+`), which `split(...)[0]` computes identically."""
    rule = re.sub(r"""\.find\((['"])\^\(\[\^/\]\+\)\1\)""", ".split('/')[0]", rule)
    return re.sub(r"""\.find\((['"])\^\[\^@\]\+\1\)""", ".split('@')[0]", rule)


_CEL = cel.NewEnv(variables={"self": cel.Type.DYN}, extensions=[ext_strings.ExtStrings()])


def crd_cel_violations(obj: Any, schema: dict[str, Any], path: str = "") -> tuple[list[str], int]:
    """Evaluate the schema's `x-kubernetes-validations` on `obj` like the API server on create.

    Transition rules (those reading `oldSelf`) only apply to updates and are left out. Returns
    the violated rules and how many rules were evaluated.
    """
    violations: list[str] = []
    evaluated = 0
    for validation in schema.get("x-kubernetes-validations", []):
        if "oldSelf" in validation["rule"]:
            continue
        result = _CEL.compile(_rewrite_kubernetes_regex(validation["rule"])).eval(data={"self": obj})
        evaluated += 1
        if result.type() == cel.Type.ERROR or result.value() is not True:
            violations.append(f"{path or '.'}: {validation.get('message', validation['rule'])}")
    if isinstance(obj, dict):
        for key, value in obj.items():
            sub = (schema.get("properties") or {}).get(key)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if sub is not None:
                found, count = crd_cel_violations(value, sub, f"{path}.{key}")
                violations += found
                evaluated += count
    if isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(obj):
            found, count = crd_cel_violations(item, schema["items"], f"{path}[{index}]")
            violations += found
            evaluated += count
    return violations, evaluated


def _crd_schema(api_version: str, kind: str) -> dict[str, Any]:
    require_crds()
    return _read_crd_schema(api_version, kind)


@cache
def _read_crd_schema(api_version: str, kind: str) -> dict[str, Any]:
    for crd in crd_documents():
        if crd["spec"]["group"].startswith("karpenter") and crd["spec"]["names"]["kind"] == kind:
            for version in crd["spec"]["versions"]:
                if f"{crd['spec']['group']}/{version['name']}" == api_version:
                    schema: dict[str, Any] = version["schema"]["openAPIV3Schema"]
                    return schema
    raise LookupError(f"no CRD for {api_version} {kind} in {CRDS_DIR}")


def test_karpenter_objects_pass_the_upstream_crds(aws_plan: ProgramRun) -> None:
    objects = [o for o in kubernetes_objects(aws_plan) if o["apiVersion"].startswith("karpenter.")]
    assert {o["kind"] for o in objects} == {"NodePool", "EC2NodeClass"}
    evaluated = 0
    for obj in objects:
        validate_custom(obj)
        violations, count = crd_cel_violations(obj, _crd_schema(obj["apiVersion"], obj["kind"]))
        assert violations == [], (obj["kind"], obj["metadata"]["name"], violations)
        evaluated += count
    assert evaluated > 20  # the CEL rules really ran (about 40 per object pair)


def test_crd_cel_check_catches_what_the_schema_cannot(aws_plan: ProgramRun) -> None:
    """The CEL evaluation above must be able to fail: rules jsonschema ignores are caught here."""
    node_class = next(o for o in kubernetes_objects(aws_plan) if o["kind"] == "EC2NodeClass")
    broken = json.loads(json.dumps(node_class))
    broken["spec"]["instanceProfile"] = "also-a-profile"  # role and instanceProfile are exclusive
    broken["spec"]["tags"]["karpenter.sh/nodepool"] = "x"  # a tag Karpenter reserves
    validate_custom(broken)  # the schema alone accepts both
    violations, _ = crd_cel_violations(broken, _crd_schema(broken["apiVersion"], broken["kind"]))
    assert len(violations) == 2, violations


# --- existing -------------------------------------------------------------------------------------


def test_existing_pools_register_only_the_component(dev_plan: ProgramRun) -> None:
    components = dev_plan.of_type(COMPONENT)
    assert {c.name for c in components} == set(stack_pools("dev"))
    urns = {c.urn for c in components}
    assert [r.type for r in dev_plan.resources if r.parent in urns] == []


# --- outputs and sharing --------------------------------------------------------------------------


def test_outputs_per_pool_list_kind_cost_code_and_tenants(prod_plan: ProgramRun, aws_plan: ProgramRun) -> None:
    outputs = prod_plan.outputs["nodePools"]
    assert outputs["customers"] == {
        "kind": "gke",
        "costCode": "customers",
        # Several tenants share one pool.
        "tenants": ["acme", "northwind"],
        "nodeSelector": {NODE_POOL_KEY: "customers"},
        "taint": f"{NODE_POOL_KEY}=customers:NoSchedule",
    }
    assert outputs["research"]["tenants"] == ["genomics-lab", "operator-lab"]
    assert {name: pool["kind"] for name, pool in aws_plan.outputs["nodePools"].items()} == {
        "shared": "eks",
        "customers": "karpenter",
        "research": "karpenter",
    }


def test_pools_cost_tenants_nothing(tmp_path: Path) -> None:
    """Pools are per stack: ten more tenants on a pool add no pool resources."""

    def pool_resources(count: int) -> int:
        documents = [tenant_document(f"t{index}", nodePool="customers") for index in range(count)]
        run = plan("prod-aws", tenants_dir=write_tenants(tmp_path / f"tenants-{count}", *documents))
        assert run.outputs["nodePools"]["customers"]["tenants"] == sorted(d["name"] for d in documents)
        return sum(
            1 for r in run.resources if r.type in {COMPONENT, GKE, EKS, LAUNCH_TEMPLATE, KARPENTER_POOL, NODE_CLASS}
        )

    assert pool_resources(1) == pool_resources(11) == 9


def test_decommissioned_tenants_are_not_listed_on_a_pool(tmp_path: Path) -> None:
    directory = write_tenants(
        tmp_path / "tenants",
        tenant_document("alpha", nodePool="shared"),
        tenant_document("gone", nodePool="shared", lifecycle="decommissioned"),
    )
    assert plan("dev", tenants_dir=directory).outputs["nodePools"]["shared"]["tenants"] == ["alpha"]


# --- bad input ------------------------------------------------------------------------------------


def _pool(kind: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "costCode": "cc", **fields}


_EKS_REQUIRED = {"nodeRoleArn": "arn:aws:iam::111122223333:role/nodes", "subnetIds": ["subnet-0123456789abcdef0"]}


@pytest.mark.parametrize(
    ("stack", "pools", "expected"),
    [
        (
            "prod",
            {"gpu": _pool("gke", minNodes=5, maxNodes=2)},
            "Pulumi.prod.yaml: tenancy:nodePools.gpu.minNodes: Value error, minNodes (5) is above maxNodes (2)",
        ),
        (
            "prod",
            {"gpu": _pool("karpenter", nodeRole="nodes")},
            "Pulumi.prod.yaml: tenancy:nodePools.gpu.kind: kind 'karpenter' cannot run on cloud 'gcp' "
            "(kinds for gcp: gke, existing)",
        ),
        (
            "prod",
            {"gpu": _pool("eks", **_EKS_REQUIRED)},
            "Pulumi.prod.yaml: tenancy:nodePools.gpu.kind: kind 'eks' cannot run on cloud 'gcp' "
            "(kinds for gcp: gke, existing)",
        ),
        (
            "prod-aws",
            {"gpu": _pool("gke")},
            "Pulumi.prod-aws.yaml: tenancy:nodePools.gpu.kind: kind 'gke' cannot run on cloud 'aws' "
            "(kinds for aws: eks, karpenter, existing)",
        ),
        (
            "dev",
            {"gpu": _pool("gke")},
            "Pulumi.dev.yaml: tenancy:nodePools.gpu.kind: kind 'gke' cannot run on cloud 'local' "
            "(kinds for local: existing)",
        ),
        (
            "prod",
            {"gpu": _pool("gke", machineType="standard-4")},
            "Pulumi.prod.yaml: tenancy:nodePools.gpu.machineType: Value error, 'standard-4' is not a GCE machine "
            "type (for example e2-standard-4, n2-highmem-8, n2-custom-4-16384)",
        ),
        (
            "prod",
            {"gpu": _pool("gke", machineType="m7i.large")},
            "Pulumi.prod.yaml: tenancy:nodePools.gpu.machineType: Value error, 'm7i.large' is an EC2 instance type; "
            "a gke pool needs a GCE machine type such as e2-standard-4",
        ),
        (
            "prod-aws",
            {"gpu": _pool("eks", instanceTypes=["e2-standard-4"], **_EKS_REQUIRED)},
            "Pulumi.prod-aws.yaml: tenancy:nodePools.gpu.instanceTypes.0: Value error, 'e2-standard-4' is not an "
            "EC2 instance type (for example m7i.large, c7g.2xlarge, r6i.metal)",
        ),
        (
            "prod-aws",
            {"gpu": _pool("eks", nodeRoleArn="nodes", subnetIds=["subnet-0123456789abcdef0"])},
            "Pulumi.prod-aws.yaml: tenancy:nodePools.gpu.nodeRoleArn: must be an IAM role ARN such as "
            "'arn:aws:iam::111122223333:role/name'; got 'nodes'",
        ),
        (
            "prod-aws",
            {"gpu": _pool("karpenter", nodeRole="nodes", instanceFamilies=["M7i"])},
            "Pulumi.prod-aws.yaml: tenancy:nodePools.gpu.instanceFamilies.0: Value error, 'M7i' is not an EC2 "
            "instance family (for example m7i, c7g, r6i, m7i-flex)",
        ),
        (
            "prod-aws",
            {
                "gpu": _pool(
                    "karpenter", nodeRole="nodes", disruption={"budgets": [{"nodes": "0", "schedule": "@daily"}]}
                )
            },
            "Pulumi.prod-aws.yaml: tenancy:nodePools.gpu.disruption.budgets.0: Value error, schedule and duration "
            "go together: a budget window needs both",
        ),
        (
            "prod-aws",
            {
                "gpu": _pool(
                    "karpenter", nodeRole="nodes", disruption={"budgets": [{"schedule": "0 7 * *", "duration": "1h"}]}
                )
            },
            "Pulumi.prod-aws.yaml: tenancy:nodePools.gpu.disruption.budgets.0.schedule: Value error, '0 7 * *' is not "
            "a cron schedule (five fields such as '0 7 * * mon-fri', or @daily)",
        ),
        (
            "prod-aws",
            {"gpu": _pool("karpenter", nodeRole="nodes", capacityTypes=["reserved"])},
            "Pulumi.prod-aws.yaml: tenancy:nodePools.gpu.capacityTypes.0: Input should be 'spot' or 'on-demand'",
        ),
        (
            "prod-aws",
            {"gpu": _pool("karpenter", nodeRole="nodes", limits={"cpu": "lots"})},
            "Pulumi.prod-aws.yaml: tenancy:nodePools.gpu.limits.cpu: Value error, 'lots' is not a Kubernetes "
            "quantity (for example 500m, 2, 512Mi, 4Gi)",
        ),
        (
            "dev",
            {"gpu": _pool("existing", machineType="e2-standard-4")},
            "Pulumi.dev.yaml: tenancy:nodePools.gpu.machineType: unknown field 'machineType' for this kind "
            "(other kinds have it)",
        ),
        (
            "dev",
            {"gpu": _pool("bare-metal")},
            "Pulumi.dev.yaml: tenancy:nodePools.gpu: Input tag 'bare-metal' found using 'kind' does not match any "
            "of the expected tags: 'gke', 'eks', 'karpenter', 'existing'",
        ),
        (
            "prod",
            {"a-very-long-pool-name-for-gke": _pool("gke")},
            "Pulumi.prod.yaml: tenancy:nodePools.a-very-long-pool-name-for-gke: gke pool names may have at most "
            "28 characters (the cloud's limit minus the random suffix that lets a changed pool be created before "
            "the old one is removed)",
        ),
    ],
)
def test_bad_pool_config_is_reported_and_registers_nothing(stack: str, pools: dict[str, Any], expected: str) -> None:
    found, registered = problems(stack, nodePools=json.dumps(pools))
    # A kind the cloud cannot run is a cross-check (the cloud answers), so it is reported together
    # with the example tenants' pools that the replaced `nodePools` no longer defines.
    assert expected in found
    assert all(p == expected or "is not a node pool of this stack" in p for p in found)
    assert registered == 0


def test_a_tenant_naming_an_undefined_pool_registers_nothing(tmp_path: Path) -> None:
    directory = write_tenants(tmp_path / "tenants", tenant_document("alpha", nodePool="gpu"))
    found, registered = problems("prod", tenantsDir=str(directory))
    defined = "customers, research, shared"
    assert found == [f"{directory}/alpha.yaml: nodePool: 'gpu' is not a node pool of this stack (defined: {defined})"]
    assert registered == 0


# --- the contract with tenants and the policy bundle ----------------------------------------------


def rendered_nodes(run: ProgramRun) -> dict[str, tuple[dict[str, str], list[dict[str, str]]]]:
    """Per pool, the labels and taints its nodes get, read from what each kind renders.

    `existing` pools have no resource: their nodes get what the README's kubectl commands set,
    which is what the pool's outputs print.
    """
    nodes: dict[str, tuple[dict[str, str], list[dict[str, str]]]] = {}
    for component in run.of_type(COMPONENT):
        name = component.name
        made = {r.type: r.inputs for r in run.resources if r.parent == component.urn}
        if GKE in made:
            config = made[GKE]["nodeConfig"]
            taints = [{**t, "effect": _EFFECTS[t["effect"]]} for t in config["taints"]]
            nodes[name] = (config["labels"], taints)
        elif EKS in made:
            group = made[EKS]
            nodes[name] = (group["labels"], [{**t, "effect": _EFFECTS[t["effect"]]} for t in group["taints"]])
        elif KARPENTER_POOL in made:
            template = made[KARPENTER_POOL]["spec"]["template"]
            nodes[name] = (template["metadata"]["labels"], template["spec"]["taints"])
        else:
            summary = run.outputs["nodePools"][name]
            key_value, _, effect = summary["taint"].rpartition(":")
            key, _, value = key_value.partition("=")
            labels = {**summary["nodeSelector"], COST_CODE_KEY: summary["costCode"]}
            nodes[name] = (labels, [{"key": key, "value": value, "effect": effect}])
    return nodes


def schedulable(pod: dict[str, Any], labels: dict[str, str], taints: list[dict[str, str]]) -> bool:
    """The scheduler's nodeSelector and taint/toleration checks for one node."""
    spec = pod["spec"]
    if any(labels.get(key) != value for key, value in (spec.get("nodeSelector") or {}).items()):
        return False

    def tolerated(taint: dict[str, str]) -> bool:
        for toleration in spec.get("tolerations") or []:
            if toleration.get("effect") not in (None, "", taint["effect"]):
                continue
            if toleration.get("operator") == "Exists" and toleration.get("key") in (None, taint["key"]):
                return True
            if toleration.get("key") == taint["key"] and toleration.get("value") == taint["value"]:
                return True
        return False

    return all(tolerated(taint) for taint in taints if taint["effect"] in ("NoSchedule", "NoExecute"))


def pod(namespace: str, pool: str | None, toleration_pool: str | None = None) -> dict[str, Any]:
    """A restricted-compliant pod that selects `pool` and tolerates `toleration_pool`'s taint."""
    spec: dict[str, Any] = {
        "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [
            {
                "name": "app",
                "image": "registry.example.org/app:1.0.0",
                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            }
        ],
    }
    if pool is not None:
        spec["nodeSelector"] = {NODE_POOL_KEY: pool}
    if toleration_pool is not None:
        spec["tolerations"] = [
            {"key": NODE_POOL_KEY, "operator": "Equal", "value": toleration_pool, "effect": "NoSchedule"}
        ]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app", "namespace": namespace}, "spec": spec}


def node_pool_denials(chain: AdmissionChain, namespace: dict[str, Any], obj: dict[str, Any]) -> tuple[list[str], Any]:
    request = Request("CREATE", "/v1/pods", "Pod", object=obj, namespace_object=namespace)
    decision = chain.admit(request)
    return [d for d in decision.denials if d.startswith("tenancy-node-pool")], decision.object


@pytest.mark.parametrize("stack", ["dev", "prod", "prod-aws"])
def test_a_tenant_on_a_pool_lands_on_its_nodes_and_only_there(stack: str, request: pytest.FixtureRequest) -> None:
    run: ProgramRun = request.getfixturevalue({"dev": "dev_plan", "prod": "prod_plan", "prod-aws": "aws_plan"}[stack])
    chain = AdmissionChain(kubernetes_objects(run))
    if not chain.validating:
        pytest.skip("this plan renders no admission policies")
    # dev runs Kubernetes 1.36, where the bundle injects the pool; the others validate only.
    assert bool(chain.mutating) == (stack == "dev")
    nodes = rendered_nodes(run)
    namespaces = [n for n in objects_of_kind(run, "Namespace") if NODE_POOL_KEY in n["metadata"]["labels"]]
    assert namespaces
    for namespace in namespaces:
        own = namespace["metadata"]["labels"][NODE_POOL_KEY]
        # The namespace's pool is one this stack renders nodes for, and lists the tenant.
        assert own in nodes
        tenant = namespace["metadata"]["labels"]["tenancy.io/tenant"]
        assert tenant in run.outputs["nodePools"][own]["tenants"]
        name = namespace["metadata"]["name"]

        # What the README tells tenants to write: admitted, and schedulable on its pool alone.
        denials, admitted = node_pool_denials(chain, namespace, pod(name, own, own))
        assert denials == [], denials
        assert schedulable(admitted, *nodes[own])
        assert not any(schedulable(admitted, *nodes[other]) for other in nodes if other != own)

        # Where the bundle injects the pool (1.36+), a pod that says nothing lands there too.
        if chain.mutating:
            denials, injected = node_pool_denials(chain, namespace, pod(name, None))
            assert denials == [], denials
            assert schedulable(injected, *nodes[own])
            assert not any(schedulable(injected, *nodes[other]) for other in nodes if other != own)

        # Tolerating another pool's taint is refused, whatever the pod selects.
        for other in sorted(set(nodes) - {own})[:1]:
            denials, _ = node_pool_denials(chain, namespace, pod(name, own, other))
            assert denials, (stack, name, other)
