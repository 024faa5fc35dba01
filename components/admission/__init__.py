"""Admission policy: the bundle of ValidatingAdmissionPolicies and one module per rule (rules as data)."""
