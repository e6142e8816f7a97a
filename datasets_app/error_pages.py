"""The site's error handlers (handler400/403/404/500 in the root URLconf): a plain page in
the app's style for the pages, the API's one error shape for anything under /api/.

They answer what Django raises before a view runs (a Host we do not serve, a form with
too many fields read by CSRF), and what a view lets escape.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template import loader

from datasets_app import request_errors
from datasets_app.api import errors

API_PREFIX = "/api/"
NOT_FOUND = "There is no page here, or it is not one you can see."


def _is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def _refused(request: HttpRequest, exception: BaseException | None) -> HttpResponse:
    refused = request_errors.describe(exception)
    if _is_api(request):
        return errors.error_response(refused.status, refused.code, refused.message)
    # A 413 is a request refused like a 400 (refused.html's words fit both).
    template = "403.html" if refused.status == 403 else "400.html"
    return render(request, template, {"message": refused.message}, status=refused.status)


def bad_request(request: HttpRequest, exception: BaseException) -> HttpResponse:
    return _refused(request, exception)


def permission_denied(request: HttpRequest, exception: BaseException) -> HttpResponse:
    return _refused(request, exception)


def page_not_found(request: HttpRequest, exception: BaseException) -> HttpResponse:
    if _is_api(request):
        return errors.error_response(404, "not_found", errors.NOT_FOUND)
    return render(request, "404.html", {"message": NOT_FOUND}, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return errors.error_response(500, "server_error", errors.SERVER_ERROR)
    # No request context: whatever failed may be what a context processor needs.
    return HttpResponse(loader.get_template("500.html").render(), status=500)
