"""The IPython shell owner and what the worker changes in and around the shell: history, tracebacks, package installs, warm-up, the memory guard's worker half."""
