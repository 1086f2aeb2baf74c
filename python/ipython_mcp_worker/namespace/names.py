"""The names of one shell's user namespace: configured modules, protection, resolution (split out of
namespace.py, whose docstring states the rules every namespace operation follows)."""

from __future__ import annotations

import functools
import importlib
import sys
import types
from collections.abc import Callable, Iterable
from itertools import compress
from typing import Any

from ..inspection.static import module_of
from ..protocol.errors import OpError
from ..protocol.limits import Limits, bound_text
from ..values.failure import describe_exception
from .runtime_names import RUNTIME_NAMES

KINDS = ("function", "class", "module", "variable", "other")

# What ``list`` reports and classification calls "function": plain and builtin functions, bound methods,
# method/slot wrappers of builtin types (``str.upper``) and functools.partial objects (subclasses included).
FUNCTION_TYPES: tuple[type, ...] = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
    functools.partial,
)

MODULE_DICT = vars(types.ModuleType)["__dict__"]


def classify(obj: Any) -> str:
    """The Kind of ``obj``, decided from ``type(obj)`` alone (``issubclass`` on real types runs no user code)."""
    tp = type(obj)
    if issubclass(tp, types.ModuleType):
        return "module"
    if issubclass(tp, type):
        return "class"
    if issubclass(tp, FUNCTION_TYPES):
        return "function"
    return "other" if callable(obj) else "variable"


def static_path(namespace: dict[str, Any], path: str) -> Any:
    """The module object at a dotted ``path`` through user_ns and module ``__dict__``s only; None otherwise."""
    parts = path.split(".")
    obj = namespace.get(parts[0])
    for part in parts[1:]:
        if not issubclass(type(obj), types.ModuleType):
            return None
        obj = MODULE_DICT.__get__(obj).get(part)
    return obj


class Unresolvable(Exception):
    """Resolution raised something other than AttributeError (a property, a module ``__getattr__``...)."""

    def __init__(self, path: str, error: BaseException) -> None:
        super().__init__(path)
        self.path = path
        self.error = error


def quietly(read: Callable[[], Any]) -> Any:
    try:
        return read()
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - metadata of user objects may raise anything
        return None


