"""IPython's own bindings in the user namespace (``In``, ``Out``, ``get_ipython``…).

A copy of ``fixtures/protocol/runtime-names.json``, the one definition both languages follow: the worker ships
without the repository's fixtures, so it cannot read the file at run time. ``tests/test_runtime_names.py`` fails
when this copy and the fixture differ (the TypeScript copy has the same test).
"""

from __future__ import annotations

RUNTIME_NAMES: frozenset[str] = frozenset({"In", "Out", "get_ipython", "exit", "quit", "open"})
