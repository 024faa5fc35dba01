"""The guard rails of a tenant namespace: namespace, quota, network isolation, access."""
