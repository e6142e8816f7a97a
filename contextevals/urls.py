"""The project's URLs: accounts, the admin, the HTTP API and the datasets app."""

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import urls as auth_urls
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path

from datasets_app import api, passwords

# Password reset mails a link: without email configured (EMAIL_HOST), its pages would say
# "sent" and send nothing, so they are not served at all.
PASSWORD_RESET_PAGES = {
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
}
account_urls = [
    # Django's, saying beforehand how many API tokens a new password revokes.
    path("password_change/", passwords.PasswordChangeView.as_view(), name="password_change"),
    # An administrator's invite (the People page): served whether or not mail is set up.
    path("invite/<uidb64>/<token>/", passwords.InviteView.as_view(), name="invite"),
    *(
        pattern
        for pattern in auth_urls.urlpatterns
        if getattr(pattern, "name", None) != "password_change"
        and (
            settings.PASSWORD_RESET_ENABLED
            or getattr(pattern, "name", None) not in PASSWORD_RESET_PAGES
        )
    ),
]


@login_not_required
def favicon(request: HttpRequest) -> HttpResponse:
    # Resolved per request: with DEBUG=0 the hashed name is known only after collectstatic,
    # which must not be needed just to load the URLs (`migrate` loads them).
    return redirect(static("favicon.svg"), permanent=True)


urlpatterns = [
    # Browsers ask for /favicon.ico on every page, the admin's included.
    path("favicon.ico", favicon),
    path("accounts/", include(account_urls)),
    path("admin/", admin.site.urls),
    *api.urlpatterns,
    path("", include("datasets_app.urls")),
]

# Errors: a plain page in the app's style, the API's error shape under /api/.
handler400 = "datasets_app.error_pages.bad_request"
handler403 = "datasets_app.error_pages.permission_denied"
handler404 = "datasets_app.error_pages.page_not_found"
handler500 = "datasets_app.error_pages.server_error"
