"""The project's URLs: accounts, the admin and the datasets app."""

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import urls as auth_urls
from django.contrib.auth.decorators import login_not_required
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

# Password reset mails a link: without email configured (EMAIL_HOST), its pages would say
# "sent" and send nothing, so they are not served at all.
PASSWORD_RESET_PAGES = {
    "password_reset",
    "password_reset_done",
    "password_reset_confirm",
    "password_reset_complete",
}
account_urls = [
    pattern
    for pattern in auth_urls.urlpatterns
    if settings.PASSWORD_RESET_ENABLED or pattern.name not in PASSWORD_RESET_PAGES
]

urlpatterns = [
    # Browsers ask for /favicon.ico on every page, the admin's included.
    path(
        "favicon.ico",
        login_not_required(RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    ),
    path("accounts/", include(account_urls)),
    path("admin/", admin.site.urls),
    path("", include("datasets_app.urls")),
]
