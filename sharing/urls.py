from django.urls import path

from . import views

app_name = "sharing"
urlpatterns = [
    path("t/<uuid:thread_id>/share/", views.create, name="create"),
    path("t/<uuid:thread_id>/share/options/", views.share_options, name="options"),
    path("t/<uuid:thread_id>/export.md", views.export_markdown, name="export_md"),
    path("t/<uuid:thread_id>/export.json", views.export_json, name="export_json"),
    path("shares/", views.link_list, name="list"),
    path("shares/<uuid:link_id>/revoke/", views.revoke, name="revoke"),
    path("shares/<uuid:link_id>/update/", views.update, name="update"),
    path("s/<str:token>/", views.shared, name="shared"),
    path("s/<str:token>/a/<uuid:attachment_id>/", views.shared_attachment, name="shared_attachment"),
]
