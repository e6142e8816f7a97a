from django.urls import path

from datasets_app import views

app_name = "datasets_app"
urlpatterns = [
    path("", views.dataset_list, name="dataset_list"),
    path("datasets/new/", views.dataset_create, name="dataset_create"),
    path("datasets/new/check/", views.dataset_create_check, name="dataset_create_check"),
    path("datasets/new/<uuid:key>/", views.dataset_create_status, name="dataset_create_status"),
    path("datasets/new/<uuid:key>/map/", views.dataset_create_map, name="dataset_create_map"),
    path("datasets/new/<uuid:key>/read/", views.dataset_create_read, name="dataset_create_read"),
    path("datasets/<int:pk>/", views.dataset_detail, name="dataset_detail"),
    path("datasets/<int:pk>/metadata/", views.dataset_metadata_keys, name="dataset_metadata_keys"),
    path("datasets/<int:pk>/settings/", views.dataset_settings, name="dataset_settings"),
    path("datasets/<int:pk>/delete/", views.dataset_delete, name="dataset_delete"),
    path("datasets/<int:pk>/settings/try/", views.dataset_try, name="dataset_try"),
    path("datasets/<int:pk>/tries/<slug:key>/", views.try_status, name="try_status"),
    path("datasets/<int:pk>/save/", views.version_save, name="version_save"),
    path("datasets/<int:pk>/review/", views.dataset_review, name="dataset_review"),
    path(
        "datasets/<int:pk>/review/<int:task_pk>/reviewed/",
        views.task_review,
        name="task_review",
    ),
    path("datasets/<int:pk>/sharing/", views.dataset_sharing, name="dataset_sharing"),
    path("datasets/<int:pk>/export/", views.dataset_export, name="dataset_export_page"),
    path("datasets/<int:pk>/export/<slug:fmt>/", views.dataset_export, name="dataset_export"),
    path("exports/<uuid:key>/", views.export_job, name="export_job"),
    path("exports/<uuid:key>/download/", views.export_job_download, name="export_job_download"),
    # Add tasks > Import from a file
    path("datasets/<int:pk>/import/", views.import_dialog, name="import_dialog"),
    path("datasets/<int:pk>/import/check/", views.import_check, name="import_check"),
    path("datasets/<int:pk>/import/<uuid:key>/", views.import_status, name="import_status"),
    path("datasets/<int:pk>/import/<uuid:key>/import/", views.import_commit, name="import_commit"),
    path("datasets/<int:pk>/import/<uuid:key>/map/", views.import_map, name="import_map"),
    path("datasets/<int:pk>/import/<uuid:key>/read/", views.import_read, name="import_read"),
    path("uploads/<uuid:key>/problems.csv", views.upload_problems, name="upload_problems"),
    path("templates/<slug:slug>/", views.starter_download, name="starter_download"),
    path("help/dataset-files/", views.help_files, name="help_files"),
    # Tasks
    path("datasets/<int:pk>/tasks/new/", views.task_create, name="task_create"),
    path("datasets/<int:pk>/tasks/bulk/", views.tasks_bulk, name="tasks_bulk"),
    path("datasets/<int:pk>/tasks/<int:task_pk>/", views.task_detail, name="task_detail"),
    path("datasets/<int:pk>/tasks/<int:task_pk>/edit/", views.task_edit, name="task_edit"),
    path("datasets/<int:pk>/tasks/<int:task_pk>/try/", views.task_try, name="task_try"),
    path(
        "datasets/<int:pk>/tasks/<int:task_pk>/edit/try/",
        views.task_try_edits,
        name="task_try_edits",
    ),
    path("datasets/<int:pk>/tasks/<int:task_pk>/delete/", views.task_delete, name="task_delete"),
    path(
        "datasets/<int:pk>/tasks/<int:task_pk>/files/<int:file_pk>/",
        views.task_file_download,
        name="task_file_download",
    ),
    # The person's API tokens
    path("account/api-tokens/", views.api_tokens, name="api_tokens"),
    path("account/api-tokens/<int:pk>/revoke/", views.api_token_revoke, name="api_token_revoke"),
    path("people/", views.people, name="people"),
    # Runs
    path("datasets/<int:pk>/runs/new/", views.run_new, name="run_new"),
    path("datasets/<int:pk>/runs/<int:run_pk>/", views.run_detail, name="run_detail"),
    path("datasets/<int:pk>/runs/<int:run_pk>/columns/", views.run_columns, name="run_columns"),
    path("datasets/<int:pk>/runs/<int:run_pk>/start/", views.run_start, name="run_start"),
    path("datasets/<int:pk>/runs/<int:run_pk>/stop/", views.run_stop, name="run_stop"),
    path(
        "datasets/<int:pk>/runs/<int:run_pk>/tasks/<int:result_pk>/",
        views.run_task,
        name="run_task",
    ),
    path(
        "datasets/<int:pk>/runs/<int:run_pk>/results.<slug:fmt>",
        views.run_download,
        name="run_download",
    ),
    path(
        "datasets/<int:pk>/runs/<int:run_pk>/compare/<int:other_pk>/",
        views.run_compare,
        name="run_compare",
    ),
    # Versions
    path("datasets/<int:pk>/v<int:number>/", views.version_detail, name="version_detail"),
    path(
        "datasets/<int:pk>/v<int:number>/metadata/",
        views.version_metadata_keys,
        name="version_metadata_keys",
    ),
    path(
        # By the task's id: a version's row of it is replaced by a copy when the task is
        # edited (copy-on-write), its id in the version never changes.
        "datasets/<int:pk>/v<int:number>/tasks/<path:task_id>/",
        views.version_task,
        name="version_task",
    ),
    path(
        "datasets/<int:pk>/v<int:number>/export/<slug:fmt>/",
        views.version_export,
        name="version_export",
    ),
]
