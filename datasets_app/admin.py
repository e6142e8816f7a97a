"""The admin is where an administrator reviews drafts and changes site settings."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Avg, Count, Q, QuerySet
from django.http import HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from datasets_app import wording
from datasets_app.forms import KeepsShownText, VerifierField
from datasets_app.importing import document
from datasets_app.importing.spec import counted
from datasets_app.models import (
    REVIEWED,
    ApiToken,
    Criterion,
    Dataset,
    ExportJob,
    JudgeCall,
    Run,
    RunResult,
    SiteSettings,
    Task,
    TaskFile,
    TaskState,
    Upload,
    Version,
)
from datasets_app.services import datasets, deletion, sandbox, tokens


class AdminForm(KeepsShownText, forms.ModelForm):
    """The admin's forms keep text posted back as shown, like the app's (an unchanged save
    changes nothing), and show each verifier as its four parts (`VerifierField`)."""

    def clean(self):
        cleaned = super().clean()
        # A verifier posted back as shown keeps its stored value exactly.
        for name, field in self.fields.items():
            unchanged = name in cleaned and name not in self.changed_data
            if isinstance(field, VerifierField) and unchanged:
                cleaned[name] = self[name].initial
        return cleaned


class WeightInput(forms.NumberInput):
    """A weight as people write it: 20, not 20.0 (every other screen prints it so too)."""

    def format_value(self, value):
        if value in (None, ""):
            return None
        try:
            text = repr(float(value))  # the shortest text that reads back the same
        except (TypeError, ValueError):
            return super().format_value(value)
        return text.removesuffix(".0")


class CriterionAdminForm(AdminForm):
    class Meta:
        field_classes = {"verifier": VerifierField}
        widgets = {
            "text": forms.Textarea(attrs={"rows": 2}),
            "weight": WeightInput(attrs={"step": "any"}),
        }


SETTINGS_VERIFIERS = (
    ("expected_answer_verifier", "expectedAnswerVerifier"),
    ("default_verifier", "defaultVerifier"),
)


class DatasetAdminForm(AdminForm):
    """The dataset's settings as their two verifiers, each in its four parts; any other key
    the settings hold is kept as it is."""

    expected_answer_verifier = VerifierField(
        label=wording.EXPECTED_ANSWER_SETTING,
        help_text=wording.EXPECTED_ANSWER_SETTING_BLANK,
    )
    default_verifier = VerifierField(
        label=wording.DEFAULT_VERIFIER_SETTING,
        help_text=wording.DEFAULT_VERIFIER_SETTING_BLANK,
    )

    class Meta:
        fields = ("name", "description", "owner", "shared_with", "require_review")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        settings = self.instance.settings or {}
        for name, key in SETTINGS_VERIFIERS:
            self.fields[name].initial = settings.get(key)

    def save(self, commit: bool = True):
        settings = dict(self.instance.settings or {})
        for name, key in SETTINGS_VERIFIERS:
            verifier = self.cleaned_data.get(name)
            if verifier:
                settings[key] = verifier
            else:
                settings.pop(key, None)
        self.instance.settings = settings
        return super().save(commit)


SAVED_ONLY_BY_A_VERSION = (
    "A task becomes Saved only when its dataset is saved as a version (Save as vN). This "
    "task is in no version: leave it a draft."
)


class TaskAdminForm(AdminForm):
    class Meta:
        field_classes = {"expected_verifier": VerifierField}

    def clean_state(self) -> str:
        state = self.cleaned_data["state"]
        task = self.instance
        in_a_version = task.pk is not None and task.versions.exists()
        if state == TaskState.SAVED and not in_a_version and task.state != TaskState.SAVED:
            raise forms.ValidationError(SAVED_ONLY_BY_A_VERSION)
        return state


class DatasetCriterionInline(admin.StackedInline):
    """The dataset's criteria for every task (stacked: a criterion's text and verifier need
    the page's width, which a table row's cells do not have)."""

    model = Criterion
    form = CriterionAdminForm
    fk_name = "dataset"
    fields = ("criterion_id", "text", "weight", "verifier", "position", "archived")
    extra = 0
    verbose_name = "criterion for every task"
    verbose_name_plural = "criteria for every task"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Criterion]:
        # Archived ones are what earlier versions were graded by: kept, never edited.
        return super().get_queryset(request).filter(task__isnull=True, archived=False)


class TaskCriterionInline(admin.StackedInline):
    model = Criterion
    form = CriterionAdminForm
    fk_name = "task"
    fields = ("criterion_id", "text", "weight", "verifier", "position")
    extra = 0


class TaskFileForm(AdminForm):
    def clean_url(self) -> str:
        # The importer's rule for links, so that the admin cannot save one a file could not.
        url = self.cleaned_data.get("url") or ""
        problem = document.link_problem(url) if url else None
        if problem is not None:
            raise ValidationError(problem)
        return url


class TaskFileInline(admin.StackedInline):
    model = TaskFile
    form = TaskFileForm
    # A link typed without a scheme means https (task links must be; Django 6's default).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    fields = ("role", "name", "file", "url", "size", "sha256")
    readonly_fields = ("size", "sha256")
    extra = 0


@admin.action(description="Save selected datasets as their next version")
def save_as_next_version(
    modeladmin: admin.ModelAdmin[Any], request: HttpRequest, queryset: QuerySet[Dataset]
) -> None:
    for dataset in queryset:
        try:
            user = request.user if isinstance(request.user, User) else None
            version = datasets.version_save(dataset=dataset, user=user)
        except datasets.NothingToSave as exc:
            modeladmin.message_user(request, f"{dataset}: {exc}", messages.WARNING)
        else:
            modeladmin.message_user(request, f"{dataset}: saved as {version.label}.")


class DatasetFilter(admin.SimpleListFilter):
    """By dataset, each named with its owner and id: two people's "Finance QA" differ."""

    title = "dataset"
    parameter_name = "dataset"
    lookup = "dataset"

    def lookups(self, request, model_admin):
        every = Dataset.objects.select_related("owner").order_by("name", "pk")
        return [(str(d.pk), f"{d.name} ({d.owner.get_username()}, #{d.pk})") for d in every]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(**{f"{self.lookup}__pk": self.value()})
        return queryset


