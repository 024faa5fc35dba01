"""The real run: the real Pulumi engine and a real Kubernetes control plane, built from pinned Go
modules (realrun/), driving the dev stack end to end (docs/real-run.md)."""
