"""The dynamic tool registry: live callables of the shell namespace published as extra MCP tools.

One ``Registry`` lives per worker lifespan and is used only from the shell owner thread, so it takes no
locks. Each registration snapshots its description, input schema and fingerprint; the live binding behind
it is reconciled on every ``discover`` and ``call``, and by the worker after every other operation while the
catalog is not empty (``reconcile_all``; the response then carries ``catalog_revision``, ops.py):

* backing name missing from the namespace -> stale;
* same object and equal ``signature_token`` -> fresh (fast path);
* otherwise the schema is recomputed (any failure -> stale) and its canonical JSON compared byte for
  byte: equal -> fresh, and the new binding is adopted; different -> stale.

A stale registration stays stale until it is explicitly registered again (or unregistered); it is
reported in ``discover``'s ``stale`` list and refused by ``call``. ``revision`` advances on every catalog
change: a registration, an unregistration, registrations turning stale, and clearing a non-empty catalog.
Registering a backing name again under the tool name it already backs (live or stale) replaces that
registration: a new description snapshot, schema and revision. Any other tool-name clash is a collision.
A failing operation leaves the catalog and the revision untouched.
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from ..inspection.static import runs_attribute_hooks
from ..protocol.errors import OpError
from ..protocol.limits import Limits, bound_text
from ..protocol.params import optional_int, optional_str, require_dict, require_str, require_str_list
from ..schema.tool_schema import ArgumentError, analyze_callable, signature_token
from ..values.failure import exception_details
from ..values.jsonvalue import NotJson, from_javascript, json_form
from .registration import (
    FRESH,
    SHOWN_CHARS,
    STALE,
    TOOL_NAME,
    Adoption,
    Registration,
    clip,
    description_of,
    show,
)

__all__ = ["Registry"]



class Registry:
    """The catalog of dynamic tools of one worker lifespan. Not thread-safe: owner thread only."""

    def __init__(
        self,
        user_ns: dict[str, Any],
        limits: Limits,
        is_protected: Callable[[str], bool],
        reserved_tool_names: frozenset[str],
    ) -> None:
        self._user_ns = user_ns
        self._limits = limits
        self._is_protected = is_protected
        self._reserved = frozenset(reserved_tool_names)
        self._registrations: dict[str, Registration] = {}
        self._revision = 0
        # True while every registration was reconciled after the last operation that could run user code
        # (see ``unsettle``): discover then need not reconcile again.
        self._settled = False

    @property
    def revision(self) -> int:
        """Monotonic catalog revision; starts at 0."""
        return self._revision

    # -- validation helpers ------------------------------------------------------------------------------

    def _check_backing_name(self, name: str) -> None:
        if not name.isidentifier() or keyword.iskeyword(name):
            raise OpError(
                "invalid_name",
                f"{show(name)} is not a top-level Python identifier",
                {"name": clip(name)},
            )
        if name.startswith("_") or self._is_protected(name):
            raise OpError(
                "protected_name", f"{show(name)} is protected and cannot back a tool", {"name": clip(name)}
            )

    def _check_tool_name(self, tool_name: str) -> None:
        limit = self._limits.max_tool_name_chars
        if len(tool_name) > limit:
            raise OpError(
                "invalid_name",
                f"tool name {show(tool_name)} is longer than {limit} characters",
                {"tool_name": tool_name[:limit], "limit": limit},
            )
        if TOOL_NAME.fullmatch(tool_name) is None:
            raise OpError(
                "invalid_name",
                f"tool name {show(tool_name)} must start with an ASCII letter and contain only ASCII letters, digits, _ or -",
                {"tool_name": clip(tool_name)},
            )

    # -- reconciliation ----------------------------------------------------------------------------------

    def _evaluate(self, registration: Registration) -> tuple[str, Adoption | None]:
        """Fresh or stale against the live namespace, without changing anything."""
        if registration.stale:
            return STALE, None
        try:
            if registration.name not in self._user_ns:
                return STALE, None
            live = self._user_ns[registration.name]
        except Exception:  # noqa: BLE001 - an exotic namespace mapping
            return STALE, None
        if live is not registration.obj and (not callable(live) or runs_attribute_hooks(live)):
            # A different object now sits under the backing name. Inspecting it could run its __getattr__ /
            # __getattribute__ (or its metaclass's): discover never runs such code for an object nobody
            # registered. It turns stale; registering it again inspects it knowingly.
            return STALE, None
        token = signature_token(live)
        try:
            unchanged = live is registration.obj and token == registration.token
        except Exception:  # noqa: BLE001
            unchanged = False
        if unchanged:
            return FRESH, None
        try:
            analysis = analyze_callable(live)
        except KeyboardInterrupt:
            raise
        except Exception:  # noqa: BLE001 - OpError or anything user code raised while being inspected
            return STALE, None
        if analysis.canonical != registration.analysis.canonical:
            return STALE, None
        return FRESH, Adoption(live, token, analysis)

    def _reconcile_registrations(self) -> None:
        changed = False
        for tool_name in sorted(self._registrations):
            changed = self._reconcile(self._registrations[tool_name]) or changed
        if changed:
            self._revision += 1

    def _reconcile(self, registration: Registration) -> bool:
        """Apply the evaluation; True when the registration just turned stale (a catalog change)."""
        if registration.stale:
            return False
        status, adoption = self._evaluate(registration)
        if status == STALE:
            registration.stale = True
            return True
        if adoption is not None:
            # Same schema, new binding (for instance a body-only redefinition): keep serving, live.
            registration.obj = adoption.obj
            registration.token = adoption.token
            registration.analysis = adoption.analysis
        return False

    # -- operations --------------------------------------------------------------------------------------

    def register(self, params: dict[str, Any]) -> dict[str, Any]:
        """Op ``register_tool``: ``{"name", "tool_name": str | None, "description": str | None}`` ->
        Registration. Raises ``OpError``; a failure changes nothing."""
        require_dict(params, ("name", "tool_name", "description"), ("name",))
        name = require_str(params, "name")
        tool_name = optional_str(params, "tool_name")
        description = optional_str(params, "description")

        self._check_backing_name(name)
        if tool_name is None:
            tool_name = name
        self._check_tool_name(tool_name)
        description_limit = self._limits.max_tool_description_chars
        if description is not None and len(description) > description_limit:
            raise OpError(
                "invalid_arguments",
                f"description is longer than {description_limit} characters",
                {"limit": description_limit, "length": len(description)},
            )

        if name not in self._user_ns:
            raise OpError("name_not_found", f"{show(name)} is not defined", {"name": clip(name)})
        obj = self._user_ns[name]
        if not callable(obj):
            raise OpError("not_callable", f"{show(name)} is not callable", {"name": clip(name)})
        token = signature_token(obj)
        try:
            analysis = analyze_callable(obj)
        except OpError:
            raise
        except KeyboardInterrupt:
            raise
        except Exception as error:  # noqa: BLE001 - user code run by inspection
            raise OpError(
                "unsupported_signature",
                f"inspecting {show(name)} raised {type(error).__name__}",
                {"parameter": None, "reason": "no_signature"},
            ) from None

        if description is None:
            description, description_truncated = bound_text(description_of(obj), description_limit)
        else:
            description_truncated = False

        if tool_name in self._reserved:
            raise OpError(
                "name_collision",
                f"{show(tool_name)} is a stable tool name",
                {"tool_name": tool_name, "with": "stable"},
            )
        replacing: Registration | None = None
        existing = self._registrations.get(tool_name)
        if existing is not None:
            if existing.name == name:
                # Explicit re-registration of the same backing name under the same tool name, live or stale:
                # the seed's "until explicit re-registration" - a new description snapshot and schema.
                replacing = existing
            else:
                raise OpError(
                    "name_collision",
                    f"tool name {show(tool_name)} is already registered",
                    {"tool_name": tool_name, "with": "dynamic"},
                )
        for other in self._registrations.values():
            if other is not replacing and other.name == name:
                raise OpError(
                    "name_collision",
                    f"{show(name)} already backs tool {show(other.tool_name)}",
                    {"name": clip(name), "tool_name": other.tool_name, "with": "backing_symbol"},
                )
        if replacing is None and len(self._registrations) >= self._limits.max_dynamic_tools:
            raise OpError(
                "registry_full",
                f"the registry already holds {self._limits.max_dynamic_tools} tools",
                {"limit": self._limits.max_dynamic_tools},
            )

        self._revision += 1
        registration = Registration(
            tool_name=tool_name,
            name=name,
            description=description,
            description_truncated=description_truncated,
            revision=self._revision,
            obj=obj,
            token=token,
            analysis=analysis,
        )
        self._registrations[tool_name] = registration
        return registration.to_wire()

    def unregister(self, params: dict[str, Any]) -> dict[str, Any]:
        """Op ``unregister_tool``: ``{"names": [tool_name, ...]}`` ->
        ``{"unregistered": sorted, "unknown": sorted, "revision"}``. Idempotent; stable names are unknown."""
        require_dict(params, ("names",), ("names",))
        names = require_str_list(params, "names")
        unregistered: list[str] = []
        unknown: list[str] = []
        for tool_name in sorted(set(names)):
            if self._registrations.pop(tool_name, None) is not None:
                unregistered.append(tool_name)
            else:
                unknown.append(tool_name)
        if unregistered:
            self._revision += 1
        return {"unregistered": unregistered, "unknown": unknown, "revision": self._revision}

    def discover(self, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Op ``discover``: reconcile every registration, then ``{"revision", "tools": [Registration]
        sorted by tool_name, "stale": [tool_name] sorted}``. Stale tools are not in ``tools``.

        With ``{"known_revision": n}`` and nothing changed since revision ``n``, the answer is just
        ``{"revision": n, "unchanged": true}``: the common case after every execute costs no schema copies."""
        known = optional_int(require_dict({} if params is None else params, ("known_revision",)), "known_revision")
        if not self._settled:
            self._reconcile_registrations()
        if known == self._revision:
            return {"revision": self._revision, "unchanged": True}
        tools: list[dict[str, Any]] = []
        stale: list[str] = []
        for tool_name in sorted(self._registrations):
            registration = self._registrations[tool_name]
            if registration.stale:
                stale.append(tool_name)
            else:
                tools.append(registration.to_wire())
        return {"revision": self._revision, "tools": tools, "stale": stale}

    def call(self, params: dict[str, Any]) -> dict[str, Any]:
        """Op ``call_tool``: ``{"tool_name", "arguments", "fingerprint"}`` -> ``{"value", "truncated"}``.
        Revalidates the live binding, validates and converts the arguments, invokes exactly once."""
        require_dict(params, ("tool_name", "arguments", "fingerprint"), ("tool_name", "fingerprint"))
        tool_name = require_str(params, "tool_name")
        fingerprint = require_str(params, "fingerprint")
        registration = self._registrations.get(tool_name)
        if registration is None:
            raise OpError(
                "tool_not_found",
                f"no dynamic tool {show(tool_name)}",
                {"tool_name": clip(tool_name)},
            )
        if self._reconcile(registration):
            self._revision += 1
        if registration.stale:
            raise OpError(
                "stale_registration",
                f"tool {show(tool_name)} is stale; register it again",
                {"tool_name": clip(tool_name), "reason": "stale"},
            )
        if fingerprint != registration.analysis.fingerprint:
            raise OpError(
                "stale_registration",
                f"tool {show(tool_name)} changed since the caller discovered it",
                {
                    "tool_name": clip(tool_name),
                    "reason": "fingerprint_mismatch",
                    "fingerprint": registration.analysis.fingerprint,
                },
            )
        arguments = from_javascript(params.get("arguments", {}))
        try:
            kwargs = registration.analysis.convert_arguments(arguments)
        except ArgumentError as error:
            message, _ = bound_text(error.message, self._limits.max_repr_chars)
            path, _ = bound_text(error.path, SHOWN_CHARS)
            parameter = None if error.parameter is None else clip(error.parameter)
            raise OpError(
                "invalid_arguments", message, {"parameter": parameter, "path": path, "reason": error.reason}
            ) from None

        target = registration.obj
        try:
            result = target(**kwargs)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001 - SystemExit from a tool must not end the worker
            raise self._call_raised(tool_name, error) from None

        try:
            form = json_form(result, self._limits)
        except NotJson as error:
            raise OpError(
                "result_not_json",
                f"tool {show(tool_name)} returned a value without a JSON form ({error.type_name} at {error.path})",
                {"type": error.type_name[:SHOWN_CHARS], "path": error.path[:SHOWN_CHARS]},
            ) from None
        return form.annotate({"value": form.value, "truncated": form.truncated})

    def _call_raised(self, tool_name: str, error: BaseException) -> OpError:
        # One frame to skip: call()'s own, so the traceback starts in the tool.
        details = exception_details(error, self._limits, skip_frames=1, with_module=True)
        summary, _ = bound_text(f"{details['type']}: {details['message']}", self._limits.max_repr_chars)
        return OpError("call_raised", f"tool {show(tool_name)} raised {summary}", details)

    def reconcile_all(self) -> int:
        """Reconcile every registration against the live namespace (what ``discover`` does first) and return
        the revision. Costs one ``signature_token`` per fresh registration; nothing when the catalog is empty.
        The worker calls it after each operation (ops.py); until ``unsettle``, discover reuses it."""
        self._reconcile_registrations()
        self._settled = True
        return self._revision

    def unsettle(self) -> None:
        """An operation that may run user code is about to start: the last reconciliation stops counting.

        Only a thread the user started could change the namespace between two operations; what it changes is
        seen by the next operation's reconciliation, and ``call_tool`` always reconciles the tool it calls."""
        self._settled = False

    def snapshot(self) -> list[dict[str, Any]]:
        """What a namespace snapshot keeps of each registration that is fresh now (state.py registers them again
        on restore and compares the fingerprint, as a redefinition would be)."""
        self._reconcile_registrations()
        return [
            {"tool_name": registration.tool_name, "name": registration.name,
             "description": registration.description, "fingerprint": registration.analysis.fingerprint}
            for registration in self._registrations.values()
            if not registration.stale
        ]

    def __len__(self) -> int:
        return len(self._registrations)

    def invalidate_names(self, names: list[str]) -> None:
        """The backing symbols ``names`` were removed from the namespace: their registrations turn stale."""
        removed = set(names)
        changed = False
        for registration in self._registrations.values():
            if not registration.stale and registration.name in removed:
                registration.stale = True
                changed = True
        if changed:
            self._revision += 1

    def clear(self) -> None:
        """Drop the whole catalog (namespace reset); the revision advances if anything was dropped."""
        if self._registrations:
            self._registrations.clear()
            self._revision += 1
