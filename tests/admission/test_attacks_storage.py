"""MTB "require PV reclaim policy of delete" and "block use of existing PVs", played through RBAC and
admission on dev, prod and prod-aws: tenant claims may name only the platform's StorageClasses,
which the platform renders with `reclaimPolicy: Delete`, so a released volume never lingers with
its data; a claim naming another class, or none, is refused.
"""

from __future__ import annotations

import json

import pytest

from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from components.model.settings.storage import DEFAULT_CLASS
from tests.admission.layers import WRITERS, Cluster, cluster
from tests.admission.test_attacks_workloads import PVCS, claim
from tests.rbac import Subject
from tests.support import objects_of_kind, plan
from tools.plan.harness import ProgramRun

PROVISIONERS = {"dev": "rancher.io/local-path", "prod": "pd.csi.storage.gke.io", "prod-aws": "ebs.csi.aws.com"}
NOT_PLATFORM = "must set spec.storageClassName to a platform class (tenancy-standard)"


@pytest.fixture(scope="module")
def stack(any_stack_plan: ProgramRun) -> Cluster:
    return cluster(any_stack_plan)


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_claims_on_other_classes_or_none_are_denied(stack: Cluster, who: Subject, namespace: str) -> None:
    retained = stack.attempt(who, "CREATE", PVCS, claim(storageClassName="standard"), namespace)
    assert retained.denied_by("tenancy-volume-claims", f"{NOT_PLATFORM}, whose volumes are deleted"), retained
    assert retained.denied_by("tenancy-volume-claims", "it names standard")
    classless = claim()
    del classless["spec"]["storageClassName"]
    # No default class is marked here, so nothing fills the class in before validation.
    assert stack.attempt(who, "CREATE", PVCS, classless, namespace).denied_by("tenancy-volume-claims", "it names none")
    static = stack.attempt(who, "CREATE", PVCS, claim(storageClassName=""), namespace)
    assert static.denied_by("tenancy-volume-claims", NOT_PLATFORM)


@pytest.mark.parametrize(("who", "namespace"), WRITERS)
def test_claims_on_the_platform_class_are_admitted(stack: Cluster, who: Subject, namespace: str) -> None:
    assert stack.attempt(who, "CREATE", PVCS, claim(), namespace).stopped_by is None


def test_older_claims_keep_their_class_but_cannot_gain_one(stack: Cluster) -> None:
    who, namespace = WRITERS[0]
    old = claim(storageClassName="standard")
    relabelled = claim(storageClassName="standard")
    relabelled["metadata"]["labels"] = {"tier": "cache"}
    assert stack.attempt(who, "UPDATE", PVCS, relabelled, namespace, old=old).stopped_by is None
    unset = claim()
    del unset["spec"]["storageClassName"]
    gained = stack.attempt(who, "UPDATE", PVCS, claim(storageClassName="standard"), namespace, old=unset)
    assert gained.denied_by("tenancy-volume-claims", NOT_PLATFORM)


def test_the_platform_class_deletes_released_volumes(any_stack_plan: ProgramRun) -> None:
    [storage_class] = objects_of_kind(any_stack_plan, "StorageClass")
    assert storage_class["metadata"]["name"] == DEFAULT_CLASS
    assert storage_class["reclaimPolicy"] == "Delete"
    assert storage_class["provisioner"] == PROVISIONERS[any_stack_plan.stack]
    assert storage_class["volumeBindingMode"] == "WaitForFirstConsumer"
    assert "storageclass.kubernetes.io/is-default-class" not in storage_class["metadata"].get("annotations", {})


def test_a_stack_lists_its_own_classes_and_may_mark_the_first_default() -> None:
    classes = [
        {"name": "fast", "provisioner": "pd.csi.storage.gke.io", "parameters": {"type": "pd-ssd"}},
        {"name": "bulk", "provisioner": "pd.csi.storage.gke.io"},
    ]
    run = plan("dev", storage=json.dumps({"classes": classes, "markDefault": True}))
    rendered = {c["metadata"]["name"]: c for c in objects_of_kind(run, "StorageClass")}
    assert set(rendered) == {"fast", "bulk"} and {c["reclaimPolicy"] for c in rendered.values()} == {"Delete"}
    assert rendered["fast"]["metadata"]["annotations"] == {"storageclass.kubernetes.io/is-default-class": "true"}
    chain = cluster(run)
    who, namespace = WRITERS[0]
    assert chain.attempt(who, "CREATE", PVCS, claim(storageClassName="bulk"), namespace).stopped_by is None
    assert chain.attempt(who, "CREATE", PVCS, claim(), namespace).denied_by("tenancy-volume-claims", "(fast, bulk)")
    # In-cluster databases claim the first class too, or their own claims would be refused.
    databases = objects_of_kind(run, "Cluster") + objects_of_kind(run, "MariaDB")
    assert databases and all(
        d["spec"]["storage"].get("storageClass", d["spec"]["storage"].get("storageClassName")) == "fast"
        for d in databases
    )


@pytest.mark.parametrize(
    ("storage", "field", "reason"),
    [
        ({"classes": [{"name": "a", "provisioner": "x"}, {"name": "a", "provisioner": "y"}]}, "storage.classes", "a"),
        ({"classes": [{"name": "Fast_SSD", "provisioner": "x"}]}, "storage.classes.0.name", "lowercase DNS name"),
        ({"classes": [{"name": "fast"}]}, "storage.classes.0.provisioner", "Field required"),
        ({"reclaimPolicy": "Retain"}, "storage.reclaimPolicy", "unknown field 'reclaimPolicy'"),
    ],
)
def test_bad_storage_settings_name_the_file_and_field(storage: dict[str, object], field: str, reason: str) -> None:
    with pytest.raises(ConfigurationError) as raised:
        parse_settings(
            {"tenancy:domainSuffix": "tenants.example.com", "tenancy:storage": json.dumps(storage)}, "Pulumi.test.yaml"
        )
    [problem] = [str(p) for p in raised.value.problems]
    assert problem.startswith(f"Pulumi.test.yaml: tenancy:{field}"), problem
    assert reason in problem