class RunDatasetFilter(DatasetFilter):
    lookup = "version__dataset"


class ReviewedFilter(admin.SimpleListFilter):
    """Drafts an administrator has looked at since they last changed, or not."""

    title = "reviewed"
    parameter_name = "reviewed"

    def lookups(self, request, model_admin):
        return [("yes", "Reviewed"), ("no", "Not reviewed")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(REVIEWED)
        if self.value() == "no":
            return queryset.exclude(REVIEWED)
        return queryset


class AdminStyles:
    # Monospace code boxes, verifier parts laid out, inlines that fit (our CSP allows no
    # inline style, so this is a stylesheet of our own).
    css = {"all": ["css/admin.css"]}


# A dataset's page lists this many of its tasks; the task list has them all, a page at a
# time (a dataset of 100,000 tasks must not make a page of 100,000 rows).
TASK_LIST_ROWS = 100

# A fixed row: nothing in it comes from data (format_html needs arguments to format).
_NO_TASKS_ROW = mark_safe('<tr><td colspan="5">No tasks yet.</td></tr>')


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    form = DatasetAdminForm
    list_display = ("name", "owner", "id", "task_count", "updated_at")
    search_fields = ("name", "description", "owner__username")
    list_select_related = ("owner",)
    autocomplete_fields = ("owner",)
    filter_horizontal = ("shared_with",)
    readonly_fields = ("task_list",)
    fieldsets = (
        (None, {"fields": ("name", "description", "owner", "shared_with", "require_review")}),
        (
            "How tasks are graded when they don’t say",
            {"fields": [name for name, _ in SETTINGS_VERIFIERS]},
        ),
        ("Tasks", {"fields": ("task_list",)}),
    )
    inlines = [DatasetCriterionInline]
    actions = [save_as_next_version]
    Media = AdminStyles

    def get_queryset(self, request: HttpRequest) -> QuerySet[Dataset]:
        live = Count("tasks", filter=~Q(tasks__state=TaskState.ARCHIVED))
        return super().get_queryset(request).annotate(live_tasks=live)

    # Deleting goes through the one service, as on the dataset's Settings page: its results,
    # runs and versions first (they PROTECT what they hold), its stored files once the
    # transaction commits. Django's own collector would stop at those PROTECTs.
    def get_deleted_objects(self, objs, request: HttpRequest):
        described = [
            f"{dataset}: {deletion.dataset_contents(dataset).described}" for dataset in objs
        ]
        return described, {"datasets": len(described)}, set(), []

    def delete_model(self, request: HttpRequest, obj: Dataset) -> None:
        assert isinstance(request.user, User)
        deletion.dataset_delete(dataset=obj, user=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Dataset]) -> None:
        assert isinstance(request.user, User)
        with transaction.atomic():
            for dataset in queryset:
                deletion.dataset_delete(dataset=dataset, user=request.user)

    @admin.display(description="tasks", ordering="live_tasks")
    def task_count(self, dataset: Dataset) -> int:
        return dataset.live_tasks  # type: ignore[attr-defined]

    @admin.display(description="Its tasks")
    def task_list(self, dataset: Dataset) -> SafeString | str:
        """The dataset's tasks (archived ones left out) with their state, each a link."""
        if dataset.pk is None:
            return "—"
        live = dataset.tasks.live()
        tasks = live.order_by("position", "pk")[:TASK_LIST_ROWS]
        rows = format_html_join(
            "",
            '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td>'
            '<td><a href="{}">On its page</a></td></tr>',
            (
                (
                    reverse("admin:datasets_app_task_change", args=[task.pk]),
                    task.task_id,
                    task.name or "—",
                    task.get_state_display(),
                    "yes" if task.is_reviewed else "—",
                    task.get_absolute_url(),
                )
                for task in tasks
            ),
        )
        drafts = reverse("admin:datasets_app_task_changelist")
        count = live.count()
        more = (
            format_html(
                '<p>The first {} of its {} tasks: <a href="{}?dataset={}">see them all</a>.</p>',
                f"{TASK_LIST_ROWS:,}",
                f"{count:,}",
                drafts,
                dataset.pk,
            )
            if count > TASK_LIST_ROWS
            else ""
        )
        return format_html(
            '<table class="dataset-tasks"><thead><tr><th scope="col">Id</th>'
            '<th scope="col">Name</th><th scope="col">State</th><th scope="col">Reviewed</th>'
            '<th scope="col">In the app</th></tr></thead><tbody>{}</tbody></table>{}'
            '<p><a href="{}?dataset={}&amp;state__exact=draft">Review its drafts</a></p>',
            rows or _NO_TASKS_ROW,
            more,
            drafts,
            dataset.pk,
        )


