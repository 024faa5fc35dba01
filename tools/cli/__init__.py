"""The `tenancy` command: one subcommand per tool (docs/cli.md)."""
