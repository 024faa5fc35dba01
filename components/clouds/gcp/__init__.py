"""GCP: GKE workload identity, Cloud SQL, Secret Manager and Cloud KMS."""