class Names:
    """The names of one shell and the modules configured into it. Owner (main) thread only."""

    def __init__(
        self, shell: Any, limits: Limits, preload_modules: list[str], module_aliases: dict[str, str]
    ) -> None:
        self.shell = shell
        self.limits = limits
        # (module to import, name bound in user_ns, bind the top-level package rather than the module)
        self.configured: list[tuple[str, str, bool]] = []
        for module in preload_modules:
            self._check_module_name(module)
            self.configured.append((module, module.split(".")[0], True))
        for module, alias in module_aliases.items():
            self._check_module_name(module)
            if type(alias) is not str or not alias.isidentifier() or alias in RUNTIME_NAMES:
                raise OpError(
                    "startup_failed", f"invalid alias {alias!r} for module {module!r}", {"module": module}
                )
            self.configured.append((module, alias, False))
        self.protected = RUNTIME_NAMES | {binding for _, binding, _ in self.configured}
        self.on_names_removed: Callable[[list[str]], None] = lambda names: None

    @staticmethod
    def _check_module_name(module: Any) -> None:
        if type(module) is not str or not all(part.isidentifier() for part in module.split(".")):
            raise OpError("startup_failed", f"invalid module name {module!r}", {"module": repr(module)})

    def bind_configured_modules(self) -> None:
        """Import every configured module (preloads, then aliases) and (re)bind its name in user_ns."""
        for module, binding, top_level in self.configured:
            try:
                value = importlib.import_module(module)
                if top_level:
                    value = importlib.import_module(module.split(".")[0])
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - an import may raise anything, SystemExit included
                type_name, message, _ = describe_exception(exc, self.limits.max_text_chars)
                setting = "IPYTHON_MCP_PRELOAD_MODULES" if top_level else "IPYTHON_MCP_MODULE_ALIASES"
                raise OpError(
                    "startup_failed",
                    f"module {module!r} from {setting} failed to import: {type_name}: {message}. Fix: install it"
                    f" into {sys.executable}, put its directory in IPYTHON_MCP_LIBRARY_PATHS, or remove it from"
                    f" {setting}; then restart the session",
                    {"module": module, "type": type_name, "setting": setting},
                ) from None
            self.shell.user_ns[binding] = value

    def restore_runtime_bindings(self) -> None:
        """Rebind IPython's own names (``In``, ``get_ipython``...) a user shadowed or deleted to IPython's
        originals, which ``user_ns_hidden`` keeps: a reset leaves a namespace a user can work in."""
        hidden = self.shell.user_ns_hidden
        namespace = self.shell.user_ns
        for name in sorted(RUNTIME_NAMES):
            if name in hidden and (name not in namespace or namespace[name] is not hidden[name]):
                namespace[name] = hidden[name]

    def protected_names(self) -> frozenset[str]:
        return self.protected

    def is_protected(self, name: str) -> bool:
        return name.startswith("_") or name in self.protected

    def user_names(self) -> list[str]:
        """Sorted unprotected names the user created (IPython's hidden bindings only once rebound)."""
        names = self.unsorted_user_names()
        names.sort()
        return names

    def unsorted_user_names(self, keep_type: Callable[[type], bool] | None = None) -> list[str]:
        """``user_names`` in namespace order; with ``keep_type``, only those whose value's exact type it accepts.

        ``list`` runs this over 100,000 names, so the values are sorted out by type in C (``keep_type`` is asked
        once per distinct type, of which 100,000 names hold a handful, and may not run user code), no pair is
        built, and only the names left are tested in Python.
        """
        namespace = self.shell.user_ns
        candidates: Iterable[Any] = namespace
        if keep_type is not None:
            kept = {kind for kind in set(map(type, namespace.values())) if keep_type(kind)}
            # Keys and values of one dict, iterated side by side within one C call: aligned by construction.
            candidates = compress(namespace, map(kept.__contains__, map(type, namespace.values())))
        excluded = self.protected | self._shadowed_hidden()
        return [name for name in candidates if type(name) is str and name[:1] != "_" and name not in excluded]

    def _shadowed_hidden(self) -> set[str]:
        """IPython's own bindings (``user_ns_hidden``) still bound to IPython's value: not the user's names."""
        namespace = self.shell.user_ns
        absent = object()
        return {name for name, value in self.shell.user_ns_hidden.items() if namespace.get(name, absent) is value}

    def user_items_matching(self, query: str, exact: bool) -> list[tuple[str, Any]]:
        """(name, value) of the ``user_names`` that are ``query`` (``exact``) or hold it case-insensitively
        (``casefold``), in namespace order: one pass in C-level string operations, pairs built for the hits only.
        Keys that are not exact ``str`` never match (their methods would be user code)."""
        items = self.shell.user_ns.items()
        if exact:
            hits = [(name, value) for name, value in items if type(name) is str and name == query]
        else:
            folded = query.casefold()
            hits = [(name, value) for name, value in items if type(name) is str and folded in name.casefold()]
        excluded = self.protected | self._shadowed_hidden()
        return [(name, value) for name, value in hits if name[:1] != "_" and name not in excluded]

    def resolve(self, name: str) -> Any:
        """Resolve a (dotted) name. A miss raises OpError name_not_found; other failures Unresolvable."""
        parts = name.split(".")
        namespace = self.shell.user_ns
        label = bound_text(name, self.limits.max_repr_chars)[0]
        if parts[0] not in namespace:
            raise OpError("name_not_found", f"name {label!r} is not defined", {"name": label})
        obj = namespace[parts[0]]
        for index in range(1, len(parts)):
            path = ".".join(parts[: index + 1])
            try:
                obj = getattr(obj, parts[index])
            except AttributeError:
                missing = bound_text(path, self.limits.max_repr_chars)[0]
                raise OpError(
                    "name_not_found", f"{missing!r} does not resolve", {"name": label, "missing": missing}
                ) from None
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - a property or __getattr__ may raise anything
                raise Unresolvable(path, exc) from None
        return obj

    def library_members(self) -> list[tuple[str, Any]]:
        """(dotted name, object) of the public functions and classes each configured module defines itself.

        Only modules whose configured binding is still active are walked, each once (under its first binding:
        preloads before aliases). Members come from the module's ``__dict__`` (no module ``__getattr__`` runs)
        and count when their own ``__module__`` names that module, so re-exported imports are left out.
        """
        namespace = self.shell.user_ns
        seen: set[int] = set()
        members: list[tuple[str, Any]] = []
        for module_name, binding, top_level in self.configured:
            module = sys.modules.get(module_name)
            if module is None or id(module) in seen or not issubclass(type(module), types.ModuleType):
                continue
            prefix = module_name if top_level else binding
            if static_path(namespace, prefix) is not module:
                continue
            seen.add(id(module))
            module_dict = MODULE_DICT.__get__(module)
            own_name = module_dict.get("__name__")
            if type(own_name) is not str:  # compared below: == on another object could run its __eq__
                continue
            for name, obj in list(module_dict.items()):
                if type(name) is not str or name.startswith("_") or not name.isidentifier():
                    continue
                kind = classify(obj)
                if kind not in ("function", "class"):
                    continue
                if quietly(functools.partial(module_of, obj, kind)) != own_name:
                    continue
                members.append((f"{prefix}.{name}", obj))
        return members
