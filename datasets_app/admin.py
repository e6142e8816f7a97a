"""The admin is where an administrator reviews drafts and changes site settings."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db import models, transaction
from django.db.models import QuerySet
from django.http import HttpRequest

from datasets_app import services
from datasets_app.forms import KeepsShownText
from datasets_app.models import (
    ApiToken,
    Criterion,
    Dataset,
    Run,
    RunResult,
    SiteSettings,
    Task,
    TaskFile,
    TaskState,
    Upload,
    Version,
)


class AdminForm(KeepsShownText, forms.ModelForm):
    """The admin's forms keep text posted back as shown, like the app's (an unchanged save
    changes nothing)."""


SAVED_ONLY_BY_A_VERSION = (
    "A task becomes Saved only when its dataset is saved as a version (Save as vN). This "
    "task is in no version: leave it a draft."
)


class TaskAdminForm(AdminForm):
    def clean_state(self) -> str:
        state = self.cleaned_data["state"]
        task = self.instance
        in_a_version = task.pk is not None and task.versions.exists()
        if state == TaskState.SAVED and not in_a_version and task.state != TaskState.SAVED:
            raise forms.ValidationError(SAVED_ONLY_BY_A_VERSION)
        return state


class DatasetCriterionInline(admin.TabularInline):
    """The dataset's criteria for every task."""

    model = Criterion
    form = AdminForm
    fk_name = "dataset"
    fields = ("criterion_id", "text", "weight", "verifier", "position", "archived")
    extra = 0
    verbose_name = "criterion for every task"
    verbose_name_plural = "criteria for every task"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Criterion]:
        return super().get_queryset(request).filter(task__isnull=True)


class TaskCriterionInline(admin.TabularInline):
    model = Criterion
    form = AdminForm
    fk_name = "task"
    fields = ("criterion_id", "text", "weight", "verifier", "position")
    extra = 0


class TaskFileInline(admin.TabularInline):
    model = TaskFile
    form = AdminForm
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
    form = AdminForm
    list_display = ("name", "owner", "updated_at")
    search_fields = ("name", "description")
    list_select_related = ("owner",)
    autocomplete_fields = ("owner",)
    filter_horizontal = ("shared_with",)
    inlines = [DatasetCriterionInline]
    actions = [save_as_next_version]


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    """A task's page. Saved tasks are what versions and runs hold: changing one here goes
    the app's way (`services.task_keep_saved_copy`), so the versions keep it as saved and
    the task becomes a draft for the next Save as vN."""

    form = TaskAdminForm
    list_display = ("task_id", "name", "dataset", "state", "position", "updated_at")
    list_filter = ("state", "dataset")
    search_fields = ("task_id", "name", "prompt")
    list_select_related = ("dataset",)
    inlines = [TaskCriterionInline, TaskFileInline]
    readonly_fields = ("created_at", "updated_at")

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # The copy for the versions, the task and its criteria and files: all or nothing.
        with transaction.atomic():
            return super().changeform_view(request, object_id, form_url, extra_context)

    def save_model(self, request: HttpRequest, obj: Task, form, change: bool) -> None:
        # Archiving a saved task (its State alone) is removing it, as the app does: no copy.
        changes_it = set(form.changed_data) - {"state"} or obj.state == TaskState.DRAFT
        if change and changes_it and self._keep_saved_copy(obj) and obj.state == TaskState.SAVED:
            obj.state = TaskState.DRAFT
        super().save_model(request, obj, form, change)

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        if change and any(formset.has_changed() for formset in formsets):
            self._keep_saved_copy(form.instance)
        super().save_related(request, form, formsets, change)

    @staticmethod
    def _keep_saved_copy(task: Task) -> bool:
        """Before a saved task changes, its versions and runs get their own copy of it."""
        saved = Task.objects.filter(pk=task.pk, state=TaskState.SAVED).first()
        if saved is None:
            return False
        services.task_keep_saved_copy(task=saved)
        return True

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


@admin.action(description="Revoke selected API tokens", permissions=["change"])
def revoke_tokens(modeladmin: ApiTokenAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    for token in queryset:
        services.api_token_revoke(token=token)
    modeladmin.message_user(request, f"Revoked {queryset.count()} API token(s).")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Anyone's API tokens, to revoke: tokens are made by their owners (the token is shown to
    them once), so there is nothing to add or edit here."""

    list_display = (
        "name",
        "user",
        "prefix",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    )
    list_filter = ("revoked_at",)
    search_fields = ("name", "user__username", "prefix")
    list_select_related = ("user",)
    readonly_fields = list_display
    fields = list_display
    actions = [revoke_tokens]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
