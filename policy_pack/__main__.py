"""Entry point the Pulumi CLI runs for `--policy-pack policy_pack`: only the pack's name and its policies.

The validators live in `tenancy_policies` so tests and the offline plan check import them without
starting a policy server.
"""

import sys
from pathlib import Path

from pulumi_policy import EnforcementLevel, PolicyPack

# The CLI starts this file from inside policy_pack/; the project root makes `policy_pack.` importable.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from policy_pack.tenancy_policies import POLICIES

PolicyPack(name="tenancy", enforcement_level=EnforcementLevel.MANDATORY, policies=POLICIES)
