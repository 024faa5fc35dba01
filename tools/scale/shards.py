"""Split a stack into a platform stack and tenant shard stacks, and show how tenants spread.

    tenancy shards layout --stack prod [--count N]
        Plan the stack offline and print tenants, resources, and the expected preview time and memory
        (tools/scale/shard_budget.py, from measured figures) per shard for N shards (default: the stack's
        shards.count), warning where a shard passes shards.resourceBudget.
    tenancy shards write --stack prod --count N --org ORG --repo URL [--check]
        Write Pulumi.<stack>-platform.yaml and Pulumi.<stack>-shard-<i>.yaml (the base stack's config
        plus the role keys; an existing file keeps the `encryptedkey` `pulumi stack init` added and any
        other key `write` does not own), Pulumi Kubernetes Operator Stack objects in deploy/operator/<stack>.yaml
        when the base stack's `tenancy:shards.runner` is `operator`, and the layout in deploy/shards/<stack>.json
        (with its runner; CI deploys only `ci` stacks). --check exits 1 if the files are stale.

The base file `Pulumi.<stack>.yaml` stays the one place to edit settings; the generated files are
rewritten from it, and a test fails when they drift.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.clouds.registry import cloud_for
from components.model.catalog.load import load_catalog
from components.model.catalog.stack_config import parse_settings
from components.model.checks.stack import OPERATOR_IDENTITY
from components.model.core.yaml_text import load_yaml
from components.model.settings.sharding import shard_of
from components.model.settings.stack import ShardSettings
from tools.plan.harness import PROJECT_NAME, PROJECT_ROOT, run_program, stack_config
from tools.scale.operator_stack import PULUMI_CLOUD, OperatorSource, operator_manifest
from tools.scale.shard_budget import load_figures, shard_lines

RESYNC_SECONDS = 600


@dataclass
class ShardLayout:
    """Tenants and resources per shard of a stack."""

    platform_resources: int
    tenants: dict[int, list[str]]
    resources: dict[int, int]
    budget: int

    def over_budget(self) -> list[int]:
        return [shard for shard, count in self.resources.items() if count > self.budget]


def layout(stack: str, count: int | None = None, root: Path = PROJECT_ROOT) -> ShardLayout:
    """Plan `stack` as one stack and attribute each tenant's resources to its shard."""
    config, secret_keys = stack_config(stack, {"tenancy:stackRole": "all"}, root=root)
    settings = parse_settings(config, f"Pulumi.{stack}.yaml")
    shard_count = count or settings.shards.count
    catalog = load_catalog(
        PROJECT_ROOT / settings.tenants_dir, settings, stack, cloud=cloud_for(settings), root=PROJECT_ROOT
    )
    run = run_program(stack, config, secret_keys)
    tenants: dict[int, list[str]] = defaultdict(list)
    resources: dict[int, int] = {shard: 0 for shard in range(shard_count)}
    platform = 0
    shard_by_tenant: dict[str, int] = {}
    for entry in catalog.tenants:
        shard_by_tenant[entry.spec.name] = shard_of(entry.spec.name, shard_count, entry.spec.shard)
        tenants[shard_by_tenant[entry.spec.name]].append(entry.spec.name)
    for resource in run.resources:
        tenant = run.tenant_of(resource)
        if tenant is None:
            platform += 1
        else:
            resources[shard_by_tenant[tenant]] += 1
    return ShardLayout(
        platform, {s: tenants.get(s, []) for s in range(shard_count)}, resources, settings.shards.resource_budget
    )


# The keys of a generated stack file that `write` owns; every other key of an existing file (the
# `encryptedkey` or `encryptionsalt` that `pulumi stack init` added, an `environment` list) is kept:
# dropping the data key would leave the stack's config secrets undecryptable.
OWNED_KEYS = frozenset({"config", "secretsprovider"})


def _existing(path: Path) -> dict[str, Any]:
    """The keys of an existing stack file that `write` does not own, to carry over unchanged."""
    if not path.is_file():
        return {}
    document = load_yaml(path.read_text(encoding="utf-8")) or {}
    if not isinstance(document, dict):
        raise ValueError(f"{path}: expected a mapping of stack settings")
    return {key: value for key, value in document.items() if key not in OWNED_KEYS}


def _stack_file(base: dict[str, Any], stack: str, role_config: dict[str, Any], kept: dict[str, Any]) -> str:
    config = {key: value for key, value in (base.get("config") or {}).items()}
    config.update(role_config)
    # The operator's workspace runs `up` as its service account: it must be a platform identity, or
    # the platform-owned admission rule denies every resync (components/model/checks/stack.py).
    policy = dict(config.get("tenancy:policy") or {})
    identities = dict(policy.get("platformIdentities") or {})
    users = list(identities.get("users") or [])
    identities["users"] = users if OPERATOR_IDENTITY in users else [*users, OPERATOR_IDENTITY]
    config["tenancy:policy"] = {**policy, "platformIdentities": identities}
    header = f"# Generated from Pulumi.{stack}.yaml by `tenancy shards write`; edit that file and re-run.\n"
    document: dict[str, Any] = {**kept, "config": config}
    if "secretsprovider" in base:
        document["secretsprovider"] = base["secretsprovider"]
    return header + yaml.safe_dump(document, sort_keys=True)


