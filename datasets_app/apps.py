from django.apps import AppConfig


class DatasetsAppConfig(AppConfig):
    name = "datasets_app"
    verbose_name = "Datasets"

    def ready(self) -> None:
        from datasets_app import checks  # noqa: F401 - registers the deployment checks
