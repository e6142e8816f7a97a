"""Reads that pages and commands share."""

from datasets_app.importing.spec import CheckOptions


def checker_options() -> CheckOptions:
    """The checker's options as the administrator has set them."""
    # Replaced by the database-backed setting with the models (issue 2).
    return CheckOptions(python_checks_enabled=False)
