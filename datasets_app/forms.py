"""Forms: they validate what a person typed; services do the writing."""

from __future__ import annotations

from django import forms

from datasets_app.models import Dataset


class DatasetForm(forms.ModelForm):
    class Meta:
        model = Dataset
        fields = ["name", "description"]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}
