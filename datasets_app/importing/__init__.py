"""Dataset files in, a checked plan or every problem out.

Pure Python (a test asserts that nothing here imports Django): bytes and a file name go in,
a `CheckResult` comes back. One module per format; `checker.check_file` is the way in.
"""
