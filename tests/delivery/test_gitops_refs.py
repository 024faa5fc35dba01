"""Each tenant environment is its own trust zone by Git ref too (issue 26): dev and prod following
one mutable branch lets whoever may push for dev change prod. Per-environment `refs` give prod a
tag or a branch of its own; a shared branch is refused unless the tenant file acknowledges it
(`sharedBranchAcknowledged`, the monorepo-with-reviews setup of docs/delivery.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from components.model.core.errors import ConfigurationError
from tests.support import objects_of_kind, plan, tenant_document, write_tenants
from tools.plan.harness import ProgramRun, new_monitor, run_program, stack_config

URL = "https://git.example.org/shop.git"


def _problems(tmp_path: Path, gitops: dict[str, Any], **fields: Any) -> list[str]:
    directory = write_tenants(tmp_path / "tenants", tenant_document("shop", gitops=gitops, **fields))
    monitor = new_monitor()
    config, secrets = stack_config("dev", {"tenancy:tenantsDir": str(directory)})
    with pytest.raises(ConfigurationError) as raised:
        run_program("dev", config, secrets, monitor=monitor)
    assert monitor.recorded == []
    return [f"{p.field}: {p.message}" for p in raised.value.problems]


def _plan(tmp_path: Path, gitops: dict[str, Any]) -> ProgramRun:
    return plan("dev", write_tenants(tmp_path / "tenants", tenant_document("shop", gitops=gitops)))


def _source_ref(run: ProgramRun, environment: str) -> dict[str, str]:
    [source] = [
        o
        for o in objects_of_kind(run, "GitRepository", f"tenant-shop-{environment}")
        if o["metadata"]["name"] == "tenant-gitops"
    ]
    return dict(source["spec"]["ref"])


@pytest.mark.parametrize(
    "gitops",
    [
        {"url": URL},  # the default ref, branch main, for every environment
        {"url": URL, "ref": {"branch": "develop"}},
        {"url": URL, "refs": {"dev": {"branch": "release"}, "prod": {"branch": "release"}}},
        {"url": URL, "ref": {"branch": "main"}, "refs": {"dev": {"branch": "main"}}},
    ],
)
def test_dev_and_prod_on_one_branch_are_refused_with_what_to_write(tmp_path: Path, gitops: dict[str, Any]) -> None:
    problems = _problems(tmp_path, gitops)
    [problem] = [p for p in problems if p.startswith("gitops.ref:")]
    assert "environments dev, prod all follow branch" in problem, problems
    assert "gitops.refs: {prod: {tag: v1.0.0}}" in problem
    assert "gitops.sharedBranchAcknowledged: true" in problem


def test_refs_for_environments_gitops_does_not_apply_to_are_refused(tmp_path: Path) -> None:
    gitops = {"url": URL, "environments": ["prod"], "refs": {"dev": {"branch": "main"}}}
    problems = _problems(tmp_path, gitops)
    assert "gitops.refs.dev: GitOps does not apply to environment 'dev' (gitops.environments)" in problems


@pytest.mark.parametrize(
    ("gitops", "dev", "prod"),
    [
        ({"url": URL, "refs": {"prod": {"tag": "v1.2.0"}}}, {"branch": "main"}, {"tag": "v1.2.0"}),
        ({"url": URL, "refs": {"prod": {"branch": "production"}}}, {"branch": "main"}, {"branch": "production"}),
        ({"url": URL, "ref": {"tag": "v3.0.0"}}, {"tag": "v3.0.0"}, {"tag": "v3.0.0"}),
        ({"url": URL, "sharedBranchAcknowledged": True}, {"branch": "main"}, {"branch": "main"}),
        ({"url": URL, "environments": ["prod"]}, None, {"branch": "main"}),
    ],
)
def test_each_environment_follows_its_own_ref(
    tmp_path: Path, gitops: dict[str, Any], dev: dict[str, str] | None, prod: dict[str, str]
) -> None:
    run = _plan(tmp_path, gitops)
    assert _source_ref(run, "prod") == prod
    if dev is not None:
        assert _source_ref(run, "dev") == dev
        kind, value = next(iter(dev.items()))
        assert run.outputs["tenants"]["shop"]["gitops"]["dev"]["revision"] == f"{kind} {value}"
