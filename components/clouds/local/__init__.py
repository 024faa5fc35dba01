"""A local cluster (kind, k3d): in-cluster databases and Kubernetes Secrets."""
