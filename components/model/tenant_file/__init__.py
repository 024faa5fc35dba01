"""The tenant file: one `tenants/<name>.yaml`, its sections and the rules inside one file."""
