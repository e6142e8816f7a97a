"""context_verifiers is pure Python: nothing in it imports Django."""

from __future__ import annotations

from tests.importing.test_pure import modules_and_django_imports


def test_no_module_under_context_verifiers_imports_django():
    count, django_modules = modules_and_django_imports("context_verifiers")

    assert count >= 7  # verdict, views, outcome, scoring, templates, judges, grading, ...
    assert django_modules == "[]"
