from django.urls import path

from datasets_app import views

app_name = "datasets_app"
urlpatterns = [
    path("", views.dataset_list, name="dataset_list"),
    path("datasets/new/", views.dataset_create, name="dataset_create"),
    path("datasets/<int:pk>/", views.dataset_detail, name="dataset_detail"),
    path("datasets/<int:pk>/save/", views.version_save, name="version_save"),
]
