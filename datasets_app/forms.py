"""Forms: they validate what a person typed; services do the writing."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django import forms
from django.forms.utils import ErrorDict
from django.utils.functional import cached_property

from datasets_app import wording
from datasets_app.importing import checker
from datasets_app.importing.aliases import FIELDS, FIELDS_BY_KEY
from datasets_app.importing.document import validate_document
from datasets_app.importing.encodings import CHOICES as ENCODINGS
from datasets_app.importing.spec import (
    MAX_ATTACHED_FILE_BYTES,
    MAX_FILES_PER_KIND,
    MAX_HEADER_ROW,
    MAX_TEXT_CHARS,
    READ_OPTIONS,
    FieldMap,
    Problem,
    TaskSpec,
    Verifier,
    nowhere,
    shorten,
)
from datasets_app.models import OUTPUT_TYPES, VERIFIER_KINDS, Dataset, ImportMode, TaskFile
from datasets_app.selectors import RunTaskListing, TaskListing

if TYPE_CHECKING:
    _FormBase = forms.BaseForm
else:
    _FormBase = object


def _as_shown(text: str) -> str:
    # A browser posts every line break of a textarea as CRLF, and text fields strip the
    # ends of what they read: the same text, as far as the person can tell.
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


class KeepsShownText(_FormBase):
    """Text posted back as it was shown keeps its stored value, byte for byte.

    An unchanged save must change nothing, but a browser sends each line break as CRLF and
    CharField strips the ends: without this, saving a prompt untouched would rewrite its
    line breaks and drop its trailing newline. A text field whose posted value is the one
    shown (line breaks and ends aside) keeps its initial value and does not count as changed.
    """

    def _shown_unchanged(self, name: str) -> bool:
        field = self.fields[name]
        if not isinstance(field, forms.CharField):
            return False
        bound = self[name]
        initial, data = bound.initial, bound.data
        return (
            isinstance(initial, str)
            and isinstance(data, str)
            and (_as_shown(data) == _as_shown(initial))
        )

    @cached_property
    def changed_data(self) -> list[str]:
        changed = super().changed_data
        return [name for name in changed if not self._shown_unchanged(name)]

    def clean(self):
        cleaned = super().clean()
        for name in list(cleaned):
            if name in self.fields and self._shown_unchanged(name):
                cleaned[name] = self[name].initial
        return cleaned


class DatasetForm(KeepsShownText, forms.ModelForm):
    class Meta:
        model = Dataset
        fields = ["name", "description"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}


# What the file pickers offer: exactly the extensions the checker reads, no more.
FILE_ACCEPT = ",".join(checker.FORMATS)


class ImportFileForm(forms.Form):
    """Step 2 of the dialog: the file, checked as soon as it is chosen."""

    file = forms.FileField(
        label="Dataset file",
        help_text=".csv, .json, .jsonl, .xlsx or a .zip with the files its tasks attach",
        widget=forms.ClearableFileInput(attrs={"accept": FILE_ACCEPT}),
    )

    def __init__(self, *args, max_bytes: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > self.max_bytes:
            raise forms.ValidationError(file_too_large_message(self.max_bytes))
        return upload


def file_too_large_message(max_bytes: int) -> str:
    return f"This file is larger than {max_bytes // (1024 * 1024)} MiB, the most one import takes."


class ImportModeForm(forms.Form):
    """Step 3: what the file does to the dataset."""

    mode = forms.ChoiceField(
        choices=ImportMode.choices, initial=ImportMode.ADD, widget=forms.RadioSelect
    )


NOT_IN_FILE = "— not in this file —"
MAPPING_NEEDS_PROMPT = "Choose the column that holds the prompt."
MAPPING_NEEDS_GRADING = "Choose the column that holds the expected answer, or the criterion."
MAPPING_SAME_SOURCE = "{source} is chosen for both {first} and {second}; choose it once."
MAPPING_NOT_A_COLUMN = "Select a valid choice: one of the file’s columns, or “not in this file”."
MAPPING_FIELD_TWICE = "The {label} was given twice, as {first} and as {second}; choose one."


FIND_ENCODING = "Find it from the text"


class ReadOptionsForm(forms.Form):
    """Read options: how to read a text table the checker could not read right alone."""

    encoding = forms.ChoiceField(
        label="Encoding",
        choices=[("", FIND_ENCODING), *ENCODINGS.items()],
        required=False,
        help_text="The text encoding the file was saved in. UTF-8 unless it is an old file.",
    )
    header_row = forms.IntegerField(
        label="Header row",
        required=False,
        min_value=1,
        max_value=MAX_HEADER_ROW,
        help_text="The row that holds the column names, as a spreadsheet numbers it. Empty "
        "to take the first (below any title lines).",
    )
    number_tasks = forms.BooleanField(
        label="Number the tasks task-1, task-2… instead of using the file's ids",
        required=False,
        help_text="For a file whose ids repeat (different questions under one id). In a CSV, "
        "rows of one id are still one task.",
    )

    def __init__(self, *args, table: str | None = "csv", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # `table`: the checked file's format. An encoding is a text table's (JSON is UTF-8,
        # a workbook says its own); a header row, a sheet's (a CSV's or a workbook's).
        if table != "csv":
            del self.fields["encoding"]
        if table not in ("csv", "xlsx"):
            del self.fields["header_row"]

    def read_options(self) -> dict[str, Any]:
        return {key: self.cleaned_data[key] for key in READ_OPTIONS if self.cleaned_data.get(key)}


class MappingForm(forms.Form):
    """The mapping step: which of the file's columns (or keys) fills each field.

    One select per field, offering the file's own columns (nested JSON keys as dotted
    paths, `inputs.question`); a field left at "not in this file" is not read.
    """

    def __init__(self, *args, sources: Sequence[str], graded: bool = False, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # A file that grades its tasks itself (promptfoo assertions) needs no answer column.
        self.graded = graded
        choices = [("", NOT_IN_FILE), *((source, source) for source in sources)]
        for field in FIELDS:
            self.fields[f"map_{field.key}"] = forms.ChoiceField(
                label=field.label,
                choices=choices,
                required=False,
                # Django's own message echoes what was sent, however long.
                error_messages={"invalid_choice": MAPPING_NOT_A_COLUMN},
            )

    @classmethod
    def for_mapping(cls, mapping: FieldMap | None, *args, **kwargs) -> MappingForm:
        """The form for a checked file's mapping, pre-filled with what it applied or guessed."""
        if mapping is None:
            return cls(*args, sources=[], graded=False, initial={}, **kwargs)
        initial = {f"map_{key}": source for key, source in mapping.fields.items()}
        sources = list(mapping.sources)
        return cls(*args, sources=sources, graded=mapping.graded, initial=initial, **kwargs)

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        chosen = self.mapping()
        if "prompt" not in chosen:
            self.add_error("map_prompt", MAPPING_NEEDS_PROMPT)
        if "expected" not in chosen and "criterion" not in chosen and not self.graded:
            self.add_error("map_expected", MAPPING_NEEDS_GRADING)
        seen: dict[str, str] = {}
        for key, source in chosen.items():
            if source in seen:
                first, second = FIELDS_BY_KEY[seen[source]].label, FIELDS_BY_KEY[key].label
                self.add_error(
                    f"map_{key}",
                    MAPPING_SAME_SOURCE.format(source=shorten(source), first=first, second=second),
                )
            seen.setdefault(source, key)
        self._check_given_once()
        return cleaned or {}

    def _check_given_once(self) -> None:
        # A select sends one value; a request that sends two for one field (which Django
        # would quietly take the last of) is told so, naming both.
        if not hasattr(self.data, "getlist"):
            return
        for field in FIELDS:
            given = [v for v in dict.fromkeys(self.data.getlist(f"map_{field.key}")) if v]
            if len(given) > 1:
                first, second = shorten(given[0]), shorten(given[1])
                message = MAPPING_FIELD_TWICE.format(label=field.label, first=first, second=second)
                self.add_error(f"map_{field.key}", message)

    def mapping(self) -> dict[str, str]:
        """{field: source} for the fields given a column."""
        data = self.cleaned_data if hasattr(self, "cleaned_data") else {}
        return {f.key: data[f"map_{f.key}"] for f in FIELDS if data.get(f"map_{f.key}")}


