"""How long reading and cross-checking the tenant files takes, without the Pulumi program.

    tenancy bench-catalog --sizes 1000,3000 [--stack dev]

Each size writes that many of the benchmark's typical tenants (tools/scale/bench.py), each with two
domains of its own (an exact name and a wildcard) so the domain-overlap check has work to do, and
times `load_catalog` on them: YAML parsing, the models, and every cross-tenant check. The plan
benchmark (tools/scale/bench.py) includes this time inside its end-to-end figures; this one isolates it,
so that a check which grows faster than the tenant count shows up on its own (docs/scale.md).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from components.clouds.registry import cloud_for
from components.model.catalog.load import load_catalog
from components.model.catalog.stack_config import parse_settings
from tools.plan.harness import stack_config
from tools.scale.bench_tenants import typical_tenant
from tools.scale.tenant_mix import write_tenants


def tenant_with_domains(index: int) -> dict[str, Any]:
    """The typical tenant plus two domains no other tenant claims."""
    return {**typical_tenant(index), "domains": [f"shop{index}.example.com", f"*.api{index}.example.org"]}


def catalog_seconds(count: int, stack: str) -> float:
    """Wall seconds of `load_catalog` over `count` tenants with domains (best of one cold run)."""
    config, _ = stack_config(stack)
    settings = parse_settings(config, f"Pulumi.{stack}.yaml")
    with tempfile.TemporaryDirectory() as directory:
        tenants = write_tenants([tenant_with_domains(i) for i in range(count)], Path(directory) / "tenants")
        start = time.perf_counter()
        catalog = load_catalog(tenants, settings, stack, cloud=cloud_for(settings))
        seconds = time.perf_counter() - start
    if len(catalog.tenants) != count:
        raise RuntimeError(f"expected {count} tenants, read {len(catalog.tenants)}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy bench-catalog", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="100,1000,3000", help="comma-separated tenant counts")
    parser.add_argument("--stack", default="dev", help="stack whose settings the tenants are checked against")
    args = parser.parse_args(argv)
    print("| tenants | catalog s | ms per tenant |")
    print("|---:|---:|---:|")
    for count in (int(size) for size in args.sizes.split(",")):
        seconds = catalog_seconds(count, args.stack)
        print(f"| {count} | {seconds:.2f} | {seconds * 1000 / count:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
