"""Stable error codes shared with the TypeScript side (packages/protocol/src/error-codes.ts).

The list is pinned by fixtures/protocol/error-codes.json, which both test suites read.
"""

from __future__ import annotations

from typing import Any

ERROR_CODES = (
    "runtime_busy",
    "queue_timeout",
    "runtime_closed",
    "runtime_unavailable",
    "operation_timeout",
    "operation_cancelled",
    "memory_limit",
    "invalid_request",
    "invalid_arguments",
    "message_too_large",
    "protocol_error",
    "name_not_found",
    "not_callable",
    "binding_failed",
    "call_raised",
    "result_not_json",
    "protected_name",
    "invalid_name",
    "name_collision",
    "unsupported_signature",
    "registry_full",
    "stale_registration",
    "tool_not_found",
    "startup_failed",
    "worker_crashed",
    "internal_error",
)


class OpError(Exception):
    """A structured, expected failure of one operation. Never carries user values unbounded."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details:
            wire["details"] = self.details
        return wire
