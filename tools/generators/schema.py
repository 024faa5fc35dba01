"""Generate the JSON Schema for tenant files from the pydantic model, so editors validate YAML.

    tenancy schema --write     # regenerate schemas/tenant.schema.json
    tenancy schema --check     # exit 1 if the committed schema is stale (tests do this too)

Tenant files point at it with a first line `# yaml-language-server: $schema=../schemas/tenant.schema.json`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from components.model.tenant_file.spec import TenantFile
from tools.generators.docs import described_schema
from tools.plan.harness import PROJECT_ROOT

SCHEMA_PATH = PROJECT_ROOT / "schemas" / "tenant.schema.json"


def tenant_schema() -> dict[str, Any]:
    """The schema of a tenant file as people write it (camelCase keys), every field described."""
    schema = described_schema(TenantFile)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "tenancy tenant file"
    return schema


def rendered() -> str:
    return json.dumps(tenant_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tenancy schema", description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="regenerate schemas/tenant.schema.json")
    group.add_argument("--check", action="store_true", help="exit 1 if the committed schema is stale")
    args = parser.parse_args(argv)
    if args.write:
        SCHEMA_PATH.parent.mkdir(exist_ok=True)
        SCHEMA_PATH.write_text(rendered(), encoding="utf-8")
        print(f"wrote {SCHEMA_PATH.relative_to(PROJECT_ROOT)}")
        return 0
    if not SCHEMA_PATH.exists() or SCHEMA_PATH.read_text(encoding="utf-8") != rendered():
        print(f"{SCHEMA_PATH.relative_to(PROJECT_ROOT)} is stale: run `make schema`", file=sys.stderr)
        return 1
    print(f"{SCHEMA_PATH.relative_to(PROJECT_ROOT)} is current")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
