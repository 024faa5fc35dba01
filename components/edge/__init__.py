"""The platform edge: Gateway API, TLS and DNS for tenants' hostnames (docs/edge.md)."""
