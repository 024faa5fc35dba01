"""The platform's own controllers in the real run, built from pinned Go modules (docs/real-run.md#controllers)."""
