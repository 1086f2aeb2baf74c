"""Namespace operations ``list`` and ``search`` (split out of namespace.py, whose docstring states the rules)."""

from __future__ import annotations

import contextlib
import gc
import heapq
import operator
import types
from collections.abc import Iterator
from typing import Any

from ..inspection.shapes import data_summary, length_summary
from ..inspection.signature import signature_text
from ..inspection.static import NoSignature, doc_of, module_of, qualified_type_name, type_qualname
from ..protocol.errors import OpError
from ..protocol.limits import bound_text
from ..protocol.params import require_dict
from ..values.jsonvalue import bounded_repr
from .names import FUNCTION_TYPES, KINDS, Names, classify, quietly
from .runtime_names import RUNTIME_NAMES

_NO_SIGNATURE = "(...)"
_NAME = operator.itemgetter(0)
# The usual function types, recognised by identity before the general classify (same answer, less work).
_PLAIN_FUNCTIONS = frozenset({types.FunctionType, types.BuiltinFunctionType})


def _is_function_type(kind: type) -> bool:
    """``classify`` says "function" from the type alone (modules and classes are tested first there)."""
    return not issubclass(kind, (types.ModuleType, type)) and issubclass(kind, FUNCTION_TYPES)


def _is_function(obj: Any) -> bool:
    return type(obj) in _PLAIN_FUNCTIONS or classify(obj) == "function"


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a pass builds many small tuples (each batch of them would start a
    collection that walks the whole namespace); restored as it was, also on an exception or an interrupt."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _listed_signature(obj: Any) -> str | None:
    """The signature text, or None when there is none that can be had without running user code."""
    try:
        return signature_text(obj)
    except NoSignature:
        return None


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


def list_functions(names: Names, params: dict[str, Any]) -> dict[str, Any]:
    """Visible functions (kind "function", see FUNCTION_TYPES) sorted by name.

    Visible: unprotected top-level names, plus the public functions that a configured (preloaded or aliased)
    module defines itself, under their dotted path (``mylib.tool``). ``signature`` is "(...)" when Python
    cannot compute one; ``module``/``doc`` are null when unknown.
    """
    require_dict(params, ())
    # Classified by type before anything else: over 100,000 names each distinct type is asked once, only the
    # functions' names are kept (no pair is built), and only the first max_results of them are ordered (a heap)
    # and read. The collector is paused meanwhile: each batch of new objects would start a collection that walks
    # the whole namespace.
    namespace = names.shell.user_ns
    with _collector_paused():
        user_functions = names.unsorted_user_names(keep_type=_is_function_type)
        library = [pair for pair in names.library_members() if _is_function(pair[1])]
        first = [(name, namespace[name]) for name in heapq.nsmallest(names.limits.max_results, user_functions)]
        shown = heapq.nsmallest(names.limits.max_results, first + library, key=_NAME)
    total = len(user_functions) + len(library)
    return {
        "functions": [_function_entry(names, name, obj) for name, obj in shown],
        "total": total,
        "truncated": len(shown) < total,
    }


def _function_entry(names: Names, name: str, obj: Any) -> dict[str, Any]:
    signature = quietly(lambda: _listed_signature(obj)) or _NO_SIGNATURE
    module = quietly(lambda: module_of(obj, "function"))
    doc = quietly(lambda: doc_of(obj, "function"))
    signature, signature_cut = bound_text(signature, names.limits.max_repr_chars)
    doc, doc_cut = bound_text(doc, names.limits.max_text_chars) if doc is not None else (None, False)
    module = bound_text(module, names.limits.max_repr_chars)[0] if module is not None else None
    return {
        "name": name,
        "signature": signature,
        "signature_truncated": signature_cut,
        "module": module,
        "doc": doc,
        "doc_truncated": doc_cut,
    }


def search_names(names: Names, params: dict[str, Any]) -> dict[str, Any]:
    """Names matching ``query``: case-insensitive substring, or exact with ``exact``.

    Searched: unprotected user names, the configured module bindings and the configured modules' own public
    functions and classes (dotted, see ``library_members``). Sorted with the identical name first, then
    case-insensitively equal names, then by name. ``kinds: []`` matches nothing.
    """
    require_dict(params, ("query", "exact", "kinds"), ("query",))
    query, exact, kinds = params["query"], params.get("exact", False), params.get("kinds")
    if type(query) is not str:
        raise OpError("invalid_arguments", "query must be a string")
    if type(exact) is not bool:
        raise OpError("invalid_arguments", "exact must be a boolean")
    if kinds is not None and (type(kinds) not in (list, tuple) or any(k not in KINDS for k in kinds)):
        raise OpError("invalid_arguments", f"kinds must be a list of {', '.join(KINDS)}")
    namespace = names.shell.user_ns
    folded = query.casefold()

    def matches(name: str) -> bool:
        return name == query if exact else folded in name.casefold()

    # Names are matched before anything else is read or sorted: over 100,000 names only the hits cost more.
    with _collector_paused():
        hits = names.user_items_matching(query, exact)
    hits.extend((b, namespace[b]) for b in sorted(names.protected - RUNTIME_NAMES) if b in namespace and matches(b))
    hits.extend(pair for pair in names.library_members() if matches(pair[0]))
    if kinds is not None:
        wanted = set(kinds)
        hits = [pair for pair in hits if classify(pair[1]) in wanted]
    shown = _first_in_order(hits, query, folded, names.limits.max_results)
    return {
        "matches": [_match(names, name, obj) for name, obj in shown],
        "total": len(hits),
        "truncated": len(shown) < len(hits),
    }


def _first_in_order(hits: list[tuple[str, Any]], query: str, folded: str, limit: int) -> list[tuple[str, Any]]:
    """The first ``limit`` hits in search order (the identical name, then case-insensitively equal names, then by
    name) without sorting them all: 100,000 hits cost one pass and a heap of ``limit``."""
    identical = [pair for pair in hits if pair[0] == query]
    equal = sorted((pair for pair in hits if pair[0] != query and pair[0].casefold() == folded), key=_NAME)
    room = limit - len(identical) - len(equal)
    rest = (pair for pair in hits if pair[0] != query and pair[0].casefold() != folded)
    return (identical + equal + (heapq.nsmallest(room, rest, key=_NAME) if room > 0 else []))[:limit]


def _match(names: Names, name: str, obj: Any) -> dict[str, Any]:
    limit = names.limits.max_repr_chars
    summary = data_summary(obj)
    # A data object is told by its summary (shape, columns, dtypes), read without user code; its repr (a table
    # that may read a subclass's properties) is not computed.
    text, cut = (None, False) if summary is not None else _repr_text(obj, limit)
    match: dict[str, Any] = {
        "name": name,
        "kind": classify(obj),
        "type": bound_text(qualified_type_name(type(obj)), limit)[0],
        "repr": text,
        "repr_truncated": cut,
    }
    summary = summary if summary is not None else length_summary(obj)
    if summary is not None:
        match["summary"] = bound_text(summary, limit)[0]
    return match
