"""The sandbox's self-test as the site records it, and what that means for the
administrator's "Python checks" switch: on only while the last self-test passed."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from context_verifiers.sandbox import SelfTestReport, self_test
from datasets_app.models import SiteSettings

NEVER_RAN = (
    "Python checks can be turned on only after the sandbox self-test has passed, and it has "
    "not run yet: run `manage.py check_verifier_sandbox` on the machine that grades."
)
FAILED = (
    "Python checks can be turned on only while the last sandbox self-test passed; the one "
    "on {at} failed. Fix the sandbox, then run `manage.py check_verifier_sandbox` again. "
    "What it said: {what}"
)


def python_checks_refusal(*, settings: SiteSettings) -> str | None:
    """Why Python checks cannot be turned on now, or None when they can."""
    if settings.sandbox_self_test_passed is None or settings.sandbox_self_test_at is None:
        return NEVER_RAN
    if settings.sandbox_self_test_passed:
        return None
    failures = [
        line.strip()
        for line in settings.sandbox_self_test_report.splitlines()
        if "NOT CONTAINED" in line or line.startswith("sandbox unavailable")
    ]
    at = timezone.localtime(settings.sandbox_self_test_at).strftime("%d %B %Y at %H:%M")
    return FAILED.format(at=at, what="; ".join(failures) or "see the report below")


def sandbox_self_test_record(*, report: SelfTestReport) -> SiteSettings:
    """Keep a self-test's outcome; a failed one also turns Python checks off."""
    with transaction.atomic():
        SiteSettings.load()
        settings = SiteSettings.objects.select_for_update().get(pk=1)
        settings.sandbox_self_test_passed = report.passed
        settings.sandbox_self_test_at = timezone.now()
        settings.sandbox_self_test_report = "\n".join(report.lines())
        if not report.passed:
            settings.python_checks_enabled = False
        settings.full_clean()
        settings.save()
    return settings


def sandbox_self_test_run() -> tuple[SelfTestReport, SiteSettings]:
    """Run the hostile programs through the sandbox here, and record what happened."""
    report = self_test()
    return report, sandbox_self_test_record(report=report)
