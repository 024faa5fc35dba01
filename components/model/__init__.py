"""Tenant files and stack settings as pydantic models, and their cross-checks; registers nothing."""