class NewDatasetForm(DatasetForm):
    """New dataset, optionally with a file to import; a .json file's name and description
    are used unless the person typed their own."""

    file = forms.FileField(
        label="Import from a file (optional)",
        required=False,
        help_text=".csv, .json, .jsonl, .xlsx or .zip; its tasks arrive as drafts.",
    )

    class Meta(DatasetForm.Meta):
        pass

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["name"].required = False
        self.fields["name"].help_text = "Leave empty to take the name from the file."

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("name") and not cleaned.get("file"):
            self.add_error("name", "Give the dataset a name, or choose a file to import.")
        return cleaned


VERIFIER_CHOICES = [("", wording.KIND_DEFAULT_FOR_DATASET), *VERIFIER_KINDS]
OUTPUT_TYPE_CHOICES = [("", "—"), *OUTPUT_TYPES]


def verifier_json(kind: str, output_type: str, instructions: str, code: str) -> dict | None:
    """The verifier as the dataset file writes it, from a form's four fields."""
    if not kind:
        return None
    return Verifier(
        kind=kind,
        output_type=output_type or None,
        instructions=instructions or None,
        code=code or None,
    ).to_json()


def verifier_parts(value: dict | None) -> list[str]:
    """[kind, output type, instructions, code] of a verifier ({} or None: all blank)."""
    value = value if isinstance(value, dict) else {}
    return [
        value.get("kind", ""),
        value.get("outputType", ""),
        value.get("instructions", ""),
        value.get("code", ""),
    ]


