"""The stack settings: everything under `tenancy:` in `Pulumi.<stack>.yaml`, one model per section."""