# The list shows this much of each prompt: enough to tell tasks apart at a glance.
PROMPT_START_CHARS = 80
TASK_ARCHIVED_BEFORE_SAVED = (
    "This task was archived (by a Replace or a removal) before your changes arrived, so "
    "nothing was changed: the versions and runs that hold it keep it as it was. Add a new "
    "task if you still need the changes."
)


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    """A task's page. Saved tasks are what versions and runs hold: changing one here goes
    the app's way (`services.datasets.task_keep_saved_copy`), so the versions keep it as
    saved and the task becomes a draft for the next Save as vN."""

    form = TaskAdminForm
    list_display = ("task_id", "name", "prompt_start", "dataset", "state", "reviewed", "updated_at")
    list_filter = ("state", ReviewedFilter, DatasetFilter)
    search_fields = ("task_id", "name", "prompt")
    # At 100,000 rows: the dataset shown by name in the same query, no count of every task
    # beside the filtered one, and a dataset picked by id rather than from a list of all.
    # (The trigram indexes of migration 0007 serve the search on PostgreSQL.)
    list_select_related = ("dataset",)
    show_full_result_count = False
    raw_id_fields = ("dataset",)
    inlines = [TaskCriterionInline, TaskFileInline]
    readonly_fields = ("reviewed", "created_at", "updated_at")
    actions = ["mark_reviewed", "delete_drafts", "save_datasets_as_next_version"]
    Media = AdminStyles

    @admin.display(description="reviewed", boolean=True)
    def reviewed(self, task: Task) -> bool:
        return task.is_reviewed

    @admin.display(description="prompt")
    def prompt_start(self, task: Task) -> str:
        return Truncator(task.prompt).chars(PROMPT_START_CHARS)

    @admin.action(description="Mark selected drafts reviewed", permissions=["change"])
    def mark_reviewed(self, request: HttpRequest, queryset: QuerySet[Task]) -> None:
        assert isinstance(request.user, User)  # the admin is for logged-in staff only
        marked = datasets.tasks_mark_reviewed(tasks=queryset, user=request.user)
        others = queryset.count() - marked
        self.message_user(request, f"Marked {counted(marked, 'draft')} reviewed.")
        if others:
            message = f"Left as they were: {counted(others, 'task')} not a draft."
            self.message_user(request, message, messages.WARNING)

    @admin.action(description="Delete selected drafts", permissions=["delete"])
    def delete_drafts(self, request: HttpRequest, queryset: QuerySet[Task]) -> None:
        """Drafts only, the app's way: a draft no version or run holds is deleted for good,
        a few statements a dataset however many are selected ("all N that match" included);
        any other task selected is left alone (remove it on its page, which archives it)."""
        touched = queryset.filter(state=TaskState.DRAFT).values("dataset_id")
        deleted = 0
        with transaction.atomic():
            for dataset in Dataset.objects.filter(pk__in=touched):
                deleted += datasets.tasks_delete_drafts(dataset=dataset, tasks=queryset)
        self.message_user(request, f"Deleted {counted(deleted, 'draft')}.")
        # What is still selected is what was left.
        others = queryset.count()
        if others:
            message = f"Left as they were: {counted(others, 'task')} not a draft."
            self.message_user(request, message, messages.WARNING)

    @admin.action(description="Save their datasets as the next version", permissions=["change"])
    def save_datasets_as_next_version(self, request: HttpRequest, queryset: QuerySet[Task]):
        chosen = Dataset.objects.filter(pk__in=queryset.values("dataset")).order_by("name")
        save_as_next_version(self, request, chosen)

    def has_change_permission(self, request: HttpRequest, obj: Task | None = None) -> bool:
        # An archived task is what versions and runs hold, and no longer in its dataset:
        # shown, never changed (the database refuses it too).
        if obj is not None and obj.state == TaskState.ARCHIVED:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Task | None = None) -> bool:
        # A task a version holds is never deleted: the delete page and "Delete selected"
        # say so (Django lists it as not permitted); "Delete selected drafts" removes it
        # the app's way.
        if obj is not None and obj.versions.exists():
            return False
        return super().has_delete_permission(request, obj)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # An edit sent for a task archived since its page was opened (a Replace ran): the
        # page again, view-only, saying why nothing changed, rather than a bare 403.
        archived = Task.objects.filter(pk=object_id, state=TaskState.ARCHIVED)
        if request.method == "POST" and object_id and archived.exists():
            self.message_user(request, TASK_ARCHIVED_BEFORE_SAVED, messages.ERROR)
            return HttpResponseRedirect(request.path)
        # The copy for the versions, the task and its criteria and files: all or nothing.
        try:
            with transaction.atomic():
                return super().changeform_view(request, object_id, form_url, extra_context)
        except datasets.TaskNotEditable as refused:
            self.message_user(request, str(refused), messages.ERROR)
            return HttpResponseRedirect(request.path)

    def save_model(self, request: HttpRequest, obj: Task, form, change: bool) -> None:
        if change:
            # Decided on the row as it is now, under the dataset's lock (as the task form
            # does): a Replace may have archived it since this page was opened.
            Dataset.objects.select_for_update().get(pk=obj.dataset_id)
            now = Task.objects.select_for_update().get(pk=obj.pk)
            if now.state == TaskState.ARCHIVED:
                raise datasets.TaskNotEditable(TASK_ARCHIVED_BEFORE_SAVED)
        # Archiving a saved task (its State alone) is removing it, as the app does: no copy.
        changes_it = set(form.changed_data) - {"state"} or obj.state == TaskState.DRAFT
        if change and changes_it and self._keep_saved_copy(obj) and obj.state == TaskState.SAVED:
            obj.state = TaskState.DRAFT
        super().save_model(request, obj, form, change)
        datasets.dataset_tasks_changed(dataset_id=obj.dataset_id)

    def delete_model(self, request: HttpRequest, obj: Task) -> None:
        super().delete_model(request, obj)
        datasets.dataset_tasks_changed(dataset_id=obj.dataset_id)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Task]) -> None:
        touched = set(queryset.values_list("dataset_id", flat=True))
        with transaction.atomic():
            super().delete_queryset(request, queryset)
            for dataset_id in sorted(touched):
                datasets.dataset_tasks_changed(dataset_id=dataset_id)

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
        datasets.task_keep_saved_copy(task=saved)
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


