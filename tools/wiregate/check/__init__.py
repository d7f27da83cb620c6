"""``wiregate check``: the one gate a maintainer or CI runs. Steps run in order and each gives a
result as data; reporters render the summary."""

from wiregate.check.model import CheckReport, Problem, StepResult, StepStatus

__all__ = ["CheckReport", "Problem", "StepResult", "StepStatus"]
