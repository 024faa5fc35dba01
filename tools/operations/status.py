"""Observed status: what the cluster actually runs for each tenant, against what the program renders.

    tenancy status --stack dev [--tenant acme] [--json] [--context NAME]

Reads the live cluster through the kubeconfig (the stack's `tenancy:cluster.context`, or
`--context`, or the current context) with the official Kubernetes client, and prints per tenant and
environment: namespace present, quota used against hard, Flux sources, Kustomizations and
HelmReleases (Ready, revision), ExternalSecrets (Ready), database objects (CloudNativePG phase,
MariaDB Ready), pods not ready and the last reconcile, then a one-line verdict per tenant: Ready,
Suspended (the suspension holds), Decommissioned (only retained namespaces expected) or NotReady.
What the program renders (its offline plan, tools/plan/harness.py) is the expectation: objects it
registers that the cluster lacks are problems. Cloud databases are listed by their instance names
from the plan's outputs; their state lives in the cloud's API, which this command does not call
(it needs no cloud credentials). Exit code 1 when any tenant is NotReady, 2 on invalid configuration,
an unreachable cluster, no usable kubeconfig (the message says how to point the command at a cluster)
or a missing Kubernetes client (requirements-ops.txt installs it).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from components.model.catalog.stack_config import parse_settings
from components.model.core.errors import ConfigurationError
from tools.operations.status_model import EnvironmentStatus, environment_status, verdict
from tools.operations.status_read import (
    CUSTOM_KINDS,
    NO_CLUSTER,
    ClientMissingError,
    ClusterReader,
    config_error,
    kubernetes_reader,
    unreachable_errors,
)
from tools.plan.harness import PROJECT_ROOT, ProgramRun, run_stack, stack_config
from tools.plan.run import is_kubernetes_object, manifest

_WATCHED = {(api, kind) for api, kind, _ in CUSTOM_KINDS}


def expected_objects(run: ProgramRun, namespace: str) -> list[dict[str, Any]]:
    """The custom objects the program registers in `namespace` that the status watches."""
    objects = [manifest(r) for r in run.resources if is_kubernetes_object(r)]
    return [
        o for o in objects if o["metadata"].get("namespace") == namespace and (o["apiVersion"], o["kind"]) in _WATCHED
    ]


def tenant_namespaces(summary: dict[str, Any]) -> dict[str, str]:
    """Environment -> namespace the tenant should have: all of them, or the retained ones."""
    if summary.get("lifecycle") == "decommissioned":
        retained = (summary.get("retained") or {}).get("namespaces") or []
        return {ns.rsplit("-", 1)[1]: ns for ns in retained}
    return dict(summary.get("namespaces") or {})


def cloud_databases(summary: dict[str, Any], in_cluster: bool) -> list[dict[str, str]]:
    """Cloud database instances from the outputs; in-cluster ones are read as objects instead."""
    if in_cluster:
        return []
    databases = (summary.get("data") or {}).get("databases") or {}
    return [
        {"environment": env, "database": name, "instance": str(facts.get("instance")), "state": "not read (cloud API)"}
        for env, by_name in sorted(databases.items())
        for name, facts in sorted(by_name.items())
    ]


def tenant_status(
    name: str, summary: dict[str, Any], run: ProgramRun, reader: ClusterReader, cloud: str
) -> dict[str, Any]:
    lifecycle = str(summary.get("lifecycle", "active"))
    environments: list[EnvironmentStatus] = []
    for env, namespace in sorted(tenant_namespaces(summary).items()):
        live = reader.read(namespace)
        expected = [] if lifecycle == "decommissioned" else expected_objects(run, namespace)
        environments.append(environment_status(env, namespace, live, expected, suspended=lifecycle == "suspended"))
    word, healthy = verdict(lifecycle, environments)
    return {
        "tenant": name,
        "lifecycle": lifecycle,
        "verdict": word,
        "healthy": healthy,
        "problems": [f"{e.environment}: {p}" for e in environments for p in e.problems],
        "cloudDatabases": cloud_databases(summary, cloud == "local"),
        "environments": [_environment_json(e) for e in environments],
    }


def _environment_json(env: EnvironmentStatus) -> dict[str, Any]:
    return {
        "environment": env.environment,
        "namespace": env.namespace,
        "present": env.present,
        "quota": env.quota,
        "objects": [o.as_json() for o in env.objects],
        "podsNotReady": env.pods_not_ready,
        "runningPods": env.running_pods,
        "lastReconcile": env.last_reconcile,
    }


def render_text(statuses: list[dict[str, Any]]) -> str:
    """Per tenant a verdict line, then per environment its namespace, quota, objects and pods."""
    lines: list[str] = []
    for tenant in statuses:
        why = f": {'; '.join(tenant['problems'])}" if tenant["problems"] else ""
        lines.append(f"{tenant['tenant']} ({tenant['lifecycle']}): {tenant['verdict']}{why}")
        for env in tenant["environments"]:
            lines.append(f"  {env['environment']}  {env['namespace']}  {'present' if env['present'] else 'MISSING'}")
            if env["quota"]:
                used = ", ".join(f"{k} {v['used']}/{v['hard']}" for k, v in env["quota"].items())
                lines.append(f"    quota: {used}")
            for obj in env["objects"]:
                state = "Ready" if obj["ready"] else "not Ready"
                extra = "".join(f", {obj[k]}" for k in ("detail", "last") if k in obj)
                lines.append(
                    f"    {obj['kind']} {obj['name']}: {state}{' (suspended)' if obj.get('suspended') else ''}{extra}"
                )
            lines.append(
                f"    pods: {env['runningPods']} running, not ready: {', '.join(env['podsNotReady']) or 'none'}"
            )
            lines.append(f"    last reconcile (latest Flux condition change): {env['lastReconcile'] or 'unknown'}")
        for db in tenant["cloudDatabases"]:
            lines.append(
                f"  cloud database {db['environment']}/{db['database']}: {db['instance']}, state {db['state']}"
            )
    return "\n".join(lines) if lines else "No tenants."


def parser() -> argparse.ArgumentParser:
    result = argparse.ArgumentParser(prog="tenancy status", description=__doc__.split("\n\n")[0])
    result.add_argument("--stack", required=True, help="stack name; reads Pulumi.<stack>.yaml")
    result.add_argument("--tenant", help="only this tenant")
    result.add_argument("--json", action="store_true", help="print JSON instead of text")
    result.add_argument("--context", help="kubeconfig context (default: the stack's cluster.context, else current)")
    result.add_argument("--tenants-dir", type=Path, help="tenant files to use instead of tenants/")
    return result


def main(argv: list[str] | None = None, reader: ClusterReader | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        unreachable = unreachable_errors()
    except ClientMissingError as error:
        print(error, file=sys.stderr)
        return 2
    overrides = {"tenancy:tenantsDir": str(args.tenants_dir.resolve())} if args.tenants_dir else {}
    try:
        settings = parse_settings(stack_config(args.stack, overrides)[0], f"Pulumi.{args.stack}.yaml")
        run = run_stack(args.stack, overrides)
    except (ConfigurationError, FileNotFoundError) as error:
        print(str(error), file=sys.stderr)
        return 2
    tenants = run.outputs.get("tenants") or {}
    if args.tenant is not None and args.tenant not in tenants:
        print(f"tenant {args.tenant!r} is not in stack {args.stack}", file=sys.stderr)
        return 2
    try:
        reader = reader or kubernetes_reader(args.context or settings.cluster.context)
        statuses = [
            tenant_status(name, summary, run, reader, settings.cloud)
            for name, summary in sorted(tenants.items())
            if args.tenant is None or name == args.tenant
        ]
    except unreachable as error:
        print(f"cannot read the cluster ({type(error).__name__}): {error}", file=sys.stderr)
        if isinstance(error, config_error()):
            print(NO_CLUSTER, file=sys.stderr)
        return 2
    print(json.dumps(statuses, indent=2) if args.json else render_text(statuses))
    return 0 if all(s["healthy"] for s in statuses) else 1


if __name__ == "__main__":
    sys.path.insert(0, str(PROJECT_ROOT))
    raise SystemExit(main())
