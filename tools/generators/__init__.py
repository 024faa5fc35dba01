"""Generated files: reference docs, the tenant schema, kind config, e2e manifests, requirements."""
