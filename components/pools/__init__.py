"""The cloud side of each node pool kind; `components.node_pool.NodePool` picks one by `kind`."""
