"""Reading the inputs: the stack config into checked settings, the tenant files into a catalog."""
