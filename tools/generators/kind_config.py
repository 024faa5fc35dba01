"""Generate kind/cluster.yaml from the dev stack, so a pool added there gets its kind node.

    tenancy kind-config --write     # regenerate kind/cluster.yaml (`make cluster` does this)
    tenancy kind-config --check     # exit 1, saying what to run, when the file is stale
    tenancy kind-config --subnet    # the kind Docker network's subnet (see below)

Nodes: the control plane; one untainted worker for the platform (Flux, the database operators,
DNS); one worker per pool of `tenancy:nodePools` (kind `existing`), labelled and tainted as
components/model/core/labels.py defines them. The node image is the stack's Kubernetes minor at the
digest kind v0.32.0 was released with.

The subnet: CloudNativePG instances reach the API server at the control-plane node's address on
kind's Docker network, which the dev stack opens as `tenancy:network.apiServer.cidrs`. Docker picks
that network's subnet when kind creates it (often 172.18.0.0/16, but any free range), so
scripts/cluster.sh creates the network `kind` itself with the stack's first IPv4 CIDR before kind
runs (kind reuses an existing network of that name: kind v0.32.0,
pkg/cluster/internal/providers/docker/network.go, ensureNetwork), and refuses an existing one with
another subnet. The stack setting is the one source of the address.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys

from components.model.catalog.stack_config import parse_settings
from components.model.core.labels import pool_node_labels, pool_taint
from components.model.settings.stack import StackSettings
from tools.plan.harness import PROJECT_ROOT, stack_config

KIND_CONFIG = PROJECT_ROOT / "kind" / "cluster.yaml"
# The node images kind v0.32.0 was released with, by Kubernetes minor (its release notes).
NODE_IMAGES = {
    "1.36": "kindest/node:v1.36.1@sha256:3489c7674813ba5d8b1a9977baea8a6e553784dab7b84759d1014dbd78f7ebd5",
}
_HEADER = """\
# kind cluster for the dev stack (`make cluster`, scripts/e2e/create-cluster.sh).
# Generated from Pulumi.dev.yaml by `tenancy kind-config --write` (`make cluster` runs it):
# edit the stack, not this file.
#
# Nodes: the control plane; one untainted worker for the platform (Flux, the database operators,
# DNS: nothing of a tenant may land there); and one worker per node pool of Pulumi.dev.yaml
# (`tenancy:nodePools`, kind `existing`), labelled `tenancy.io/pool=<pool>` and
# `tenancy.io/cost-code=<costCode>` and tainted `tenancy.io/pool=<pool>:NoSchedule`, as
# components/model/core/labels.py defines them. The node image is the Kubernetes minor the stack
# declares (`tenancy:kubernetesVersion`), pinned by digest: it is the image kind v0.32.0 was
# released with. tests/e2e/test_kind_config.py keeps all of this in step with the stack.
#
# kindnet (kind's default CNI since v0.24) enforces NetworkPolicy, which the isolation relies on.
"""


class KindConfigError(Exception):
    """The dev stack asks for something this kind release cannot give (a message to show as is)."""


def dev_settings() -> StackSettings:
    config, _ = stack_config("dev")
    return parse_settings(config, "Pulumi.dev.yaml")


def rendered(settings: StackSettings) -> str:
    """kind/cluster.yaml for these settings: one node per pool, in the stack file's order."""
    image = NODE_IMAGES.get(settings.kubernetes_version)
    if image is None:
        known = ", ".join(sorted(NODE_IMAGES))
        raise KindConfigError(
            f"Pulumi.dev.yaml: tenancy:kubernetesVersion: kind v0.32.0 has no node image for "
            f"{settings.kubernetes_version} (known: {known}); add its digest to tools/generators/kind_config.py"
        )
    lines = [_HEADER.rstrip("\n"), "kind: Cluster", "apiVersion: kind.x-k8s.io/v1alpha4", "name: tenancy", "nodes:"]
    lines += ["  - role: control-plane", f"    image: {image}", "  - role: worker", f"    image: {image}"]
    for name, pool in settings.node_pools.items():
        if pool.kind != "existing":
            raise KindConfigError(
                f"Pulumi.dev.yaml: tenancy:nodePools.{name}.kind: a kind cluster has only `existing` pools"
            )
        taint = pool_taint(name)
        lines += ["  - role: worker", f"    image: {image}", "    labels:"]
        lines += [f"      {key}: {value}" for key, value in pool_node_labels(name, pool.cost_code).items()]
        lines += [
            "    kubeadmConfigPatches:",
            "      - |",
            "        kind: JoinConfiguration",
            "        nodeRegistration:",
            "          taints:",
            f"            - key: {taint['key']}",
            f"              value: {taint['value']}",
            f"              effect: {taint['effect']}",
        ]
    return "\n".join(lines) + "\n"


def subnet(settings: StackSettings) -> str:
    """The kind network's IPv4 subnet: the first IPv4 CIDR of `tenancy:network.apiServer.cidrs`."""
    target = settings.network.api_server
    cidrs = [c for c in (target.cidrs if target is not None else []) if ipaddress.ip_network(c).version == 4]
    if not cidrs:
        raise KindConfigError(
            "Pulumi.dev.yaml: tenancy:network.apiServer.cidrs: no IPv4 CIDR for kind's Docker network; CloudNativePG "
            "instances reach the API server on it (for example 172.18.0.0/16)"
        )
    return cidrs[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy kind-config", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate kind/cluster.yaml")
    group.add_argument("--check", action="store_true", help="exit 1, saying what to run, when it is stale")
    group.add_argument("--subnet", action="store_true", help="print the kind Docker network's subnet")
    args = parser.parse_args(argv)
    try:
        settings = dev_settings()
        if args.subnet:
            print(subnet(settings))
            return 0
        text = rendered(settings)
    except KindConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    if args.write:
        KIND_CONFIG.write_text(text, encoding="utf-8")
        print(f"wrote {KIND_CONFIG.relative_to(PROJECT_ROOT)}")
        return 0
    if KIND_CONFIG.read_text(encoding="utf-8") != text:
        print(
            f"{KIND_CONFIG.relative_to(PROJECT_ROOT)} is out of step with Pulumi.dev.yaml (node pools, Kubernetes "
            "version): run `tenancy kind-config --write`",
            file=sys.stderr,
        )
        return 1
    print(f"{KIND_CONFIG.relative_to(PROJECT_ROOT)} is current")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
