from django.urls import path

app_name = "datasets_app"
urlpatterns: list = []
