"""Every write the app makes, one module per subject; views, commands, the API, the admin
and Celery tasks call these, importing the module of the subject they write.

Each service is keyword-only, typed and atomic. `datasets`: a dataset's own life (create,
edit its tasks and settings, save it as a version, record runs). `imports`: importing a
dataset file (keep the upload, check it, import it) and the files it stores. `sharing`:
who else may see a dataset. `tokens`: the personal API tokens that open the HTTP API.
`sandbox`: the Python checks' sandbox self-test as the site records it. `judge_calls`: the
judges' calls a try or a run keeps.
"""
