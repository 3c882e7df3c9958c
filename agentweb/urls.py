from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from agentweb.health import healthz

# The admin says whose it is (Django's default is "Django administration").
admin.site.site_header = "agentweb administration"
admin.site.site_title = "agentweb admin"
admin.site.index_title = "Models, agents, tools and chats"
# No list of every model beside each page: at 1280 pixels it took a quarter of the width from the lists (which then
# scrolled sideways); the home page and the breadcrumbs lead to every model (docs/tools-admin.md).
admin.site.enable_nav_sidebar = False

urlpatterns = [
    # Sign-in (issue 40, sso/): the login page with the provider's button, and sign-out that also ends the
    # provider's session, ahead of Django's auth URLs and the admin's own login, which answer the same addresses
    # (included by name: sso's admin imports agentweb.admin_display).
    path("", include("sso.account_urls")),
    path("sso/", include("sso.urls")),
    # What one person may use and why (docs/teams.md, Groups): a read-only page of the admin, ahead of its URLs.
    path("admin/auth/user/", include("chat.may_use_urls")),
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),
    # The run API (docs/api.md): a person's threads and runs, for programs holding an API key.
    path("api/v1/", include(("api.run_urls", "run_api"), namespace="run_api")),
    # Changing one's password, in the app's own pages (the admin keeps its own): ahead of Django's auth URLs,
    # which answer the same addresses with the admin's templates.
    path(
        "accounts/password_change/",
        auth_views.PasswordChangeView.as_view(template_name="registration/change_password.html"),
        name="password_change",
    ),
    path(
        "accounts/password_change/done/",
        auth_views.PasswordChangeDoneView.as_view(template_name="registration/change_password_done.html"),
        name="password_change_done",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("settings/api-keys/", include("api.keys_urls")),
    path("", include("notifications.urls")),
    path("", include("chat.urls")),
    path("", include("sharing.urls")),
    # The approvals inbox (issue 39, inbox): /inbox, its items and its count.
    path("", include("inbox.urls")),
    path("agents/", include("agents.views")),
    path("schedules/", include("schedules.views")),
    path("attachments/", include("attachments.views")),
    # The OpenAI-compatible endpoint for programs, with an API key (docs/api.md).
    path("v1/", include("api.openai_views")),
    # Webhook triggers: the person's page, and the signed deliveries that start runs (docs/background.md).
    path("hooks/", include("hooks.urls")),
    # Each person's own accounts at the MCP servers each person connects to (docs/mcp.md), and the OAuth callback.
    path("mcp/connections/", include("mcpconnect.urls")),
]
