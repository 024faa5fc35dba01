"""What the CI workflows run: stack lists, Pulumi runs, identities, drift reports, e2e readiness."""
