"""Errors for bad input: every problem names its file and field, and all are reported at once."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi


@dataclass(frozen=True, order=True)
class Problem:
    """One thing wrong with the input, as `file: field.path: message`."""

    file: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.field}: {self.message}"


class ConfigurationError(pulumi.RunError):
    """Raised before any resource is registered, so a bad input never half-applies.

    A `RunError` makes the Pulumi CLI print the message without a Python traceback.
    """

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems)
        count = len(self.problems)
        lines = [f"{count} problem{'s' if count != 1 else ''} in the tenancy configuration:"]
        lines += [f"  {p}" for p in self.problems]
        super().__init__("\n".join(lines))
