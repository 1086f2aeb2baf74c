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

import functools
import importlib
import inspect
import os
import sys
import traceback
import types
from collections.abc import Callable
from typing import Any

from .errors import OpError
from .jsonvalue import NotJson, bounded_repr, from_javascript, json_form
from .limits import Limits, bound_text
from .runtime_names import RUNTIME_NAMES
from .signature import NoSignature, signature_text
from .static import doc_of, module_of, qualified_type_name, type_qualname

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

_MODULE_DICT = types.ModuleType.__dict__["__dict__"]
_NO_SIGNATURE = "(...)"
_INSPECT_BOUNDED = ("qualified_type", "signature", "module", "documentation", "representation")


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


def describe_exception(exc: BaseException, limit: int) -> tuple[str, str, bool]:
    """(type name, bounded message, message truncated) of an exception whose ``__str__`` may itself raise."""
    name = type_qualname(type(exc)) or "BaseException"
    try:
        message = str(exc)
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001
        message = "<exception str() failed>"
    text, cut = bound_text(message, limit)
    return name, text, cut


def _format_traceback(exc: BaseException, skip_frames: int, limit: int) -> tuple[str, bool]:
    """The formatted traceback without our own leading frames; keeps the tail, where the error is."""
    tb = exc.__traceback__
    for _ in range(skip_frames):
        if tb is not None:
            tb = tb.tb_next
    try:
        text = "".join(traceback.format_exception(type(exc), exc, tb))
    except Exception:  # noqa: BLE001 - formatting touches user attributes (__notes__, str)
        text = "<traceback unavailable>"
    if len(text) <= limit:
        return text, False
    return text[len(text) - limit :], True


def _listed_signature(obj: Any) -> str | None:
    """The signature text, or None when there is none that can be had without running user code."""
    try:
        return signature_text(obj)
    except NoSignature:
        return None


def _inspected_signature(obj: Any) -> str | None:
    """The signature text; None when Python has none; SignatureUnavailable when only user code could tell."""
    try:
        return signature_text(obj)
    except NoSignature as error:
        if error.reported:
            raise SignatureUnavailable(str(error)) from None
        return None


class SignatureUnavailable(Exception):
    """Reported in inspect's ``error``: the signature could only be had by running user code."""


def _repr_text(obj: Any, limit: int) -> tuple[str, bool]:
    """A bounded repr that survives a raising ``__repr__`` (the fallback names the type statically)."""
    try:
        return bounded_repr(obj, limit)
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # noqa: BLE001 - a user __repr__ may raise anything
        kind = type_qualname(type(error)) or "BaseException"
        text = f"<{type_qualname(type(obj)) or 'object'} object; repr raised {kind}>"
    return bound_text(text, limit)


def _discard_stale_bytecode(module: types.ModuleType) -> None:
    """Delete the module's ``.pyc`` when its source was written after it.

    A ``.pyc`` is validated by the source mtime in whole seconds and the size only, so an edit made within
    the same second that keeps the size would otherwise reload the stale bytecode.
    """
    spec = getattr(module, "__spec__", None)
    origin, cached = getattr(spec, "origin", None), getattr(spec, "cached", None)
    if type(origin) is not str or type(cached) is not str:
        return
    try:
        if os.stat(origin).st_mtime_ns >= os.stat(cached).st_mtime_ns:
            os.remove(cached)
    except OSError:
        pass


def _static_path(namespace: dict, path: str) -> Any:
    """The module object at a dotted ``path`` through user_ns and module ``__dict__``s only; None otherwise."""
    parts = path.split(".")
    obj = namespace.get(parts[0])
    for part in parts[1:]:
        if not issubclass(type(obj), types.ModuleType):
            return None
        obj = _MODULE_DICT.__get__(obj).get(part)
    return obj


class _Unresolvable(Exception):
    """Resolution raised something other than AttributeError (a property, a module ``__getattr__``...)."""

    def __init__(self, path: str, error: BaseException) -> None:
        super().__init__(path)
        self.path = path
        self.error = error


def _within_chars(names: list[str], budget: int) -> list[str]:
    """The longest prefix of ``names`` whose encoded form surely stays within ``budget`` bytes."""
    used = 0
    for index, name in enumerate(names):
        used += (len(name) if name.isascii() else 6 * len(name)) + 4  # quotes, comma; worst-case escapes
        if used > budget:
            return names[:index]
    return names


