"""A changed password revokes its owner's API tokens, whichever way it changed: the
password change page, a reset link, the admin, `manage.py changepassword`, a shell.

Django tells every entry of AUTH_PASSWORD_VALIDATORS when a user's password was saved
(`password_changed`, from `AbstractBaseUser.save`), so the rule lives there, below every
caller. A token taken along with a password (a stolen laptop, a leaked CI secret) stops
working once its owner changes the password.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_not_required
from django.contrib.auth.models import User
from django.utils.decorators import method_decorator

from datasets_app.models import ApiToken
from datasets_app.services import tokens

REVOKES_TOKENS = "Changing a password revokes its owner's API tokens."
WILL_REVOKE = "Changing your password revokes your {count} API token{s}."
REVOKED = "Your {count} API token{s} were revoked: make new ones for your scripts."


def _plural(template: str, count: int) -> str:
    return template.format(count=f"{count:,}", s="" if count == 1 else "s")


class ApiTokensRevokedOnChange:
    """Not a rule for passwords: the hook that revokes API tokens when one changes."""

    def validate(self, password: str, user: Any = None) -> None:
        return None

    def password_changed(self, password: str, user: Any = None) -> None:
        if user is not None and user.pk is not None:
            tokens.api_tokens_revoke_all(user=user)

    def get_help_text(self) -> str:
        return REVOKES_TOKENS


def active_token_count(user: User) -> int:
    return ApiToken.objects.filter(user=user).active().count()


class PasswordChangeView(auth_views.PasswordChangeView):
    """Django's password change, saying beforehand how many API tokens it revokes."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        count = active_token_count(self.request.user)  # type: ignore[arg-type]
        context["tokens_warning"] = _plural(WILL_REVOKE, count) if count else ""
        return context

    def form_valid(self, form: Any) -> Any:
        count = active_token_count(self.request.user)  # type: ignore[arg-type]
        response = super().form_valid(form)
        if count:
            messages.success(self.request, _plural(REVOKED, count))
        return response


@method_decorator(login_not_required, name="dispatch")
class InviteView(auth_views.PasswordResetConfirmView):
    """An invite link (`people.person_invite`): the person chooses their password and is
    signed in. Django's reset confirmation, so the link is checked the same way."""

    template_name = "registration/invite.html"
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"
    success_url = "/"

    def form_valid(self, form):
        response = super().form_valid(form)
        messages.success(self.request, f"Welcome, {form.user.get_username()}: you are signed in.")
        return response
