"""The admin is where an administrator reviews drafts and changes site settings."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest

from datasets_app import services
from datasets_app.models import (
    Criterion,
    Dataset,
    Run,
    RunResult,
    SiteSettings,
    Task,
    TaskFile,
    Upload,
    Version,
)


class DatasetCriterionInline(admin.TabularInline):
    """The dataset's criteria for every task."""

    model = Criterion
    fk_name = "dataset"
    fields = ("criterion_id", "text", "weight", "verifier", "position", "archived")
    extra = 0
    verbose_name = "criterion for every task"
    verbose_name_plural = "criteria for every task"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Criterion]:
        return super().get_queryset(request).filter(task__isnull=True)


class TaskCriterionInline(admin.TabularInline):
    model = Criterion
    fk_name = "task"
    fields = ("criterion_id", "text", "weight", "verifier", "position")
    extra = 0


class TaskFileInline(admin.TabularInline):
    model = TaskFile
    # A link typed without a scheme means https (task links must be; Django 6's default).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    fields = ("role", "name", "file", "url", "size", "sha256")
    readonly_fields = ("size", "sha256")
    extra = 0


@admin.action(description="Save selected datasets as their next version")
def save_as_next_version(
    modeladmin: DatasetAdmin, request: HttpRequest, queryset: QuerySet
) -> None:
    for dataset in queryset:
        try:
            version = services.version_save(dataset=dataset, user=request.user)
        except services.NothingToSave as exc:
            modeladmin.message_user(request, f"{dataset}: {exc}", messages.WARNING)
        else:
            modeladmin.message_user(request, f"{dataset}: saved as {version.label}.")


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "updated_at")
    search_fields = ("name", "description")
    list_select_related = ("owner",)
    autocomplete_fields = ("owner",)
    filter_horizontal = ("shared_with",)
    inlines = [DatasetCriterionInline]
    actions = [save_as_next_version]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ("task_id", "name", "dataset", "state", "position", "updated_at")
    list_filter = ("state", "dataset")
    search_fields = ("task_id", "name", "prompt")
    list_select_related = ("dataset",)
    inlines = [TaskCriterionInline, TaskFileInline]
    readonly_fields = ("created_at", "updated_at")

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        # A task's criteria belong to the task's dataset too.
        for instance in formset.save(commit=False):
            if isinstance(instance, Criterion):
                instance.dataset = form.instance.dataset
            instance.save()
        for obj in formset.deleted_objects:
            obj.delete()
        formset.save_m2m()


class ReadOnlyAdmin(admin.ModelAdmin):
    """Versions and runs are records of what happened: look, never touch."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Version)
class VersionAdmin(ReadOnlyAdmin):
    list_display = ("dataset", "number", "created_by", "created_at")
    list_filter = ("dataset",)
    list_select_related = ("dataset", "created_by")


class RunResultInline(admin.TabularInline):
    model = RunResult
    fields = ("task", "score")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "version", "created_by", "created_at")
    list_select_related = ("version__dataset", "created_by")
    inlines = [RunResultInline]


@admin.register(Upload)
class UploadAdmin(ReadOnlyAdmin):
    list_display = ("original_name", "owner", "dataset", "state", "created_at", "expires_at")
    list_filter = ("state",)


@admin.register(SiteSettings)
class SiteSettingsAdmin(admin.ModelAdmin):
    list_display = ("__str__", "python_checks_enabled")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not SiteSettings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
