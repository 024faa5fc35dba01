"""Cluster-wide parts every tenant shares: providers, shared roles, the link to the platform stack."""
