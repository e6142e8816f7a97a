"""Verifiers that grade an agent's answer: exact match, judges and sandboxed Python checks.

No Django here (a test asserts it). `Verdict` and the task/output views use only the
standard library, so an author's check can import them inside the sandbox.
"""

from context_verifiers.verdict import Verdict
from context_verifiers.views import CriterionView, FileView, OutputView, TaskView

__all__ = ["CriterionView", "FileView", "OutputView", "TaskView", "Verdict"]