@admin.register(Criterion)
class CriterionAdmin(ReadOnlyAdmin):
    """Every criterion, to find one (by id or text) and open its task: a criterion is changed
    on its task's page or the dataset's, which keep what versions saved."""

    list_display = ("criterion_id", "short_text", "task_link", "dataset", "weight", "archived")
    list_filter = ("archived", DatasetFilter)
    search_fields = ("criterion_id", "text")
    list_select_related = ("task", "dataset")
    show_full_result_count = False
    raw_id_fields = ("task", "dataset")
    # Newest first, read backwards along the primary key: a criterion's position only
    # orders it within its task, and sorting 100,000 of them by it costs a sort of all.
    ordering = ("-pk",)
    Media = AdminStyles

    @admin.display(description="criterion")
    def short_text(self, criterion: Criterion) -> str:
        return str(criterion)

    @admin.display(description="task")
    def task_link(self, criterion: Criterion) -> SafeString | str:
        if criterion.task_id is None:
            return "every task"
        url = reverse("admin:datasets_app_task_change", args=[criterion.task_id])
        assert criterion.task is not None  # selected with the row
        return format_html('<a href="{}">{}</a>', url, criterion.task.task_id)


class VersionRunInline(admin.TabularInline):
    """The runs that graded this version, with how many results and their mean score."""

    model = Run
    fields = ("run_link", "state", "created_at", "result_count", "mean_score")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False
    verbose_name_plural = "runs of this version"

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Run]:
        return (
            super()
            .get_queryset(request)
            .select_related("created_by")
            .annotate(results_n=Count("results"), results_mean=Avg("results__score"))
        )

    @admin.display(description="run")
    def run_link(self, run: Run) -> SafeString:
        return format_html(
            '<a href="{}">{}</a>', reverse("admin:datasets_app_run_change", args=[run.pk]), run
        )

    @admin.display(description="results")
    def result_count(self, run: Run) -> int:
        return run.results_n  # type: ignore[attr-defined]

    @admin.display(description="mean score")
    def mean_score(self, run: Run) -> str:
        mean = run.results_mean  # type: ignore[attr-defined]
        return "—" if mean is None else f"{mean:.2f}"


