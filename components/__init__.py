"""Components of the tenancy platform: models (settings, spec), the catalog, and Pulumi components."""
