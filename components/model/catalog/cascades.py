"""One mistake, one message: problems that only follow from another problem of the same file are left out.

A wrong `environments` list makes the quota split over the wrong environments, the GitOps refs and
databases that name the replaced environment, each a problem of its own; the person fixing the file
needs the first one. They are checked again once it is fixed (tests/model/test_messages.py).
"""

from __future__ import annotations

from components.model.core.errors import Problem


def _follows_environments(where: str) -> bool:
    """Fields whose checks are computed from the tenant's environments: its quota split and budget,
    GitOps refs per environment, and every `environments` list inside the file."""
    return where.startswith(("quota", "gitops")) or where.endswith(".environments") or ".environments." in where


def without_cascades(problems: list[Problem]) -> list[Problem]:
    """One mistake, one message: where a file's `environments` is wrong, the problems that follow from
    it in the same file (a quota split over the wrong environments, GitOps refs or databases naming the
    environment that was replaced) are left out; they are checked again once it is fixed."""
    wrong = {problem.file for problem in problems if problem.field == "environments"}
    return [
        problem
        for problem in problems
        if problem.file not in wrong or problem.field == "environments" or not _follows_environments(problem.field)
    ]