def _require_dict(params: Any, allowed: tuple[str, ...], required: tuple[str, ...] = ()) -> dict:
    if type(params) is not dict:
        raise OpError("invalid_arguments", "params must be an object")
    unknown = sorted(repr(key) for key in params if key not in allowed)
    if unknown:
        raise OpError("invalid_arguments", f"unknown parameter(s): {', '.join(unknown)}")
    missing = [key for key in required if key not in params]
    if missing:
        raise OpError("invalid_arguments", f"missing parameter(s): {', '.join(missing)}")
    return params


def _require_str_list(params: dict, key: str) -> list[str]:
    value = params[key]
    if type(value) not in (list, tuple) or any(type(item) is not str for item in value):
        raise OpError("invalid_arguments", f"{key} must be a list of strings")
    return list(dict.fromkeys(value))  # unique, first occurrence wins


def _require_name(params: dict) -> str:
    name = params["name"]
    if type(name) is not str or not all(part.isidentifier() for part in name.split(".")):
        raise OpError("invalid_arguments", "name must be a Python identifier or a dotted path of identifiers")
    return name


class Namespace:
    """The namespace operations of one shell. All methods run on the shell's owner (main) thread."""

    def __init__(
        self, shell: Any, limits: Limits, preload_modules: list[str], module_aliases: dict[str, str]
    ) -> None:
        self._shell = shell
        self._limits = limits
        # (module to import, name bound in user_ns, bind the top-level package rather than the module)
        self._configured: list[tuple[str, str, bool]] = []
        for module in preload_modules:
            self._check_module_name(module)
            self._configured.append((module, module.split(".")[0], True))
        for module, alias in module_aliases.items():
            self._check_module_name(module)
            if type(alias) is not str or not alias.isidentifier() or alias in RUNTIME_NAMES:
                raise OpError(
                    "startup_failed", f"invalid alias {alias!r} for module {module!r}", {"module": module}
                )
            self._configured.append((module, alias, False))
        self._protected = RUNTIME_NAMES | {binding for _, binding, _ in self._configured}
        self.on_names_removed: Callable[[list[str]], None] = lambda names: None

    @staticmethod
    def _check_module_name(module: Any) -> None:
        if type(module) is not str or not all(part.isidentifier() for part in module.split(".")):
            raise OpError("startup_failed", f"invalid module name {module!r}", {"module": repr(module)})

    # -- names -------------------------------------------------------------------------------------------

    def bind_configured_modules(self) -> None:
        """Import every configured module (preloads, then aliases) and (re)bind its name in user_ns."""
        for module, binding, top_level in self._configured:
            try:
                value = importlib.import_module(module)
                if top_level:
                    value = importlib.import_module(module.split(".")[0])
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - an import may raise anything, SystemExit included
                type_name, message, _ = describe_exception(exc, self._limits.max_text_chars)
                setting = "IPYTHON_MCP_PRELOAD_MODULES" if top_level else "IPYTHON_MCP_MODULE_ALIASES"
                raise OpError(
                    "startup_failed",
                    f"module {module!r} from {setting} failed to import: {type_name}: {message}. Fix: install it"
                    f" into {sys.executable}, put its directory in IPYTHON_MCP_LIBRARY_PATHS, or remove it from"
                    f" {setting}; then restart the session",
                    {"module": module, "type": type_name, "setting": setting},
                ) from None
            self._shell.user_ns[binding] = value

    def protected_names(self) -> frozenset[str]:
        return self._protected

    def is_protected(self, name: str) -> bool:
        return name.startswith("_") or name in self._protected

    def user_names(self) -> list[str]:
        """Sorted unprotected names the user created (IPython's hidden bindings only once rebound)."""
        hidden = self._shell.user_ns_hidden
        names = []
        for name, value in self._shell.user_ns.items():
            if type(name) is not str or name.startswith("_") or name in self._protected:
                continue
            if name in hidden and hidden[name] is value:
                continue
            names.append(name)
        names.sort()
        return names

    def _resolve(self, name: str) -> Any:
        """Resolve a (dotted) name. A miss raises OpError name_not_found; other failures _Unresolvable."""
        parts = name.split(".")
        namespace = self._shell.user_ns
        label = bound_text(name, self._limits.max_repr_chars)[0]
        if parts[0] not in namespace:
            raise OpError("name_not_found", f"name {label!r} is not defined", {"name": label})
        obj = namespace[parts[0]]
        for index in range(1, len(parts)):
            path = ".".join(parts[: index + 1])
            try:
                obj = getattr(obj, parts[index])
            except AttributeError:
                missing = bound_text(path, self._limits.max_repr_chars)[0]
                raise OpError(
                    "name_not_found", f"{missing!r} does not resolve", {"name": label, "missing": missing}
                ) from None
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - a property or __getattr__ may raise anything
                raise _Unresolvable(path, exc) from None
        return obj

    # -- list / search ---------------------------------------------------------------------------------

    def list(self, params: dict) -> dict:
        """Visible functions (kind "function", see FUNCTION_TYPES) sorted by name.

        Visible: unprotected top-level names, plus the public functions that a configured (preloaded or aliased)
        module defines itself, under their dotted path (``mylib.tool``). ``signature`` is "(...)" when Python
        cannot compute one; ``module``/``doc`` are null when unknown.
        """
        _require_dict(params, ())
        namespace = self._shell.user_ns
        entries = [(name, namespace[name]) for name in self.user_names()]
        entries.extend(self.library_members())
        functions = sorted((pair for pair in entries if classify(pair[1]) == "function"), key=lambda pair: pair[0])
        shown = functions[: self._limits.max_results]
        return {
            "functions": [self._function_entry(name, obj) for name, obj in shown],
            "total": len(functions),
            "truncated": len(shown) < len(functions),
        }

    def library_members(self) -> list[tuple[str, Any]]:
        """(dotted name, object) of the public functions and classes each configured module defines itself.

        Only modules whose configured binding is still active are walked, each once (under its first binding:
        preloads before aliases). Members come from the module's ``__dict__`` (no module ``__getattr__`` runs)
        and count when their own ``__module__`` names that module, so re-exported imports are left out.
        """
        namespace = self._shell.user_ns
        seen: set[int] = set()
        members: list[tuple[str, Any]] = []
        for module_name, binding, top_level in self._configured:
            module = sys.modules.get(module_name)
            if module is None or id(module) in seen or not issubclass(type(module), types.ModuleType):
                continue
            prefix = module_name if top_level else binding
            if _static_path(namespace, prefix) is not module:
                continue
            seen.add(id(module))
            module_dict = _MODULE_DICT.__get__(module)
            own_name = module_dict.get("__name__")
            if type(own_name) is not str:  # compared below: == on another object could run its __eq__
                continue
            for name, obj in list(module_dict.items()):
                if type(name) is not str or name.startswith("_") or not name.isidentifier():
                    continue
                kind = classify(obj)
                if kind not in ("function", "class"):
                    continue
                if self._quietly(lambda obj=obj, kind=kind: module_of(obj, kind)) != own_name:
                    continue
                members.append((f"{prefix}.{name}", obj))
        return members

    def _function_entry(self, name: str, obj: Any) -> dict:
        signature = self._quietly(lambda: _listed_signature(obj)) or _NO_SIGNATURE
        module = self._quietly(lambda: module_of(obj, "function"))
        doc = self._quietly(lambda: doc_of(obj, "function"))
        signature, signature_cut = bound_text(signature, self._limits.max_repr_chars)
        doc, doc_cut = bound_text(doc, self._limits.max_text_chars) if doc is not None else (None, False)
        module = bound_text(module, self._limits.max_repr_chars)[0] if module is not None else None
        return {
            "name": name,
            "signature": signature,
            "signature_truncated": signature_cut,
            "module": module,
            "doc": doc,
            "doc_truncated": doc_cut,
        }

    @staticmethod
    def _quietly(read: Callable[[], Any]) -> Any:
        try:
            return read()
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - metadata of user objects may raise anything
            return None

    def search(self, params: dict) -> dict:
        """Names matching ``query``: case-insensitive substring, or exact with ``exact``.

        Searched: unprotected user names, the configured module bindings and the configured modules' own public
        functions and classes (dotted, see ``library_members``). Sorted with the identical name first, then
        case-insensitively equal names, then by name. ``kinds: []`` matches nothing.
        """
        _require_dict(params, ("query", "exact", "kinds"), ("query",))
        query, exact, kinds = params["query"], params.get("exact", False), params.get("kinds")
        if type(query) is not str:
            raise OpError("invalid_arguments", "query must be a string")
        if type(exact) is not bool:
            raise OpError("invalid_arguments", "exact must be a boolean")
        if kinds is not None and (type(kinds) not in (list, tuple) or any(k not in KINDS for k in kinds)):
            raise OpError("invalid_arguments", f"kinds must be a list of {', '.join(KINDS)}")
        namespace = self._shell.user_ns
        candidates = [(name, namespace[name]) for name in self.user_names()]
        candidates.extend((b, namespace[b]) for b in sorted(self._protected - RUNTIME_NAMES) if b in namespace)
        candidates.extend(self.library_members())
        folded = query.casefold()
        if exact:
            hits = [pair for pair in candidates if pair[0] == query]
        else:
            hits = [pair for pair in candidates if folded in pair[0].casefold()]
        if kinds is not None:
            wanted = set(kinds)
            hits = [pair for pair in hits if classify(pair[1]) in wanted]
        hits.sort(key=lambda pair: (pair[0] != query, pair[0].casefold() != folded, pair[0]))
        shown = hits[: self._limits.max_results]
        return {
            "matches": [self._match(name, obj) for name, obj in shown],
            "total": len(hits),
            "truncated": len(shown) < len(hits),
        }

    def _match(self, name: str, obj: Any) -> dict:
        text, cut = _repr_text(obj, self._limits.max_repr_chars)
        return {
            "name": name,
            "kind": classify(obj),
            "type": bound_text(qualified_type_name(type(obj)), self._limits.max_repr_chars)[0],
            "repr": text,
            "repr_truncated": cut,
        }

    # -- inspect / call ----------------------------------------------------------------------------------

    def inspect(self, params: dict) -> dict:
        """Inspection of one name. Fields that could not be read stay null; the first failure is in ``error``."""
        _require_dict(params, ("name",), ("name",))
        name = _require_name(params)
        limits = self._limits
        result: dict[str, Any] = {"name": name, "kind": None, "callable": False}
        result.update(dict.fromkeys(_INSPECT_BOUNDED))
        result["truncated"] = dict.fromkeys(_INSPECT_BOUNDED, False)
        result["error"] = None

        def bounded(field: str, value: str | None, limit: int) -> None:
            if value is not None:
                result[field], result["truncated"][field] = bound_text(value, limit)

        def fail(stage: str, exc: BaseException) -> None:
            if result["error"] is None:  # the first failure wins; later fields are still filled
                type_name, message, _ = describe_exception(exc, limits.max_text_chars)
                result["error"] = {"stage": stage, "type": type_name, "message": message}

        def attempt(stage: str, read: Callable[[], Any]) -> Any:
            try:
                return read()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - user code may raise anything
                fail(stage, exc)
                return None

        try:
            obj = self._resolve(name)
        except _Unresolvable as failure:
            fail("resolve", failure.error)
            return result
        kind = result["kind"] = classify(obj)
        result["callable"] = callable(obj)
        bounded("qualified_type", qualified_type_name(type(obj)), limits.max_repr_chars)
        bounded("module", attempt("attribute", lambda: module_of(obj, kind)), limits.max_repr_chars)
        bounded("documentation", attempt("attribute", lambda: doc_of(obj, kind)), limits.max_text_chars)
        if result["callable"]:
            bounded("signature", attempt("metadata", lambda: _inspected_signature(obj)), limits.max_repr_chars)
        representation = attempt("repr", lambda: bounded_repr(obj, limits.max_text_chars))
        if representation is not None:
            result["representation"], result["truncated"]["representation"] = representation
        return result

    def call_function(self, params: dict) -> dict:
        """Resolve ``name``, bind ``arguments`` as keyword arguments, invoke exactly once, return JSON."""
        _require_dict(params, ("name", "arguments"), ("name",))
        name = _require_name(params)
        arguments = params.get("arguments", {})
        if type(arguments) is not dict or any(type(key) is not str for key in arguments):
            raise OpError("invalid_arguments", "arguments must be an object with string keys")
        arguments = from_javascript(arguments)
        label = bound_text(name, self._limits.max_repr_chars)[0]
        try:
            target = self._resolve(name)
        except _Unresolvable as failure:
            type_name, message, _ = describe_exception(failure.error, self._limits.max_text_chars)
            raise OpError(
                "name_not_found",
                f"resolving {label!r} raised {type_name}",
                {"name": label, "type": type_name, "message": message},
            ) from None
        if not callable(target):
            type_name = qualified_type_name(type(target))
            raise OpError("not_callable", f"{label!r} is not callable", {"name": label, "type": type_name})
        signature = self._quietly(lambda: inspect.signature(target))
        if signature is not None:
            try:
                signature.bind(**arguments)
            except TypeError as exc:
                _, message, _ = describe_exception(exc, self._limits.max_text_chars)
                raise OpError(
                    "binding_failed", f"arguments do not bind: {message}", {"name": label, "message": message}
                ) from None
        try:
            value = target(**arguments)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - report whatever the call raised
            raise OpError("call_raised", *self._call_failure(label, exc)) from None
        try:
            form = json_form(value, self._limits)
        except NotJson as exc:
            type_name = qualified_type_name(type(value))
            raise OpError(
                "result_not_json",
                f"{label!r} returned {type_name}, which has no JSON form ({exc.type_name} at {exc.path})",
                {"name": label, "type": type_name, "path": exc.path, "offending_type": exc.type_name},
            ) from None
        return form.annotate({"value": form.value, "truncated": form.truncated})

    def _call_failure(self, label: str, exc: BaseException) -> tuple[str, dict]:
        type_name, message, message_cut = describe_exception(exc, self._limits.max_text_chars)
        trace, trace_cut = _format_traceback(exc, 1, self._limits.max_traceback_chars)
        details = {
            "name": label,
            "type": type_name,
            "message": message,
            "message_truncated": message_cut,
            "traceback": trace,
            "traceback_truncated": trace_cut,
        }
        return f"{label!r} raised {type_name}: {message}", details

    # -- reload / remove / reset ---------------------------------------------------------------------------

    def reload(self, params: dict) -> dict:
        """Reload exactly the named, already imported modules and rebind user_ns names bound to them."""
        _require_dict(params, ("modules",), ("modules",))
        modules = _require_str_list(params, "modules")
        importlib.invalidate_caches()
        return {"results": [self._reload_one(module) for module in modules]}

    def _reload_one(self, module_name: str) -> dict:
        old = sys.modules.get(module_name)
        if old is None or not issubclass(type(old), types.ModuleType):
            return {"module": module_name, "status": "not_imported", "bindings": []}
        namespace = self._shell.user_ns
        bindings = sorted(name for name, value in namespace.items() if value is old and type(name) is str)
        try:
            _discard_stale_bytecode(old)
            new = importlib.reload(old)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - module code may raise anything, SystemExit included
            type_name, message, _ = describe_exception(exc, self._limits.max_text_chars)
            error = {"type": type_name, "message": message}
            return {"module": module_name, "status": "failed", "bindings": [], "error": error}
        for name in bindings:
            namespace[name] = new
        return {"module": module_name, "status": "reloaded", "bindings": bindings}

    def remove(self, params: dict) -> dict:
        """Partition the unique requested names into removed / refused / unknown (each sorted)."""
        _require_dict(params, ("names",), ("names",))
        requested = _require_str_list(params, "names")
        removable = set(self.user_names())
        namespace = self._shell.user_ns
        removed, refused, unknown = [], [], []
        for name in requested:
            if name in removable:
                del namespace[name]
                removed.append(name)
            elif self.is_protected(name) or name in namespace:  # present but IPython's own binding
                refused.append(name)
            else:
                unknown.append(name)
        removed.sort()
        if removed:
            self.on_names_removed(list(removed))
        return {"removed": removed, "refused": sorted(refused), "unknown": sorted(unknown)}

    def reset(self, params: dict) -> dict:
        """Delete every unprotected user name and restore configured module bindings. No shell.reset().

        ``removed`` lists the names sorted; a list too long for one IPC message (half the bound) is cut,
        with ``removed_truncated`` set; ``removed_count`` always counts every removed name.
        """
        _require_dict(params, ())
        removed = self.user_names()
        namespace = self._shell.user_ns
        for name in removed:
            del namespace[name]
        try:
            if removed:
                self.on_names_removed(list(removed))
        finally:
            self.bind_configured_modules()
        shown = _within_chars(removed, self._limits.max_ipc_message_bytes // 2)
        return {
            "removed": shown,
            "removed_count": len(removed),
            "removed_truncated": len(shown) < len(removed),
            "execution_count": self._shell.execution_count - 1,
        }