class VerifierWidget(forms.MultiWidget):
    """A verifier as four labelled controls: kind, output type, instructions, and code in a
    monospace box with real line breaks (the admin's; the app's forms have their own)."""

    template_name = "datasets_app/widgets/verifier.html"
    labels = ("Kind", "Output type", "Instructions", "Python code")

    def __init__(self, attrs: dict | None = None) -> None:
        super().__init__(
            [
                forms.Select(choices=VERIFIER_CHOICES),
                forms.Select(choices=OUTPUT_TYPE_CHOICES),
                forms.Textarea(attrs={"rows": 3, "class": "verifier-instructions"}),
                forms.Textarea(attrs={"rows": 8, "class": "verifier-code", "spellcheck": "false"}),
            ],
            attrs,
        )

    def decompress(self, value: dict | None) -> list[str]:
        return verifier_parts(value)

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        for subwidget, label in zip(context["widget"]["subwidgets"], self.labels, strict=True):
            subwidget["label"] = label
        return context


class VerifierField(forms.MultiValueField):
    """A verifier ({"kind", "outputType", "instructions", "code"}) from four fields, so the
    JSON is valid by construction; no kind means none (the dataset's default grades)."""

    widget = VerifierWidget

    def __init__(self, **kwargs) -> None:
        kwargs.pop("encoder", None)
        kwargs.pop("decoder", None)
        fields = (
            forms.ChoiceField(choices=VERIFIER_CHOICES, required=False),
            forms.ChoiceField(choices=OUTPUT_TYPE_CHOICES, required=False),
            forms.CharField(required=False, strip=False),
            forms.CharField(required=False, strip=False),
        )
        super().__init__(fields, require_all_fields=False, **{"required": False, **kwargs})

    def compress(self, data_list: list[str]) -> dict | None:
        if not data_list:
            return None
        # A browser posts a textarea's line breaks as CRLF; the file's are LF.
        kind, output_type, instructions, code = (
            (value or "").replace("\r\n", "\n") for value in data_list
        )
        if not kind and (instructions or code):
            raise forms.ValidationError("Choose a kind for these instructions or this code.")
        return verifier_json(kind, output_type, instructions, code)

    def has_changed(self, initial, data) -> bool:
        # Text posted back as it was shown (a browser's CRLF line breaks, ends) is no change.
        widget = self.widget
        assert isinstance(widget, VerifierWidget)
        before = widget.decompress(initial if isinstance(initial, dict) else None)
        after = data if isinstance(data, list) else ["", "", "", ""]
        return [_as_shown(value or "") for value in before] != [
            _as_shown(value or "") for value in after
        ]


