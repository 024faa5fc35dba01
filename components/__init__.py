"""Components of the tenancy platform, one folder per feature; tenant.py composes them.

model (tenant files and stack settings), guardrails, admission, pools, data, clouds, delivery and
platform: see docs/architecture.md for the layout.
"""