def generated_files(
    stack: str,
    count: int,
    org: str,
    repo: str,
    branch: str = "main",
    root: Path = PROJECT_ROOT,
    backend: str = PULUMI_CLOUD,
    cloud_identity: str | None = None,
) -> dict[Path, str]:
    """Every file `write` produces, by path, with its content."""
    base = load_yaml((root / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8")) or {}
    platform = f"{stack}-platform"
    platform_path = root / f"Pulumi.{platform}.yaml"
    files: dict[Path, str] = {
        platform_path: _stack_file(
            base,
            stack,
            {"tenancy:stackRole": "platform", "tenancy:shards": {"count": count}, "tenancy:baseStack": stack},
            _existing(platform_path),
        )
    }
    shard_names = [f"{stack}-shard-{index}" for index in range(count)]
    for index, name in enumerate(shard_names):
        path = root / f"Pulumi.{name}.yaml"
        files[path] = _stack_file(
            base,
            stack,
            {
                "tenancy:stackRole": "tenants",
                "tenancy:baseStack": stack,
                "tenancy:shards": {"count": count, "index": index},
                "tenancy:platformStack": f"{org}/{PROJECT_NAME}/{platform}",
            },
            _existing(path),
        )
    # One runner per split stack (docs/adr/0032-one-runner-per-shard.md): the operator's Stack objects
    # exist only for a stack the operator owns, and the CI matrix says who owns it.
    runner = runner_of(base, stack)
    if runner == "operator":
        source = OperatorSource(org, repo, branch, backend, cloud_identity)
        files[root / "deploy" / "operator" / f"{stack}.yaml"] = operator_manifest(
            stack, base, [platform, *shard_names], source
        )
    files[root / "deploy" / "shards" / f"{stack}.json"] = (
        json.dumps({"platform": platform, "runner": runner, "shards": shard_names}, indent=2) + "\n"
    )
    return files


def runner_of(base: dict[str, Any], stack: str) -> str:
    """`tenancy:shards.runner` of the base stack file: `ci` (default) or `operator`."""
    shards = ShardSettings.model_validate((base.get("config") or {}).get("tenancy:shards") or {})
    return shards.runner


def stale_operator_manifest(stack: str, root: Path = PROJECT_ROOT) -> Path | None:
    """deploy/operator/<stack>.yaml left over from when the operator owned a stack CI now runs."""
    path = root / "deploy" / "operator" / f"{stack}.yaml"
    base = load_yaml((root / f"Pulumi.{stack}.yaml").read_text(encoding="utf-8")) or {}
    return path if path.exists() and runner_of(base, stack) != "operator" else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy shards", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser(
        "layout", help="print the resources per shard", description="Print the platform's and each shard's resources."
    )
    show.add_argument("--stack", required=True, help="the stack to split; reads Pulumi.<stack>.yaml")
    show.add_argument("--count", type=int, help="number of shards (default: the stack's tenancy:shards.count)")
    write = sub.add_parser(
        "write",
        help="write the shard stacks' files",
        description="Write the platform and shard stack files (and the operator's Stack objects) for a split.",
    )
    write.add_argument("--stack", required=True, help="the stack to split; reads Pulumi.<stack>.yaml")
    write.add_argument("--count", type=int, required=True, help="number of tenant shards")
    write.add_argument("--org", required=True, help="Pulumi organization (or `organization` for DIY backends)")
    write.add_argument("--repo", required=True, help="Git URL of this repository, for the operator")
    write.add_argument("--branch", default="main", help="Git branch the operator deploys from (default main)")
    write.add_argument("--backend", default=PULUMI_CLOUD, help="state backend the operator uses (gs://, s3://)")
    write.add_argument("--cloud-identity", help="Google service account or IAM role ARN of the operator's runs")
    write.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is stale or left over")
    write.add_argument("--root", type=Path, default=PROJECT_ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.command == "layout":
        result = layout(args.stack, args.count)
        print(f"platform: {result.platform_resources} resources")
        print("\n".join(shard_lines(result.resources, result.tenants, result.budget, load_figures())))
        for shard in result.over_budget():
            print(
                f"warning: shard {shard} has {result.resources[shard]} resources, over the budget of "
                f"{result.budget} (raise shards.count)",
                file=sys.stderr,
            )
        return 0

    files = generated_files(
        args.stack,
        args.count,
        args.org,
        args.repo,
        args.branch,
        root=args.root,
        backend=args.backend,
        cloud_identity=args.cloud_identity,
    )
    stale = [path for path, text in files.items() if not path.exists() or path.read_text(encoding="utf-8") != text]
    leftover = stale_operator_manifest(args.stack, args.root)
    if args.check:
        for path in stale:
            print(f"{path.relative_to(args.root)} is stale: re-run tenancy shards write", file=sys.stderr)
        if leftover is not None:
            print(f"{leftover.relative_to(args.root)}: CI runs {args.stack}; delete it", file=sys.stderr)
        return 1 if stale or leftover else 0
    if leftover is not None:
        leftover.unlink()
        print(f"removed {leftover.relative_to(args.root)} (tenancy:shards.runner is ci)")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
