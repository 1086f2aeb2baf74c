"""Namespace operations ``inspect`` and ``call_function`` (beside operations.py, whose docstring states
the rules)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..inspection.shapes import data_summary, length_summary
from ..inspection.signature import signature_text
from ..inspection.static import NoSignature, doc_of, get_quietly, lookup, module_of, qualified_type_name
from ..protocol.errors import OpError
from ..protocol.limits import bound_text
from ..protocol.params import require_dict, require_name
from ..values.failure import describe_exception, exception_details
from ..values.jsonvalue import NotJson, bounded_repr, from_javascript, json_form
from .names import Names, Unresolvable, classify, quietly

_INSPECT_BOUNDED = ("qualified_type", "signature", "module", "documentation", "representation")


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


def inspect_name(names: Names, params: dict[str, Any]) -> dict[str, Any]:
    """Inspection of one name. Fields that could not be read stay null; the first failure is in ``error``."""
    require_dict(params, ("name",), ("name",))
    name = require_name(params)
    limits = names.limits
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
        obj = names.resolve(name)
    except Unresolvable as failure:
        fail("resolve", failure.error)
        return result
    kind = result["kind"] = classify(obj)
    result["callable"] = callable(obj)
    bounded("qualified_type", qualified_type_name(type(obj)), limits.max_repr_chars)
    bounded("module", attempt("attribute", lambda: module_of(obj, kind)), limits.max_repr_chars)
    bounded("documentation", attempt("attribute", lambda: _own_doc(obj, kind)), limits.max_text_chars)
    if result["callable"]:
        bounded("signature", attempt("metadata", lambda: _inspected_signature(obj)), limits.max_repr_chars)
    summary = data_summary(obj)
    if summary is None:  # a data object is told by its summary; its repr is not computed (see shapes.py)
        representation = attempt("repr", lambda: bounded_repr(obj, limits.max_repr_chars))
        if representation is not None:
            result["representation"], result["truncated"]["representation"] = representation
        summary = length_summary(obj)
    if summary is not None:
        result["summary"] = bound_text(summary, limits.max_repr_chars)[0]
    return result


def _own_doc(obj: Any, kind: str) -> str | None:
    """The docstring of ``obj`` itself: a (non-callable) instance whose ``__doc__`` is just its class's gets none
    (inspect the class for that; a DataFrame's is 4,000 characters), while one with a docstring of its own (an
    instance ``__doc__``, a C getset) keeps it. Callable instances keep their class's: it says what a call does."""
    if kind == "variable":
        class_doc = lookup(type(obj), "__doc__")
        if type(class_doc) is str and get_quietly(obj, "__doc__") is class_doc:
            return None
    return doc_of(obj, kind)

def call_function(names: Names, params: dict[str, Any]) -> dict[str, Any]:
    """Resolve ``name``, bind ``arguments`` as keyword arguments, invoke exactly once, return JSON."""
    require_dict(params, ("name", "arguments"), ("name",))
    name = require_name(params)
    arguments = params.get("arguments", {})
    if type(arguments) is not dict or any(type(key) is not str for key in arguments):
        raise OpError("invalid_arguments", "arguments must be an object with string keys")
    arguments = from_javascript(arguments)
    label = bound_text(name, names.limits.max_repr_chars)[0]
    try:
        target = names.resolve(name)
    except Unresolvable as failure:
        type_name, message, _ = describe_exception(failure.error, names.limits.max_text_chars)
        raise OpError(
            "name_not_found",
            f"resolving {label!r} raised {type_name}",
            {"name": label, "type": type_name, "message": message},
        ) from None
    if not callable(target):
        type_name = qualified_type_name(type(target))
        raise OpError("not_callable", f"{label!r} is not callable", {"name": label, "type": type_name})
    signature = quietly(lambda: inspect.signature(target))
    if signature is not None:
        try:
            signature.bind(**arguments)
        except TypeError as exc:
            _, message, _ = describe_exception(exc, names.limits.max_text_chars)
            raise OpError(
                "binding_failed", f"arguments do not bind: {message}", {"name": label, "message": message}
            ) from None
    try:
        value = target(**arguments)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - report whatever the call raised
        raise OpError("call_raised", *_call_failure(names, label, exc)) from None
    try:
        form = json_form(value, names.limits)
    except NotJson as exc:
        type_name = qualified_type_name(type(value))
        raise OpError(
            "result_not_json",
            f"{label!r} returned {type_name}, which has no JSON form ({exc.type_name} at {exc.path})",
            {"name": label, "type": type_name, "path": exc.path, "offending_type": exc.type_name},
        ) from None
    return form.annotate({"value": form.value, "truncated": form.truncated})

def _call_failure(names: Names, label: str, exc: BaseException) -> tuple[str, dict[str, Any]]:
    # One frame to skip: call_function's own, so the traceback starts in the called function.
    details = {"name": label, **exception_details(exc, names.limits, skip_frames=1)}
    return f"{label!r} raised {details['type']}: {details['message']}", details
