"""The operations over the shell's user namespace: list, search, inspect, call_function, reload, remove, reset."""
