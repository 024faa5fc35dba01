"""Scale: the benchmark, shard layout and budgets, and the operator stacks that run the shards."""
