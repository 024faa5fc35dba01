"""Apps and GitOps per tenant environment, reconciled by the cluster's Flux."""
