"""Virtual clusters: a vCluster control plane inside a tenant namespace (`isolation: virtual-cluster`).

values.py says what the chart is told, rbac.py what its syncer may do on the host, objects.py
registers the host-side objects, previous.py reads what the stack deployed last so a switch back to
a namespace cannot silently delete a virtual cluster's state. Decision: docs/adr/0011.
"""
