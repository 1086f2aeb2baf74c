"""Operations over the shell's user namespace: list, search, inspect, call_function, reload, remove, reset.

Nothing here evaluates strings: names resolve through ``shell.user_ns`` and then ``getattr`` per dotted part
(the one place discovery runs user attribute code: the path the caller asked for). Everything discovery reads
about the resolved objects runs no user code: classification looks only at ``type(obj)`` and ``callable``;
modules, docstrings and signatures are read statically (static.py, signature.py), so no property, descriptor,
``__getattr__`` or ``__getattribute__`` (of the object or its metaclass) runs. Only a representation calls
``__repr__``: search's per-match ``repr`` and inspect's ``representation``, both under the operation deadline.
Every text that leaves this module is bounded by the configured limits; KeyboardInterrupt (the parent's
interrupt) always propagates.

Kinds: ``module`` (instances of ModuleType), ``class`` (instances of ``type``), ``function`` (see
``FUNCTION_TYPES``), ``other`` (any other callable object) and ``variable`` (everything else).
"""

from __future__ import annotations

from typing import Any

from ..values.failure import describe_exception
from . import calls as namespace_calls
from . import edits as namespace_edits
from . import listing as namespace_listing
from .names import FUNCTION_TYPES, KINDS, Names, classify
from .runtime_names import RUNTIME_NAMES

__all__ = ["FUNCTION_TYPES", "KINDS", "RUNTIME_NAMES", "NamespaceOperations", "classify", "describe_exception"]


class NamespaceOperations(Names):
    """The namespace operations of one shell (one module per section). Owner (main) thread only."""

    def list(self, params: dict[str, Any]) -> dict[str, Any]:
        return namespace_listing.list_functions(self, params)

    def search(self, params: dict[str, Any]) -> dict[str, Any]:
        return namespace_listing.search_names(self, params)

    def inspect(self, params: dict[str, Any]) -> dict[str, Any]:
        return namespace_calls.inspect_name(self, params)

    def call_function(self, params: dict[str, Any]) -> dict[str, Any]:
        return namespace_calls.call_function(self, params)

    def reload(self, params: dict[str, Any]) -> dict[str, Any]:
        return namespace_edits.reload_modules(self, params)

    def remove(self, params: dict[str, Any]) -> dict[str, Any]:
        return namespace_edits.remove_names(self, params)

    def reset(self, params: dict[str, Any]) -> dict[str, Any]:
        return namespace_edits.reset_names(self, params)
