"""Response headers every page gets: a Content-Security-Policy with no inline script anywhere."""

from django.conf import settings

# The app's pages load their scripts and styles from /static/ only and talk to their own websocket.
# Inline styles stay allowed for the Django admin's widgets; inline scripts never are. Images may also be blob: URLs:
# a tool card shows an artifact's images (validated PNG, JPEG, GIF, WebP) from Blobs the page itself made.
DEFAULT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"
)


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        # A view with a stricter policy of its own (the shared page) keeps it.
        response.headers.setdefault("Content-Security-Policy", settings.AGENTWEB_CSP)
        return response
