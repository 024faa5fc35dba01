"""The tenancy CrossGuard policy pack (`pulumi preview --policy-pack policy_pack`); see tenancy_policies."""