class KindSelect(forms.Select):
    """The verifier kind's list: each option carries what that kind does (`data-help`),
    which app.js shows under the list as the kind is chosen; the words for the empty option
    (no kind of its own) depend on the form."""

    def __init__(self, *args, default_help: str, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.default_help = default_help

    def get_context(self, name, value, attrs):
        context = super().get_context(name, value, attrs)
        # The words under the list describe it to a screen reader too.
        attrs = context["widget"]["attrs"]
        if attrs.get("id"):
            attrs["aria-describedby"] = f"{attrs['id']}-help"
        return context

    def create_option(self, name, value, *args, **kwargs):
        option = super().create_option(name, value, *args, **kwargs)
        option["attrs"]["data-help"] = self.help_for(str(value or ""))
        return option

    def help_for(self, kind: str) -> str:
        return wording.VERIFIER_KIND_HELP.get(kind, self.default_help)


# Which kinds read each of a verifier's fields (`judges`, `grading`): the form shows a
# field only for these kinds, unless it holds a value (kept, and shown, whatever the kind).
VERIFIER_FIELD_KINDS = {
    "output_type": ("llm_judge", "agent_judge"),
    "instructions": ("llm_judge",),
    "code": ("code_verifier",),
}


def verifier_fields(label: str, *, default_label: str, default_help: str) -> dict[str, forms.Field]:
    """Four fields that describe one verifier: kind, output type, instructions, code."""
    return {
        "kind": forms.ChoiceField(
            label=label,
            choices=[("", default_label), *VERIFIER_KINDS],
            required=False,
            widget=KindSelect(default_help=default_help),
        ),
        "output_type": forms.ChoiceField(
            label="Output", choices=OUTPUT_TYPE_CHOICES, required=False
        ),
        "instructions": forms.CharField(
            label="Instructions",
            required=False,
            widget=forms.Textarea(attrs={"rows": 2}),
            help_text=(
                "For an LLM judge: may use {{criterion}}, {{prompt}}, {{output}} and "
                "{{expected}}. Blank: is the criterion met?"
            ),
        ),
        "code": forms.CharField(
            label="Python code",
            required=False,
            widget=forms.Textarea(attrs={"rows": 4, "class": "code"}),
            help_text="For a Python check: defines verify(task, output).",
        ),
    }


def verifier_group(form: forms.BaseForm, prefix: str) -> dict[str, Any]:
    """One verifier's bound fields, as `_verifier_fields.html` lays them out."""
    kind = form[f"{prefix}_kind"]
    widget = kind.field.widget
    assert isinstance(widget, KindSelect)
    return {
        "kind": kind,
        "help": widget.help_for(str(kind.value() or "")),
        "others": [
            (form[f"{prefix}_{name}"], " ".join(kinds))
            for name, kinds in VERIFIER_FIELD_KINDS.items()
        ],
    }


def verifier_initial(verifier: dict | None, prefix: str) -> dict[str, str]:
    verifier = verifier or {}
    return {
        f"{prefix}_kind": verifier.get("kind", ""),
        f"{prefix}_output_type": verifier.get("outputType", ""),
        f"{prefix}_instructions": verifier.get("instructions", ""),
        f"{prefix}_code": verifier.get("code", ""),
    }


def verifier_from(data: dict, prefix: str) -> dict | None:
    return verifier_json(
        data.get(f"{prefix}_kind", ""),
        data.get(f"{prefix}_output_type", ""),
        data.get(f"{prefix}_instructions", ""),
        data.get(f"{prefix}_code", ""),
    )


class CriterionForm(KeepsShownText, forms.Form):
    criterion_id = forms.CharField(label="Id", max_length=200, required=False)
    text = forms.CharField(label="Criterion", widget=forms.Textarea(attrs={"rows": 2}))
    weight = forms.FloatField(label="Weight", required=False, help_text="Blank counts as 1.")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        fields = verifier_fields(
            "Checked by",
            default_label=wording.KIND_DEFAULT_FOR_DATASET,
            default_help=wording.CRITERION_LEFT_TO_DATASET,
        )
        for name, field in fields.items():
            self.fields[f"verifier_{name}"] = field

    @property
    def verifier(self) -> dict[str, Any]:
        return verifier_group(self, "verifier")

    def to_document(self) -> dict:
        data = self.cleaned_data
        criterion = {"criterion": data["text"]}
        if data.get("criterion_id"):
            criterion["id"] = data["criterion_id"]
        if data.get("weight") is not None:
            criterion["weight"] = data["weight"]
        verifier = verifier_from(data, "verifier")
        if verifier:
            criterion["verifier"] = verifier
        return criterion

    @staticmethod
    def initial_for(criterion) -> dict:
        return {
            "criterion_id": criterion.criterion_id,
            "text": criterion.text,
            # 10, not 10.0: weights are usually whole numbers.
            "weight": int(criterion.weight) if criterion.weight.is_integer() else criterion.weight,
            **verifier_initial(criterion.verifier, "verifier"),
        }


CriterionFormSet = forms.formset_factory(CriterionForm, extra=1, can_delete=True, max_num=200)


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files from one file input (Django's own recipe); none chosen is []."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        one = super().clean
        if isinstance(data, list | tuple):
            return [one(item, initial) for item in data if item]
        return [one(data, initial)] if data else []


ATTACH_HELP = (
    f"Up to {MAX_FILES_PER_KIND} input files and {MAX_FILES_PER_KIND} expected files a task, "
    f"each up to {MAX_ATTACHED_FILE_BYTES >> 20} MiB: the limits of a file import."
)
# The form's file inputs: which of a task's files each adds.
ATTACH_FIELDS = (("add_input_files", "input"), ("add_expected_files", "expected"))


class MetadataField(forms.JSONField):
    """A task's metadata as a JSON object, shown indented (blank: none)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(
            required=False,
            widget=forms.Textarea(attrs={"rows": 3, "class": "code", "spellcheck": "false"}),
            **kwargs,
        )

    def to_python(self, value: Any) -> Any:
        value = super().to_python(value)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise forms.ValidationError(METADATA_NOT_AN_OBJECT)
        return value

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, forms.fields.InvalidJSONInput):
            return value
        if not value:
            return ""
        return json.dumps(value, ensure_ascii=False, indent=2)


METADATA_NOT_AN_OBJECT = (
    'Write the metadata as one JSON object of keys and values, e.g. {"category": "billing", '
    '"difficulty": 2}.'
)


class TaskForm(KeepsShownText, forms.Form):
    task_id = forms.CharField(label="Id", max_length=200)
    name = forms.CharField(max_length=300, required=False)
    prompt = forms.CharField(widget=forms.Textarea(attrs={"rows": 6}))
    expected_text = forms.CharField(
        label="Expected answer",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Leave empty to grade this task by criteria only.",
    )
    # Choices: the task's own files (`TaskEditor`).
    remove_files = forms.TypedMultipleChoiceField(
        label="Remove", coerce=int, required=False, widget=forms.CheckboxSelectMultiple
    )
    add_input_files = MultipleFileField(
        label="Add input files",
        required=False,
        help_text="What the agent is given with the prompt.",
    )
    add_expected_files = MultipleFileField(
        label="Add expected files",
        required=False,
        help_text="Files a good answer matches; the judges read their text.",
    )
    metadata = MetadataField(
        help_text='What else the task carries, as a JSON object: {"category": "billing", '
        '"difficulty": 2, "split": "test"}. Leave empty for none.',
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        fields = verifier_fields(
            "Checked by",
            default_label=wording.KIND_DEFAULT_FOR_DATASET,
            default_help=wording.ANSWER_LEFT_TO_DATASET,
        )
        for name, field in fields.items():
            self.fields[f"expected_verifier_{name}"] = field

    @property
    def expected_verifier(self) -> dict[str, Any]:
        return verifier_group(self, "expected_verifier")

    attach_help = ATTACH_HELP

    def new_files(self) -> list[tuple[str, Any]]:
        """(role, uploaded file) of each file chosen to add, input files first."""
        data = self.cleaned_data
        return [(role, upload) for name, role in ATTACH_FIELDS for upload in data.get(name, [])]

    def to_document(self, criteria: list[dict]) -> dict:
        data = self.cleaned_data
        task: dict = {"id": data["task_id"], "name": data.get("name", ""), "prompt": data["prompt"]}
        if data.get("expected_text"):
            expected: dict = {"text": data["expected_text"]}
            verifier = verifier_from(data, "expected_verifier")
            if verifier:
                expected["verifier"] = verifier
            task["expected"] = expected
        if criteria:
            task["criteria"] = criteria
        if data.get("metadata"):
            task["metadata"] = data["metadata"]
        return task

    @staticmethod
    def initial_for(task) -> dict:
        return {
            "task_id": task.task_id,
            "name": task.name,
            "prompt": task.prompt,
            "expected_text": task.expected_text,
            "metadata": task.metadata or {},
            **verifier_initial(task.expected_verifier, "expected_verifier"),
        }


# The page's two settings: the form's prefix, the file's key, a heading and what grades
# when the setting is left as the default.
SETTINGS_KEYS = (
    (
        "expected",
        "expectedAnswerVerifier",
        wording.EXPECTED_ANSWER_SETTING,
        wording.EXPECTED_ANSWER_SETTING_BLANK,
    ),
    (
        "default",
        "defaultVerifier",
        wording.DEFAULT_VERIFIER_SETTING,
        wording.DEFAULT_VERIFIER_SETTING_BLANK,
    ),
)


class DatasetSettingsForm(DatasetForm):
    """Name, description, the two verifier defaults the page's `settings` holds, and
    whether saving requires every draft reviewed."""

    class Meta(DatasetForm.Meta):
        fields = ["name", "description", "require_review"]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for prefix, _key, _heading, blank in SETTINGS_KEYS:
            fields = verifier_fields(
                "Checked by", default_label=wording.KIND_DEFAULT_FOR_SETTING, default_help=blank
            )
            for name, field in fields.items():
                self.fields[f"{prefix}_{name}"] = field
        # Also when bound: a posted value is compared with what the form showed.
        settings = self.instance.settings or {}
        for prefix, key, _heading, _blank in SETTINGS_KEYS:
            self.initial.update(verifier_initial(settings.get(key), prefix))

    @property
    def verifier_settings(self) -> list[dict[str, Any]]:
        """Each setting's heading and fields, as the page shows them."""
        return [
            {"heading": heading, **verifier_group(self, prefix)}
            for prefix, _key, heading, _blank in SETTINGS_KEYS
        ]

    def settings_document(self) -> dict:
        data = self.cleaned_data
        # Keys this form does not show (set in the admin, say) are kept as they are.
        known = {key for _prefix, key, _heading, _blank in SETTINGS_KEYS}
        settings = {
            key: value for key, value in (self.instance.settings or {}).items() if key not in known
        }
        for prefix, key, _heading, _blank in SETTINGS_KEYS:
            verifier = verifier_from(data, prefix)
            if verifier:
                settings[key] = verifier
        return settings


# The button that shows the criteria form again with one more empty criterion, saving
# nothing (app.js adds one in place, without a request).
ADD_CRITERION = "add_criterion"


def adding_criterion(data) -> bool:
    """Whether the form was sent by "Add another criterion": shown again, not saved."""
    return data is not None and ADD_CRITERION in data


def criteria_formset(data=None, *, criteria=(), prefix: str = "criteria") -> forms.BaseFormSet:
    initial = [CriterionForm.initial_for(criterion) for criterion in criteria]
    if adding_criterion(data):
        # One form more than were sent: the new one is empty, the others keep what was typed.
        data = data.copy()
        total = f"{prefix}-TOTAL_FORMS"
        sent = data.get(total, "0")
        data[total] = str(int(sent) + 1 if sent.isdigit() else 1)
    return CriterionFormSet(data, initial=initial or None, prefix=prefix)


def shown_unchecked(form: forms.BaseForm, formset: forms.BaseFormSet) -> None:
    """A form shown again only to add a criterion was not sent to be saved: it shows what
    was typed, and no errors yet (a prompt not typed yet is not a mistake)."""
    for each in (form, *formset.forms):
        each._errors = ErrorDict()
    # Django reads this attribute before it validates (django-stubs does not declare it).
    formset._non_form_errors = formset.error_class()  # type: ignore[attr-defined]


def criteria_documents(formset: forms.BaseFormSet) -> list[dict]:
    """Every criterion the formset holds, changed or not: an untouched criterion is still
    data. Only the empty form for adding one (left empty) and deleted ones are skipped."""
    return [
        form.to_document()
        for form in formset.forms
        if form.cleaned_data and not form.cleaned_data.get("DELETE")
    ]


def _add_problems(form: forms.Form, problems: list[Problem], *, one_task: bool = False) -> None:
    """The checker's problems as the form's errors, each after the value it is about, in
    words (`criterion 2 › weight`); the task form leaves out the task, which is itself."""
    for problem in problems:
        place = wording.place(problem.to_json())
        if one_task and place.startswith("task 1"):
            place = place.partition(wording.SEPARATOR)[2]
        form.add_error(None, f"{place}: {problem.message}" if place else problem.message)


class TaskEditor:
    """The task page's form and its criteria, checked by the same rules as a file import.

    Rules live once, in the checker: the editor writes what was typed as a one-task dataset
    document (with the dataset's criteria for every task, so "nothing to grade" knows about
    them) and runs the shared validator over it.
    """

    def __init__(
        self, data=None, files=None, *, task=None, shared_criteria: list[dict], options, taken_ids
    ):
        self.task = task
        self.form = TaskForm(data, files, initial=TaskForm.initial_for(task) if task else None)
        remove = self.form.fields["remove_files"]
        assert isinstance(remove, forms.TypedMultipleChoiceField)
        remove.choices = [(f.pk, f.name) for f in task.files.all()] if task else []
        own = task.criteria.all() if task else ()
        self.criteria = criteria_formset(data, criteria=own)
        self.adding = adding_criterion(data)
        if self.adding:
            shown_unchecked(self.form, self.criteria)
        self.shared_criteria = shared_criteria
        self.options = options
        self.taken_ids = taken_ids
        self.spec: TaskSpec | None = None
        self.new_files: list[tuple[str, Any]] = []
        self.removed_files: list[int] = []

    def is_valid(self) -> bool:
        if self.adding or not (self.form.is_valid() and self.criteria.is_valid()):
            return False
        if self.form.cleaned_data["task_id"] in self.taken_ids:
            self.form.add_error("task_id", "Another task of this dataset has this id.")
            return False
        task = self.form.to_document(criteria_documents(self.criteria))
        self.new_files = self.form.new_files()
        self.removed_files = self.form.cleaned_data.get("remove_files") or []
        members = self._with_files(task)
        document = {"criteria": self.shared_criteria, "tasks": [task]}
        plan, problems, _ = validate_document(
            document,
            file_name="this task",
            locate=nowhere,
            options=self.options,
            zip_members=members,
        )
        _add_problems(self.form, problems, one_task=True)
        self.spec = plan.tasks[0] if plan else None
        return self.spec is not None

    def _with_files(self, task: dict) -> dict[str, int]:
        """The task's files, those it has and those chosen to add, written into `task` as a
        file's would be, so that the checker holds them to an import's limits (how many,
        how large, their names): each is a member of a zip the editor pretends to have.
        Returns that zip's {member: size}."""
        members: dict[str, int] = {}

        def member(name: str, size: int) -> str:
            key = name
            while key in members:  # two files of one name: each is its own member
                key = f"{len(members) + 1}/{name}"
            members[key] = size
            return key

        kept = self.task.files.all() if self.task is not None else ()
        for role, key in (
            (TaskFile.Role.INPUT, "inputFiles"),
            (TaskFile.Role.EXPECTED, "expectedFiles"),
        ):
            docs: list[dict] = [
                {"url": f.url, "name": f.name}
                if f.url
                else {"path": member(f.name, f.size or 0), "name": f.name}
                for f in kept
                if f.role == role and f.pk not in self.removed_files
            ]
            docs += [
                {"path": member(upload.name, upload.size), "name": upload.name}
                for added_role, upload in self.new_files
                if added_role == role
            ]
            if docs:
                task[key] = docs
        return members


class SettingsEditor:
    """The dataset settings form and its criteria for every task, checked like a file."""

    def __init__(self, data=None, *, dataset, options):
        self.form = DatasetSettingsForm(data, instance=dataset)
        self.criteria = criteria_formset(
            data, criteria=dataset.criteria.filter(task__isnull=True, archived=False)
        )
        self.adding = adding_criterion(data)
        if self.adding:
            shown_unchecked(self.form, self.criteria)
        self.options = options
        self.criteria_specs: list = []

    def is_valid(self) -> bool:
        if self.adding or not (self.form.is_valid() and self.criteria.is_valid()):
            return False
        document = {
            "settings": self.form.settings_document(),
            "criteria": criteria_documents(self.criteria),
            # One placeholder task, so that the validator checks the rest as it would a file.
            "tasks": [{"id": "t", "prompt": "p", "expected": "e"}],
        }
        plan, problems, _ = validate_document(
            document, file_name="settings", locate=nowhere, options=self.options
        )
        _add_problems(self.form, problems)
        self.criteria_specs = list(plan.criteria) if plan else []
        return plan is not None


class ApiTokenForm(forms.Form):
    """A new personal API token: a name to tell it apart, and when it stops working."""

    name = forms.CharField(
        max_length=100, help_text="Where it will be used, e.g. “nightly eval CI”."
    )
    expires_days = forms.IntegerField(
        label="Expires after (days)",
        required=False,
        min_value=1,
        max_value=3650,
        help_text="Leave empty for a token that works until you revoke it.",
    )


class PersonForm(forms.Form):
    """A person an administrator adds: who may sign in, and whether they may add others."""

    username = forms.CharField(label="User name", max_length=150)
    email = forms.EmailField(label="Email (optional)", required=False)
    is_staff = forms.BooleanField(
        label="Administrator",
        required=False,
        help_text="May add people, and open the admin site.",
    )
    how = forms.ChoiceField(
        label="How they sign in first",
        choices=[
            ("password", "A password made now and shown once, for you to pass on"),
            ("invite", "An invite link for you to send them: they choose their password"),
        ],
        initial="password",
        required=False,  # not given: a password (`manage.py add_person` and older forms)
        widget=forms.RadioSelect,
    )


# --- The task lists of the dataset and version pages ----------------------------------------

PAGE_SIZES = (25, 50, 100, 200)
DEFAULT_PAGE_SIZE = 50
# A search is a phrase to find, not a document: longer text is refused, not searched.
MAX_SEARCH_CHARS = 200
# Past this many pages a number is a typo; the paginator shows the last page instead.
MAX_PAGE = 1_000_000
SORTS = [("", "Position"), ("name", "Name"), ("changed", "Last changed")]


class TaskListForm(forms.Form):
    """What the URL of a dataset or version page asks of its task list: search, filters,
    sort, page. Each field is optional and bounded; a value that is not one of its choices
    is read as the field's default (a link is never an error page)."""

    q = forms.CharField(label="Search", required=False, max_length=MAX_SEARCH_CHARS)
    state = forms.ChoiceField(
        label="State",
        required=False,
        choices=[
            ("", "Drafts and saved"),
            ("draft", "Drafts not reviewed"),
            ("reviewed", "Drafts reviewed"),
            ("saved", "Saved"),
            ("archived", "Archived"),
        ],
    )
    scored_by = forms.ChoiceField(
        label="Scored by",
        required=False,
        choices=[
            ("", "Anything"),
            ("expected_answer", "Expected answer"),
            ("criteria", "Criteria"),
        ],
    )
    verifier = forms.ChoiceField(
        label="Verifier", required=False, choices=[("", "Any verifier"), *VERIFIER_KINDS]
    )
    has_files = forms.ChoiceField(
        label="Files",
        required=False,
        choices=[("", "Any"), ("yes", "Has files"), ("no", "No files")],
    )
    metadata = forms.CharField(
        label="Metadata",
        required=False,
        max_length=MAX_SEARCH_CHARS,
        widget=forms.TextInput(attrs={"placeholder": "key=value", "autocomplete": "off"}),
    )
    sort = forms.ChoiceField(label="Sort by", required=False, choices=SORTS)
    per_page = forms.TypedChoiceField(
        label="Per page",
        required=False,
        coerce=int,
        empty_value=None,
        choices=[(size, f"{size:,}") for size in PAGE_SIZES],
    )
    page = forms.IntegerField(required=False, min_value=1, max_value=MAX_PAGE)

    def __init__(self, *args, with_state: bool = True, keys_url: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Where the metadata's keys are listed (the field's choices; a page without htmx).
        self.keys_url = keys_url
        if keys_url:
            # The metadata's keys and common values, offered as the field is first focused
            # (a datalist, loaded then: the page itself does not count them).
            self.fields["metadata"].widget.attrs.update(
                {
                    "list": "metadata-choices",
                    "hx-get": keys_url,
                    "hx-trigger": "focus once",
                    "hx-target": "#metadata-choices",
                    "hx-swap": "outerHTML",
                    "hx-push-url": "false",
                }
            )
        if not with_state:
            # A version's tasks are all saved ones: its page filters by everything else.
            del self.fields["state"]
            sort = self.fields["sort"]
            assert isinstance(sort, forms.ChoiceField)
            sort.choices = SORTS[:2]

    def listing(self) -> TaskListing:
        """What to list; a field missing or not valid is its default."""
        self.is_valid()
        data = self.cleaned_data
        return TaskListing(
            query=(data.get("q") or "").strip(),
            state=data.get("state") or "",
            scored_by=data.get("scored_by") or "",
            verifier=data.get("verifier") or "",
            files=data.get("has_files") or "",
            metadata=(data.get("metadata") or "").strip(),
            sort=data.get("sort") or "",
            per_page=data.get("per_page") or DEFAULT_PAGE_SIZE,
            page=data.get("page") or 1,
        )


EVERY_CRITERION = ""


class TryAnswerForm(forms.Form):
    """Try an answer: the answer, one criterion or all of them, and (on the dataset's
    Settings page) the task to try it against."""

    answer = forms.CharField(
        label="Answer",
        strip=False,
        max_length=MAX_TEXT_CHARS,
        widget=forms.Textarea(attrs={"rows": 6}),
        error_messages={"required": "Paste an answer to try."},
    )
    criterion = forms.ChoiceField(label="Grade by", required=False)

    def __init__(
        self,
        data=None,
        *,
        checks: Sequence[tuple[str, str]],
        tasks: Sequence[tuple[int, str]] | None = None,
        every_label: str = "Every criterion",
        **kwargs: Any,
    ) -> None:
        super().__init__(data, **kwargs)
        criterion = self.fields["criterion"]
        assert isinstance(criterion, forms.ChoiceField)
        criterion.choices = [(EVERY_CRITERION, every_label), *checks]
        if tasks is not None:
            self.fields["task"] = forms.TypedChoiceField(
                label="Task", choices=list(tasks), coerce=int
            )
            # The task first: what the answer is to.
            self.order_fields(["task", "answer", "criterion"])

    def clean_answer(self) -> str:
        # A browser posts each line break as CRLF: the answer as the person typed it has LF,
        # as an agent's would. Nothing else is changed, not even spaces at its ends.
        answer: str = self.cleaned_data["answer"]
        return answer.replace("\r\n", "\n")

    @property
    def only(self) -> str | None:
        """The one criterion to grade, or None for all of them."""
        return self.cleaned_data.get("criterion") or None


class RunOutputsForm(forms.Form):
    """New run: the agent's outputs, and which saved version grades them."""

    outputs = forms.FileField(
        label="Outputs file",
        help_text='.jsonl with a line per task, {"task": "<task id>", "output": "<text>"}, '
        "or .csv with task and output columns; or a .zip of one with the tasks' output files",
        widget=forms.ClearableFileInput(attrs={"accept": ".jsonl,.ndjson,.csv,.zip"}),
    )
    version = forms.TypedChoiceField(label="Version", coerce=int)
    name = forms.CharField(label="Name (optional)", required=False, max_length=200)
    budget_judge_calls = forms.IntegerField(
        label="At most this many judge calls (optional)", required=False, min_value=0
    )

    def __init__(self, *args, versions: list[int], max_bytes: int, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.max_bytes = max_bytes
        version = self.fields["version"]
        assert isinstance(version, forms.TypedChoiceField)
        version.choices = [
            (n, f"v{n}" + (" (latest)" if i == 0 else "")) for i, n in enumerate(versions)
        ]

    def clean_outputs(self):
        upload = self.cleaned_data["outputs"]
        if upload.size > self.max_bytes:
            raise forms.ValidationError(
                f"This file is larger than {self.max_bytes // (1024 * 1024)} MiB, the most an "
                "outputs file may be."
            )
        return upload


class RunColumnsForm(forms.Form):
    """Which column of an outputs file holds the task and which the agent's output: asked
    when two columns could each be one (a select per role, the likeliest filled in)."""

    task = forms.ChoiceField(label="Task column")
    output = forms.ChoiceField(label="Output column")

    def __init__(self, *args, columns: Sequence[str], chosen: Mapping[str, str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for role in ("task", "output"):
            role_field = self.fields[role]
            assert isinstance(role_field, forms.ChoiceField)
            role_field.choices = [(name, name) for name in columns]
            role_field.initial = chosen.get(role)

    def clean(self):
        data = super().clean()
        if data.get("task") and data.get("task") == data.get("output"):
            raise forms.ValidationError("The task and the output are two different columns.")
        return data


RUN_TASK_SHOWS = [
    ("", "Every task"),
    ("failed", "Tasks that scored below 1"),
    ("errored", "Tasks with an error"),
    ("no_output", "Tasks with no output"),
    ("criterion", "Tasks that failed the criterion…"),
]
RUN_TASK_SORTS = [
    ("", "Position"),
    ("score", "Score, lowest first"),
    ("-score", "Score, highest first"),
]


class RunTaskListForm(forms.Form):
    """What the URL of a run page asks of its tasks: which, in what order, which page. A
    value that is not one of the choices is read as the default."""

    show = forms.ChoiceField(label="Show", required=False, choices=RUN_TASK_SHOWS)
    criterion = forms.CharField(label="Criterion", required=False, max_length=200)
    sort = forms.ChoiceField(label="Sort by", required=False, choices=RUN_TASK_SORTS)
    page = forms.IntegerField(required=False, min_value=1, max_value=MAX_PAGE)

    def __init__(self, *args, criteria: list[tuple[str, str]] = (), **kwargs) -> None:  # type: ignore[assignment]
        super().__init__(*args, **kwargs)
        self.fields["criterion"] = forms.ChoiceField(
            label="Criterion", required=False, choices=[("", "—"), *criteria]
        )

    def listing(self) -> RunTaskListing:
        self.is_valid()
        data = self.cleaned_data
        return RunTaskListing(
            show=data.get("show") or "",
            criterion=data.get("criterion") or "",
            sort=data.get("sort") or "",
            page=data.get("page") or 1,
        )
