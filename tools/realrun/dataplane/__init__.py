"""The real run's data plane: real kubelet nodes, CNI, a NetworkPolicy enforcer and probe pods whose
connections measure tenant isolation with real packets (docs/real-run.md#the-data-plane)."""
