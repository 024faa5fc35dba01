"""guardrails"""
