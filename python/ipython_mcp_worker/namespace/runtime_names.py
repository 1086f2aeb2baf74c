"""IPython's own bindings in the user namespace (``In``, ``Out``, ``get_ipython``…).

The one definition is ``fixtures/protocol/runtime-names.json``; the worker ships without the repository's fixtures,
so ``tooling/scripts/gen-protocol.mjs`` generates it into ``constants.RUNTIME_NAME_LIST`` (for TypeScript too).
``tests/test_runtime_names.py`` fails when this set and the fixture differ (settings.test.ts does the same).
"""

from __future__ import annotations

from ..protocol.constants import RUNTIME_NAME_LIST

RUNTIME_NAMES: frozenset[str] = frozenset(RUNTIME_NAME_LIST)
