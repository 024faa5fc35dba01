"""AWS: EKS identity, RDS, Secrets Manager and KMS."""