@admin.register(Version)
class VersionAdmin(ReadOnlyAdmin):
    list_display = ("dataset", "number", "created_by", "created_at", "run_count")
    Media = AdminStyles
    list_filter = (DatasetFilter,)
    list_select_related = ("dataset__owner", "created_by")
    # Its tasks are listed on its page in the app (View on site); here, how many.
    fields = ("dataset", "number", "created_by", "created_at", "task_count")
    readonly_fields = fields
    inlines = [VersionRunInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Version]:
        return super().get_queryset(request).annotate(runs_n=Count("runs", distinct=True))

    @admin.display(description="runs", ordering="runs_n")
    def run_count(self, version: Version) -> int:
        return version.runs_n  # type: ignore[attr-defined]


class RunResultInline(admin.TabularInline):
    """A run's results: each task it graded (by id, linked) and its score."""

    model = RunResult
    fields = ("task_link", "task_name", "score")
    readonly_fields = fields
    extra = 0
    can_delete = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[RunResult]:
        return super().get_queryset(request).select_related("task")

    @admin.display(description="task")
    def task_link(self, result: RunResult) -> SafeString:
        url = reverse("admin:datasets_app_task_change", args=[result.task_id])
        return format_html('<a href="{}">{}</a>', url, result.task.task_id)

    @admin.display(description="name")
    def task_name(self, result: RunResult) -> str:
        return result.task.name or "—"

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    list_display = ("__str__", "version", "state", "created_by", "created_at")
    Media = AdminStyles
    list_filter = ("state", RunDatasetFilter)
    list_select_related = ("version__dataset", "created_by")
    inlines = [RunResultInline]


