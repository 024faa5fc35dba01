"""The tenancy CrossGuard policy pack (`pulumi preview --policy-pack policy`); see tenancy_policies."""
