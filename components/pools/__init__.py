"""Node pools: the NodePool component (component.py) and the cloud side of each pool kind, one module per kind."""
