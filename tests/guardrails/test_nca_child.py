"""tests/guardrails/nca_child.py: each nca call is a child of its own, killed when it runs too long,
and a failure shows what nca said and leaves the next call working."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml

from tests.guardrails import nca_child
from tests.guardrails.network_analyzer import nca_command

pytestmark = pytest.mark.skipif(nca_command() is None, reason="network-config-analyzer (nca) is not installed")


def test_an_error_is_reported_with_what_nca_wrote_to_stderr() -> None:
    code, stdout, stderr = nca_child.run(["--connectivity", "/no/such/policies"], timeout=60)
    assert code != 0
    assert "is not a valid path" in stderr, (stdout, stderr)


def _tiny_cluster(directory: Path) -> list[str]:
    """nca's arguments for a map of one namespace, one pod and one default-deny policy."""
    (directory / "policies").mkdir()
    policy = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": "deny", "namespace": "one"},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]},
    }
    (directory / "policies" / "policies.yaml").write_text(yaml.safe_dump(policy))
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "one", "labels": {"a": "b"}}}
    (directory / "namespaces.yaml").write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "NamespaceList", "items": [namespace]})
    )
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "app", "namespace": "one", "labels": {"app": "a"}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
        "status": {"podIP": "10.0.0.1", "hostIP": "10.0.0.2"},
    }
    (directory / "pods.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "PodList", "items": [pod]}))
    return [
        "--connectivity", str(directory / "policies"), "--ns_list", str(directory / "namespaces.yaml"),
        "--pod_list", str(directory / "pods.yaml"), "-o", "txt_no_fw_rules",
    ]  # fmt: skip


def test_a_call_that_runs_too_long_is_killed_and_the_next_one_works(tmp_path: Path) -> None:
    arguments = _tiny_cluster(tmp_path)
    code, stdout, _ = nca_child.run(arguments, timeout=60)
    assert code == 0 and "=>" in stdout
    started = time.monotonic()
    # `--period 1`: nca answers, then sleeps a minute and answers again, forever.
    code, _, _ = nca_child.run(["--period", "1", *arguments], timeout=2)
    assert code == -9
    assert time.monotonic() - started < 30
    code, stdout, _ = nca_child.run(arguments, timeout=60)
    assert code == 0 and "=>" in stdout