@admin.register(JudgeCall)
class JudgeCallAdmin(ReadOnlyAdmin):
    """Every request the judges sent (a try's, a run's) with its reply: what they cost."""

    list_display = (
        "created_at",
        "model",
        "dataset",
        "created_by",
        "latency_ms",
        "prompt_tokens",
        "completion_tokens",
        "cached",
    )
    list_filter = ("cached", "model")
    list_select_related = ("dataset", "created_by")
    Media = AdminStyles


@admin.register(Upload)
class UploadAdmin(ReadOnlyAdmin):
    list_display = ("original_name", "owner", "dataset", "state", "created_at", "expires_at")
    Media = AdminStyles
    list_filter = ("state",)


@admin.register(ExportJob)
class ExportJobAdmin(ReadOnlyAdmin):
    list_display = ("dataset", "version", "format", "state", "requested_by", "created_at")
    list_select_related = ("dataset", "version", "requested_by")
    raw_id_fields = ("dataset", "version")
    Media = AdminStyles
    list_filter = ("state", "format")


class SiteSettingsForm(forms.ModelForm):
    """The "Python checks" switch turns on only while the last sandbox self-test passed."""

    class Meta:
        model = SiteSettings
        fields = ("python_checks_enabled",)

    def clean_python_checks_enabled(self) -> bool:
        enabled = bool(self.cleaned_data["python_checks_enabled"])
        refusal = sandbox.python_checks_refusal(settings=self.instance)
        if enabled and refusal:
            raise forms.ValidationError(refusal)
        return enabled


@admin.register(SiteSettings)
class SiteSettingsAdmin(admin.ModelAdmin):
    form = SiteSettingsForm
    list_display = ("__str__", "python_checks_enabled", "sandbox_self_test_passed")
    fields = (
        "python_checks_enabled",
        "python_checks_can_be_on",
        "sandbox_self_test_at",
        "self_test_report",
    )
    readonly_fields = ("python_checks_can_be_on", "sandbox_self_test_at", "self_test_report")

    @admin.display(description="Can Python checks be on?")
    def python_checks_can_be_on(self, obj: SiteSettings) -> str:
        refusal = sandbox.python_checks_refusal(settings=obj)
        return f"No. {refusal}" if refusal else "Yes: the last sandbox self-test passed."

    @admin.display(description="Last sandbox self-test report")
    def self_test_report(self, obj: SiteSettings) -> SafeString:
        return format_html("<pre>{}</pre>", obj.sandbox_self_test_report or "None yet.")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not SiteSettings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.action(description="Revoke selected API tokens", permissions=["change"])
def revoke_tokens(modeladmin: ApiTokenAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    for token in queryset:
        tokens.api_token_revoke(token=token)
    modeladmin.message_user(request, f"Revoked {counted(queryset.count(), 'API token')}.")


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
