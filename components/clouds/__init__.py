"""Everything cloud-specific, behind one protocol (protocol.py) and one registry (registry.py)."""
