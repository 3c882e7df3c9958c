"""The audit log in the admin: filterable, searchable, read-only for everyone (no add, change or delete, superusers
included), and exported as CSV or JSON with the list's own filters (staff who may view it; the export is recorded)."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.options import IncorrectLookupParameters
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpResponseBadRequest, StreamingHttpResponse
from django.urls import path
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from agentweb.admin_display import cut

from . import admin_log, export
from .actions import Action
from .models import Event
from .recording import client_ip, record
from .retention import cutoff

FORMATS = {
    "csv": ("text/csv; charset=utf-8", export.as_csv),
    "json": ("application/json", export.as_json),
}


@admin.register(Event)
class EventAdmin(admin.ModelAdmin):
    list_display = ["at", "action", "actor_cut", "target_type", "target_cut", "ip"]
    list_filter = ["action", ("actor", admin.RelatedOnlyFieldListFilter), ("at", admin.DateFieldListFilter)]
    date_hierarchy = "at"
    search_fields = ["actor_name", "target_label", "target_id"]
    list_select_related = ["actor"]
    fields = [
        "at",
        "action",
        "actor",
        "actor_name",
        "target_type",
        "target_id",
        "target_label",
        "ip",
        "detail",
        "admin_log_entry",
    ]
    readonly_fields = fields
    actions = None
    actor_cut = cut("actor_name", description=_("actor"), ordering="actor_name")
    target_cut = cut("target_label", description=_("target"), ordering="target_label")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        admin_log.read_in(since=cutoff())  # what "Delete selected" wrote without a signal (audit/admin_log.py)
        return super().changelist_view(request, extra_context)

    def get_urls(self):
        export_view = self.admin_site.admin_view(self.export_view)
        return [
            path("export.<str:fmt>", export_view, name="audit_event_export"),
            *super().get_urls(),
        ]

    @method_decorator(require_GET)
    def export_view(self, request, fmt: str):
        """The list's events as its filters and search choose them (the same query string), newest first."""
        if fmt not in FORMATS:
            raise Http404("No such export format: csv or json.")
        if not self.has_view_permission(request):
            raise PermissionDenied
        admin_log.read_in(since=cutoff())
        try:
            events = self.get_changelist_instance(request).get_queryset(request)
        except IncorrectLookupParameters:
            return HttpResponseBadRequest("These filters are not the list's: export from the list's own links.")
        with transaction.atomic():  # fails closed: no export without its row
            record(
                Action.AUDIT_EXPORTED,
                actor=request.user,
                ip=client_ip(request),
                detail={"format": fmt, "filters": request.GET.urlencode()},
            )
        content_type, rows = FORMATS[fmt]
        response = StreamingHttpResponse(rows(events), content_type=content_type)
        stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
        response["Content-Disposition"] = f'attachment; filename="audit-{stamp}.{fmt}"'
        add_never_cache_headers(response)
        return response
